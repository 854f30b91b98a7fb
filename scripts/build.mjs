// Bundles Standin's own code into dist/ (dependencies stay external), so `npm start` boots fast.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

const entryPoints = ['src/main.ts'];
await build({
  entryPoints,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
// Optional extra build steps contributed by areas (web assets etc.).
for (const step of ['scripts/build-web.mjs']) {
  if (existsSync(step)) await import(new URL(`../${step}`, import.meta.url).href);
}
