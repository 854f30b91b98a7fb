import type { Updateable } from 'kysely';
import { paginate, type ListParams } from '../../core/pagination.js';
import { LIST } from './page.js';
import { precompiledRows, precompiledWrite, type Exec } from '../../store/db.js';
import type { AssistantsTables } from '../tables.js';

/**
 * SQL of threads and their lock. `active_run_id` is the lock: the run that holds the thread (queued …
 * cancelling), null when none. Every read is scoped to the caller's project: another project's thread
 * is "not found".
 */
export type ThreadRow = AssistantsTables['threads'];

export const getThread = (db: Exec, projectId: string, id: string) =>
  db.selectFrom('threads').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();

const insertThreadStatement = precompiledRows<ThreadRow>(
  ['id', 'project_id', 'created_at', 'metadata', 'tool_resources', 'active_run_id'],
  (db, rows) => db.insertInto('threads').values(rows),
);

export async function insertThread(tx: Exec, row: ThreadRow): Promise<void> {
  await tx.executeQuery(insertThreadStatement(tx, [row]).compile());
}

export const updateThread = (db: Exec, projectId: string, id: string, set: Updateable<ThreadRow>) =>
  db.updateTable('threads').set(set).where('id', '=', id).where('project_id', '=', projectId).returningAll().executeTakeFirst();

/**
 * Returns the thread when no run holds it. The no-op update takes the row's write lock (PostgreSQL), so
 * no run can take the thread until the caller's transaction ends.
 */
export const lockFreeThread = (tx: Exec, projectId: string, id: string) =>
  tx
    .updateTable('threads')
    .set({ active_run_id: null })
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .where('active_run_id', 'is', null)
    .returningAll()
    .executeTakeFirst();

/** Releases a stale lock (its run is gone or ended). */
export async function clearThreadLock(tx: Exec, id: string): Promise<void> {
  await tx.updateTable('threads').set({ active_run_id: null }).where('id', '=', id).execute();
}

const holdThreadStatement = precompiledWrite(['id', 'runId'], (db, a: { id: string; runId: string }) =>
  db.updateTable('threads').set({ active_run_id: a.runId }).where('id', '=', a.id).where('active_run_id', 'is', null),
);

/** Gives the thread to a run; false when another run holds it. */
export async function holdThread(tx: Exec, id: string, runId: string): Promise<boolean> {
  return (await holdThreadStatement(tx, { id, runId })) > 0;
}

const releaseThreadStatement = precompiledWrite(['id', 'runId'], (db, a: { id: string; runId: string }) =>
  db.updateTable('threads').set({ active_run_id: null }).where('id', '=', a.id).where('active_run_id', '=', a.runId),
);

/** Lets the thread go, if `runId` holds it. */
export async function releaseThread(tx: Exec, id: string, runId: string): Promise<void> {
  await releaseThreadStatement(tx, { id, runId });
}

/** Deletes a thread and everything in it; returns the ids of its runs. */
export async function deleteThreadRows(tx: Exec, threadId: string): Promise<string[]> {
  const runs = await tx.selectFrom('thread_runs').select('id').where('thread_id', '=', threadId).execute();
  const ids = runs.map((r) => r.id);
  if (ids.length) {
    await tx.deleteFrom('run_events').where('run_id', 'in', ids).execute();
    await tx.deleteFrom('run_steps').where('run_id', 'in', ids).execute();
    await tx.deleteFrom('thread_runs').where('thread_id', '=', threadId).execute();
  }
  await tx.deleteFrom('thread_messages').where('thread_id', '=', threadId).execute();
  await tx.deleteFrom('threads').where('id', '=', threadId).execute();
  return ids;
}

/**
 * Which of `storeIds` the tool_resources of another thread or an assistant of the project name. Matched
 * in the JSON text (`_` of an id is a LIKE wildcard: at worst a store is kept that could have gone).
 */
export async function storesNamedElsewhere(
  tx: Exec,
  projectId: string,
  threadId: string,
  storeIds: readonly string[],
): Promise<Set<string>> {
  const named = new Set<string>();
  for (const id of storeIds) {
    const pattern = `%"${id}"%`;
    const thread = await tx
      .selectFrom('threads')
      .select('id')
      .where('project_id', '=', projectId)
      .where('id', '!=', threadId)
      .where('tool_resources', 'like', pattern)
      .limit(1)
      .executeTakeFirst();
    const assistant = thread
      ? undefined
      : await tx
          .selectFrom('assistants')
          .select('id')
          .where('project_id', '=', projectId)
          .where('tool_resources', 'like', pattern)
          .limit(1)
          .executeTakeFirst();
    if (thread || assistant) named.add(id);
  }
  return named;
}

/** A project's threads, newest first (the control plane's list; the threads interface has none). */
export function pageThreads<T>(db: Exec, projectId: string, page: ListParams, map: (row: ThreadRow) => T) {
  return paginate(db.selectFrom('threads').selectAll().where('project_id', '=', projectId), 'id', page, { ...LIST, map });
}
