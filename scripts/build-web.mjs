// Builds the browser code of the app host (web/apps) into dist/web/apps: the host page and the component bridge.
// The host page is Preact + htm components (as the dashboard); the bridge is plain TypeScript: it must load before any component script.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'web', 'apps');
mkdirSync(out, { recursive: true });
await build({
  absWorkingDir: root,
  entryPoints: { host: 'web/apps/host.ts' },
  outdir: out,
  bundle: true,
  format: 'esm',
  target: 'chrome110',
  minify: true,
  sourcemap: true,
  logLevel: 'warning',
});
await build({
  absWorkingDir: root,
  // The sandbox proxy too: both are inlined in the pages the widget listener serves.
  entryPoints: { bridge: 'web/apps/bridge.ts', 'sandbox-proxy': 'web/apps/sandbox-proxy.ts' },
  outdir: out,
  bundle: true,
  // A classic script: it must run synchronously before the component's own scripts.
  format: 'iife',
  target: 'chrome110',
  minify: true,
  logLevel: 'warning',
});
// The host's stylesheet: the look it shares with the dashboard first, then its own.
writeFileSync(
  join(out, 'host.css'),
  ['web/shared/look.css', 'web/apps/host.css'].map((f) => readFileSync(join(root, f), 'utf8')).join('\n'),
);
