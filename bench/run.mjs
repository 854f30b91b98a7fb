// Runs every benchmark in bench/ (each prints its table and writes bench/results/<name>.json).
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const only = process.argv.slice(2);
const files = readdirSync('bench').filter(
  (f) => /\.(mjs|ts)$/.test(f) && !['lib.mjs', 'run.mjs', 'bare-pg.mjs'].includes(f) && (!only.length || only.some((o) => f.startsWith(o))),
);
let failed = 0;
for (const f of files.sort()) {
  console.log(`\n## bench/${f}`);
  const args = f.endsWith('.ts') ? ['--import', 'tsx', `bench/${f}`] : [`bench/${f}`];
  const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
