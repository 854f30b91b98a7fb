// A release: the built program (bin/, dist/) with the packages it runs on (package.json's dependencies, as
// installed in node_modules), the deployment files (examples/deploy/), the docs and CHANGELOG.md, in one
// tarball whose folder is `standin-<version>/`. docs/deploy.md installs it with `tar` alone: no registry,
// no compiler and no npm on the server. Its native addon (better-sqlite3) is built for the platform, the
// architecture and the Node major it was made on, which its name says:
// `standin-<version>-<platform>-<arch>-node<major>.tgz`.
//
//   npm run release                      # builds, then writes the tarball into the checkout's folder
//   node scripts/release.mjs --out DIR   # the tarball of dist/ as built, into DIR (test/deploy/pasted.test.ts)
//   node scripts/release.mjs --root DIR  # of another checkout's build (its node_modules must be installed)
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { out: { type: 'string' }, root: { type: 'string' } } });
const root = resolve(values.root ?? join(import.meta.dirname, '..'));
const out = resolve(values.out ?? root);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
if (!existsSync(join(root, 'dist/main.js'))) throw new Error(`release: ${root}/dist/main.js is missing (npm run build first)`);

/** The folder of package `name` as Node resolves it from package folder `from` (node_modules up the tree). */
function resolvePackage(name, from) {
  for (let dir = from; ; dir = dirname(dir)) {
    const at = join(dir, 'node_modules', name);
    if (existsSync(join(at, 'package.json'))) return at;
    if (dir === root || dir === dirname(dir)) return undefined;
  }
}

/** Every package the program loads: the dependencies of package.json, and theirs, once each. */
function runtimePackages() {
  const found = new Set();
  const visit = (dir) => {
    const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const optional = p.optionalDependencies ?? {};
    for (const name of Object.keys({ ...p.dependencies, ...optional })) {
      const at = resolvePackage(name, dir);
      if (!at) {
        // An optional dependency for another platform is not installed here: the release is for this one.
        if (name in optional) continue;
        throw new Error(`release: ${name} (a dependency of ${p.name}) is not installed: run npm ci first`);
      }
      if (found.has(at)) continue;
      found.add(at);
      visit(at);
    }
  };
  visit(root);
  // A package nested in another's node_modules is copied with it.
  const sorted = [...found].sort();
  return sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(`${q}/`)));
}

// What a running program never reads: sources of native addons and their build's intermediate files.
const unused = /(\/build\/Release\/(obj|obj\.target|\.deps)|\/better-sqlite3\/(deps|src))(\/|$)|\.map$/;

const name = `standin-${pkg.version}`;
const tarball = join(out, `${name}-${process.platform}-${process.arch}-node${process.versions.node.split('.')[0]}.tgz`);
const staging = mkdtempSync(join(out, '.release-'));
try {
  const into = join(staging, name);
  mkdirSync(into);
  for (const part of ['package.json', 'README.md', 'CHANGELOG.md', 'bin', 'dist', 'docs', 'examples/deploy'])
    cpSync(join(root, part), join(into, part), { recursive: true, filter: (src) => !unused.test(src) });
  for (const at of runtimePackages())
    cpSync(at, join(into, relative(root, at)), { recursive: true, dereference: true, filter: (src) => !unused.test(src) });
  execFileSync('tar', ['-czf', tarball, '-C', staging, name]);
} finally {
  rmSync(staging, { recursive: true, force: true });
}
console.log(tarball);
