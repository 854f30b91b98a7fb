import { sql } from 'kysely';
import type { Exec } from '../store/db.js';

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
