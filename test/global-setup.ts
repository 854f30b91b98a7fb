import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { bwrapAvailable } from '../src/code-interpreter/bwrap.js';
import { nginxBinary } from './deploy/balancer.js';
import { TEST_SCHEMA_PREFIX } from './helpers.js';

/**
 * With STANDIN_TEST_REQUIRE_ALL=1 (.ci/run sets it) a run stops at once, naming what is missing, when a
 * suite that needs a server or a system package would be skipped: those suites run only where their parts
 * are, and a CI that silently lost one would pass without testing it.
 */
function missingParts(): string[] {
  const missing: string[] = [];
  if (!process.env.STANDIN_TEST_DATABASE_URL) missing.push('STANDIN_TEST_DATABASE_URL (the PostgreSQL suites)');
  if (!process.env.STANDIN_TEST_REDIS_URL) missing.push('STANDIN_TEST_REDIS_URL (the Redis suites)');
  if (!existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium')) missing.push('chromium (the app host and dashboard suites)');
  if (!nginxBinary() || !existsSync('/usr/lib/nginx/modules/ngx_stream_module.so'))
    missing.push('nginx with libnginx-mod-stream (test/deploy)');
  if (!existsSync('/usr/bin/systemd-analyze')) missing.push('systemd-analyze (test/deploy: the recipe unit file)');
  if (!bwrapAvailable()) missing.push('bubblewrap and python3 (the code interpreter sandbox)');
  else if (spawnSync('/usr/bin/python3', ['-c', 'import pandas, matplotlib'], { timeout: 30_000 }).status !== 0)
    missing.push('python3-pandas and python3-matplotlib (the code interpreter sandbox)');
  if (spawnSync('clang', ['--version']).status !== 0 || spawnSync('wasm-ld', ['--version']).status !== 0)
    missing.push('clang and lld (src/core/token-ends-wasm.test.ts: the committed WebAssembly held to its C source)');
  return missing;
}

/** Whether the process that made a test schema (its name holds the pid) still runs: then a run is under way. */
function ownerAlive(schema: string): boolean {
  const pid = Number(/_(\d+)_[a-z0-9]+$/.exec(schema)?.[1]);
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Before a run: drop the PostgreSQL schemas earlier test runs left (test files never drop theirs
 * mid-run). A schema whose test process still runs belongs to a run going on beside this one: it stays.
 */
export default async function setup() {
  if (process.env.STANDIN_TEST_REQUIRE_ALL === '1') {
    const missing = missingParts();
    if (missing.length) throw new Error(`STANDIN_TEST_REQUIRE_ALL is set and these are missing:\n  ${missing.join('\n  ')}`);
  }
  const url = process.env.STANDIN_TEST_DATABASE_URL;
  if (!url) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, [
      `${TEST_SCHEMA_PREFIX}%`,
    ]);
    for (const { nspname } of rows) if (!ownerAlive(nspname)) await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  } finally {
    await client.end();
  }
}
