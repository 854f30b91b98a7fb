import pg from 'pg';
import { TEST_SCHEMA_PREFIX } from './helpers.js';

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
