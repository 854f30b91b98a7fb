import pg from 'pg';
import { TEST_SCHEMA_PREFIX } from './helpers.js';

/** Before a run: drop the PostgreSQL schemas earlier test runs left (test files never drop theirs mid-run). */
export default async function setup() {
  const url = process.env.STANDIN_TEST_DATABASE_URL;
  if (!url) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, [`${TEST_SCHEMA_PREFIX}%`]);
    for (const { nspname } of rows) await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  } finally {
    await client.end();
  }
}
