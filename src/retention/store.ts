import { sql } from 'kysely';
import type { Exec } from '../store/db.js';

/**
 * The SQL of the retention area: the config file's section and the last sweep's report, kept in the
 * shared `settings` table so that whichever instance runs the sweep (or answers the admin view) sees
 * them; and PostgreSQL's VACUUM after a purge. The purges themselves are each area's SQL.
 */

const POLICY_KEY = 'retention_policy';
const LAST_SWEEP_KEY = 'retention_last_sweep';

async function readJson<T>(exec: Exec, key: string): Promise<T | undefined> {
  const row = await exec.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row ? (JSON.parse(row.value) as T) : undefined;
}

async function writeJson(exec: Exec, key: string, value: unknown): Promise<void> {
  const text = JSON.stringify(value);
  await exec
    .insertInto('settings')
    .values({ key, value: text })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: text }))
    .execute();
}

/** The config file's `retention` section as last applied (record kind → `off` or a duration). */
export const readConfiguredPolicy = async (exec: Exec): Promise<Record<string, string>> =>
  (await readJson<Record<string, string>>(exec, POLICY_KEY)) ?? {};

export const writeConfiguredPolicy = (exec: Exec, value: Record<string, string>) => writeJson(exec, POLICY_KEY, value);

export const readLastSweep = <T>(exec: Exec) => readJson<T>(exec, LAST_SWEEP_KEY);

export const writeLastSweep = (exec: Exec, report: unknown) => writeJson(exec, LAST_SWEEP_KEY, report);

/**
 * PostgreSQL: makes the space of deleted rows reusable now rather than when autovacuum comes by, so a
 * purged table stops growing. (SQLite reuses freed pages by itself.) VACUUM runs outside a transaction.
 */
export async function vacuum(exec: Exec, tables: readonly string[]): Promise<void> {
  if (!tables.length) return;
  await sql.raw(`VACUUM ${tables.map((t) => `"${t.replace(/"/g, '""')}"`).join(', ')}`).execute(exec);
}
