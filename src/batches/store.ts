import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { paginate, type ListPage, type ListParams } from '../core/pagination.js';
import type { Exec } from '../store/db.js';
import type { BatchesTables } from './tables.js';

/** The SQL of batches and their line results. */
export type BatchRow = Selectable<BatchesTables['batches']>;
type BatchPatch = Updateable<BatchesTables['batches']>;

export async function insertBatch(exec: Exec, row: Insertable<BatchesTables['batches']>): Promise<void> {
  await exec.insertInto('batches').values(row).execute();
}

/** A batch of the project. */
export const getBatch = (exec: Exec, projectId: string, id: string) =>
  exec.selectFrom('batches').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();

/** Any batch by id (the job). */
export const getBatchById = (exec: Exec, id: string) => exec.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();

export function listBatches<T>(exec: Exec, projectId: string, params: ListParams, map: (row: BatchRow) => T): Promise<ListPage<T>> {
  const q = exec.selectFrom('batches').selectAll().where('project_id', '=', projectId);
  return paginate(q, 'id', params, { defaultLimit: 20, maxLimit: 100, map });
}

/**
 * Changes a batch only while its status is one of `from`; false when it was not (another worker or a cancel
 * came first). `addFailed` adds to the failed count (lines that never ran).
 */
export async function updateBatch(exec: Exec, id: string, from: readonly string[], patch: BatchPatch, addFailed = 0): Promise<boolean> {
  const res = await exec
    .updateTable('batches')
    .set({ ...patch, ...(addFailed ? { failed: sql`failed + ${addFailed}` } : {}) })
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Records a group of lines run: moves the cursor from `fromLine` on (only if it is still there, so a worker
 * whose claim lapsed cannot record the same lines twice) and adds the counts. Answers the batch's status
 * after the change, or undefined when the cursor had moved or the batch is no longer running.
 */
export async function advance(
  exec: Exec,
  id: string,
  fromLine: number,
  next: { line: number; offset: number; completed: number; failed: number; inputTokens: number; outputTokens: number },
): Promise<string | undefined> {
  const row = await exec
    .updateTable('batches')
    .set({
      next_line: next.line,
      next_offset: next.offset,
      completed: sql`completed + ${next.completed}`,
      failed: sql`failed + ${next.failed}`,
      input_tokens: sql`input_tokens + ${next.inputTokens}`,
      output_tokens: sql`output_tokens + ${next.outputTokens}`,
    })
    .where('id', '=', id)
    .where('next_line', '=', fromLine)
    .where('status', 'in', ['in_progress', 'cancelling'])
    .returning('status')
    .executeTakeFirst();
  return row?.status;
}

export async function insertResults(exec: Exec, rows: Insertable<BatchesTables['batch_results']>[]): Promise<void> {
  if (rows.length) await exec.insertInto('batch_results').values(rows).execute();
}

/** A page of results of one kind (output or error lines) in input order, after `afterLine`. */
export function resultsPage(exec: Exec, batchId: string, ok: boolean, afterLine: number, limit: number) {
  return exec
    .selectFrom('batch_results')
    .select(['line', 'json'])
    .where('batch_id', '=', batchId)
    .where('ok', '=', ok ? 1 : 0)
    .where('line', '>', afterLine)
    .orderBy('line')
    .limit(limit)
    .execute();
}

export async function deleteResults(exec: Exec, batchId: string): Promise<void> {
  await exec.deleteFrom('batch_results').where('batch_id', '=', batchId).execute();
}
