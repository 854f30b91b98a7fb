// Runs every benchmark in bench/ (each prints its table and writes bench/results/<name>.json).
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const only = process.argv.slice(2);
// A .ts file here is a probe a bench bundles and runs itself (cold-start-parts.ts), not a bench.
const files = readdirSync('bench').filter(
  (f) => f.endsWith('.mjs') && !['lib.mjs', 'run.mjs', 'bare-pg.mjs'].includes(f) && (!only.length || only.some((o) => f.startsWith(o))),
);
let failed = 0;
for (const f of files.sort()) {
  console.log(`\n## bench/${f}`);
  const r = spawnSync(process.execPath, [`bench/${f}`], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
