// Bundles Standin and its pure-JS dependencies into one file in dist/: resolving and reading a few thousand
// module files was half of the cold start. Native addons stay external, and packages loaded on first use
// (src/core/lazy.ts: pg, ioredis, yaml, pkijs, the tokenizer) are required from node_modules at run time.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

// The ingestion process (src/vector-stores/ingest-pool.ts forks it) is a second entry: dist/ingest-child.js.
const entryPoints = { main: 'src/main.ts', 'ingest-child': 'src/vector-stores/ingest-child.ts' };
await build({
  entryPoints,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'pg-native', 'playwright-core', 'fsevents'],
  // Bundled CommonJS code calls require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __standinRequire } from 'node:module'; const require = __standinRequire(import.meta.url);" },
  sourcemap: true,
  logLevel: 'warning',
});
// Optional extra build steps contributed by areas (web assets etc.).
for (const step of ['scripts/build-web.mjs', 'scripts/build-dashboard.mjs']) {
  if (existsSync(step)) await import(new URL(`../${step}`, import.meta.url).href);
}
