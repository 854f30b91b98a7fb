import { sql, type Selectable } from 'kysely';
import type { ErrorType } from '../core/errors.js';
import type { Exec } from '../store/db.js';
import type { Fault, FaultStatus } from './faults.js';
import type { RateLimitTables } from './tables.js';

/** Saves one config section under its scope (`root`, `organization:<id>`, `project:<id>`). */
export async function saveSection(db: Exec, scope: string, value: unknown, nowMs: number): Promise<void> {
  const text = JSON.stringify(value);
  await db
    .insertInto('rate_limit_config')
    .values({ scope, value: text, updated_at: nowMs })
    .onConflict((oc) => oc.column('scope').doUpdateSet({ value: text, updated_at: nowMs }))
    .execute();
}

/** Every saved section. */
export async function loadSections(db: Exec): Promise<{ scope: string; value: unknown }[]> {
  const rows = await db.selectFrom('rate_limit_config').select(['scope', 'value']).orderBy('scope').execute();
  return rows.map((r) => ({ scope: r.scope, value: JSON.parse(r.value) }));
}

type FaultRow = Selectable<RateLimitTables['rate_limit_faults']>;

const toFault = (r: FaultRow): Fault => ({
  id: r.id,
  object: 'admin.fault',
  path: r.path,
  method: r.method,
  status: r.status as FaultStatus,
  type: r.type as ErrorType,
  code: r.code,
  message: r.message,
  remaining: r.remaining,
  retry_after: r.retry_after_ms === null ? null : r.retry_after_ms / 1000,
  created_at: r.created_at,
});

/** Stores a new fault. */
export async function insertFault(db: Exec, f: Fault): Promise<void> {
  await db
    .insertInto('rate_limit_faults')
    .values({
      id: f.id,
      path: f.path,
      method: f.method,
      status: f.status,
      type: f.type,
      code: f.code,
      message: f.message,
      remaining: f.remaining,
      retry_after_ms: f.retry_after === null ? null : Math.round(f.retry_after * 1000),
      created_at: f.created_at,
    })
    .execute();
}

/** Every fault, oldest first (the order faults are matched in). */
export async function listFaults(db: Exec): Promise<Fault[]> {
  return (await db.selectFrom('rate_limit_faults').selectAll().orderBy('id').execute()).map(toFault);
}

export async function getFault(db: Exec, id: string): Promise<Fault | undefined> {
  const row = await db.selectFrom('rate_limit_faults').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toFault(row);
}

/** Deletes one fault; false when there was none. */
export async function deleteFault(db: Exec, id: string): Promise<boolean> {
  const r = await db.deleteFrom('rate_limit_faults').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Deletes every fault; returns how many there were. */
export async function deleteAllFaults(db: Exec): Promise<number> {
  const r = await db.deleteFrom('rate_limit_faults').executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Writes back uses of faults (id → requests failed): counts go down, and a fault used up is deleted. */
export async function consumeFaults(db: Exec, uses: ReadonlyMap<string, number>): Promise<void> {
  for (const [id, n] of uses)
    await db
      .updateTable('rate_limit_faults')
      .set({ remaining: sql`remaining - ${n}` })
      .where('id', '=', id)
      .execute();
  await db.deleteFrom('rate_limit_faults').where('remaining', '<=', 0).execute();
}

/**
 * Adds `tokens` to an organization's batch queue when the sum stays within `limit` (no limit: always).
 * One conditional UPDATE: PostgreSQL locks the row and re-checks the sum against a concurrent reservation,
 * so the limit is exact across instances. False when it would not fit.
 */
export async function reserveBatchQueue(
  exec: Exec,
  organizationId: string,
  limitKey: string,
  tokens: number,
  limit?: number,
): Promise<boolean> {
  await exec
    .insertInto('rate_limit_batch_queue')
    .values({ organization_id: organizationId, limit_key: limitKey, tokens: 0 })
    .onConflict((oc) => oc.columns(['organization_id', 'limit_key']).doNothing())
    .execute();
  let q = exec
    .updateTable('rate_limit_batch_queue')
    .set({ tokens: sql`tokens + ${tokens}` })
    .where('organization_id', '=', organizationId)
    .where('limit_key', '=', limitKey);
  if (limit !== undefined) q = q.where(sql<boolean>`tokens + ${tokens} <= ${limit}`);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Gives back what a batch held (never below zero: a reset may have emptied the table meanwhile). */
export async function releaseBatchQueue(exec: Exec, organizationId: string, limitKey: string, tokens: number): Promise<void> {
  await exec
    .updateTable('rate_limit_batch_queue')
    .set({ tokens: sql`case when tokens > ${tokens} then tokens - ${tokens} else 0 end` })
    .where('organization_id', '=', organizationId)
    .where('limit_key', '=', limitKey)
    .execute();
}

/** The tokens an organization's pending batches hold under a limit key. */
export async function batchQueueTokens(exec: Exec, organizationId: string, limitKey: string): Promise<number> {
  const row = await exec
    .selectFrom('rate_limit_batch_queue')
    .select('tokens')
    .where('organization_id', '=', organizationId)
    .where('limit_key', '=', limitKey)
    .executeTakeFirst();
  return Number(row?.tokens ?? 0);
}
