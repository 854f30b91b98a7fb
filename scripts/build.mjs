// Bundles Standin and its pure-JS dependencies into dist/: resolving and reading a few thousand module files
// was half of the cold start. Native addons stay external, and packages loaded on first use
// (src/core/lazy.ts: pg, ioredis, yaml, pkijs, the tokenizer) are required from node_modules at run time.
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { finishServerScript } from './server-script.mjs';
import { secondEntries, serverBundle, serverScript, serverSplitting } from './bundle-options.mjs';

// The entry (src/start.ts, dist/main.js), the ingestion process (src/vector-stores/ingest-pool.ts forks it)
// and the search worker (index-cache.ts starts it): modules of their own, sharing chunks. The entry runs the
// server's script, dist/standin.cjs, with the code cache made below (src/core/code-cache.ts).
const entryPoints = { main: 'src/start.ts', ...secondEntries };
for (const f of existsSync('dist') ? readdirSync('dist') : []) if (/^chunk-.*\.js(\.map)?$|^standin\.cjs/.test(f)) rmSync(`dist/${f}`);
await build({ entryPoints, outdir: 'dist', ...serverBundle, ...serverSplitting, sourcemap: true, logLevel: 'warning' });
// The server: one script, read, decoded and (without its code cache) compiled whole at every start.
await build({
  entryPoints: { standin: 'src/main.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  ...serverScript,
  sourcemap: true,
  logLevel: 'warning',
});
// Wrapped and in ASCII, as a start compiles it (scripts/server-script.mjs).
finishServerScript('dist/standin.cjs');
/** Bundles `script` into dist/ (so a native addon it loads resolves) and runs it with `args`. */
async function runBundled(script, ...args) {
  const outfile = `dist/.${script.replace(/^.*\//, '').replace(/\.ts$/, '.mjs')}`;
  await build({ entryPoints: [script], outfile, ...serverBundle, logLevel: 'warning' });
  try {
    execFileSync(process.execPath, [outfile, ...args], { stdio: 'inherit' });
  } finally {
    rmSync(outfile, { force: true });
  }
}
// The schema the migrations make on a fresh SQLite store (src/store/fresh-schema.ts), made by running them:
// dist/fresh-schema.json, beside the bundle.
await runBundled('scripts/fresh-schema.ts', 'dist/fresh-schema.json');
// The tokenizer's ranks (src/core/vocabulary.ts): dist/o200k.bin, beside the bundle, which a start reads in
// milliseconds where gpt-tokenizer's module of them took 0.2–0.4 s to load.
await runBundled('scripts/o200k.ts', 'dist/o200k.bin');
// The pre-tokenizer's character classes (src/core/pretokens.ts): dist/classes.bin, 64 KB a start reads where
// testing each character took 50–60 ms of the thread that first counted tokens.
await runBundled('scripts/classes.ts', 'dist/classes.bin');
// Every route's request validators as code (src/core/validation.ts): dist/validators/, beside the bundle, so
// a route's first request loads its validator rather than compiling it on the server's thread.
await runBundled('scripts/validators.ts', 'dist/validators');
// standin/testing (package.json `exports`): a small client of `standin ephemeral`, in both module formats
// (jest loads CommonJS unless told otherwise), with its type declarations.
const testing = { entryPoints: ['src/testing/index.ts'], bundle: true, platform: 'node', target: 'node20', logLevel: 'warning' };
await build({ ...testing, format: 'esm', outfile: 'dist/testing.js' });
// The CommonJS file finds its folder through __dirname; its import.meta branch is never taken.
await build({ ...testing, format: 'cjs', outfile: 'dist/testing.cjs', logOverride: { 'empty-import-meta': 'silent' } });
const ts = (await import('typescript')).default;
const declarations = ts.createProgram(['src/testing/index.ts'], {
  declaration: true,
  emitDeclarationOnly: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  types: ['node'],
  skipLibCheck: true,
  strict: true,
});
declarations.emit(undefined, (name, text) => {
  if (name.endsWith('index.d.ts')) {
    writeFileSync('dist/testing.d.ts', text);
    writeFileSync('dist/testing.d.cts', text);
  }
});
if (!existsSync('dist/testing.d.ts')) throw new Error('build: the declarations of standin/testing were not written');
// Optional extra build steps contributed by areas (web assets etc.).
for (const step of ['scripts/build-web.mjs', 'scripts/build-dashboard.mjs']) {
  if (existsSync(step)) await import(new URL(`../${step}`, import.meta.url).href);
}
// Last, once everything a start reads is in dist/: the server's code cache, made by a start of it.
await import('./code-cache.mjs');
