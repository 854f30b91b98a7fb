// Builds the dashboard (web/dashboard: Preact + htm and uPlot) into dist/web/dashboard: one ES module, one stylesheet.
import { build } from 'esbuild';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await build({
  absWorkingDir: root,
  entryPoints: { app: 'web/dashboard/main.ts' },
  outdir: join(root, 'dist', 'web', 'dashboard'),
  bundle: true,
  format: 'esm',
  target: 'chrome110',
  minify: true,
  sourcemap: true,
  logLevel: 'warning',
});
