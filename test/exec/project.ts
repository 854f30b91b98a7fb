import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureBuilt, root } from '../process.js';

/** A project of a Standin user: the packed package installed in its node_modules, and examples/testing. */
export interface UserProject {
  dir: string;
  /** Runs a command there; resolves with its exit code and output. */
  run(command: string, args: string[], opts?: { env?: Record<string, string> }): Promise<{ code: number | null; out: string }>;
  remove(): void;
}

/**
 * `npm pack`s this repository and installs the tarball into a new project the way npm lays it out
 * (the package in node_modules/standin, its `bin` in node_modules/.bin). The package's declared
 * dependencies, and the example's (openai, vitest), are links to this repository's node_modules rather
 * than a fresh download and native build (better-sqlite3 builds for a minute): a dependency the package
 * uses without declaring it is still missing there.
 */
export function userProject(): UserProject {
  ensureBuilt();
  if (!existsSync(join(root, 'dist/testing.js'))) throw new Error('dist/testing.js is missing: run npm run build');
  const dir = mkdtempSync(join(tmpdir(), 'standin-user-'));
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir, root], { cwd: dir, encoding: 'utf8' }).trim();
  const pkgDir = join(dir, 'node_modules/standin');
  mkdirSync(pkgDir, { recursive: true });
  execFileSync('tar', ['xzf', join(dir, packed.split('\n').pop()!), '-C', pkgDir, '--strip-components=1']);
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const example = JSON.parse(readFileSync(join(root, 'examples/testing/package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  const linked = [...Object.keys(pkg.dependencies), ...Object.keys(example.devDependencies).filter((d) => d !== 'standin')];
  for (const dep of linked) {
    mkdirSync(dirname(join(dir, 'node_modules', dep)), { recursive: true });
    symlinkSync(join(root, 'node_modules', dep), join(dir, 'node_modules', dep));
  }
  mkdirSync(join(dir, 'node_modules/.bin'));
  symlinkSync('../standin/bin/standin.js', join(dir, 'node_modules/.bin/standin'));
  chmodSync(join(pkgDir, 'bin/standin.js'), 0o755);
  symlinkSync('../vitest/vitest.mjs', join(dir, 'node_modules/.bin/vitest'));
  symlinkSync('../typescript/bin/tsc', join(dir, 'node_modules/.bin/tsc'));
  symlinkSync('../jest/bin/jest.js', join(dir, 'node_modules/.bin/jest'));
  cpSync(join(root, 'examples/testing'), dir, { recursive: true });
  // The example's manifest, pointing at the tarball instead of the registry.
  writeFileSync(
    join(dir, 'package.json'),
    readFileSync(join(dir, 'package.json'), 'utf8').replace(/"standin": "[^"]+"/, `"standin": "file:${packed}"`),
  );
  return {
    dir,
    run(command, args, opts = {}) {
      return new Promise((resolve, reject) => {
        // npx must find the installed package and never reach for the registry.
        const env: NodeJS.ProcessEnv = { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false', ...opts.env };
        for (const k of Object.keys(env)) if (/^(STANDIN|OPENAI)_/.test(k) && !(opts.env && k in opts.env)) delete env[k];
        const child = spawn(command, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('error', reject);
        child.on('exit', (code) => resolve({ code, out }));
      });
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
