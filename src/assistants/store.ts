import { sql } from 'kysely';
import type { Exec } from '../store/db.js';
import type { Ctx } from '../core/module.js';

/** SQL of the threads interface. Every read is scoped to the caller's project: another project's object is "not found". */
export const getAssistant = (db: Exec, projectId: string, id: string) =>
  db.selectFrom('assistants').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();

export const getThread = (db: Exec, projectId: string, id: string) =>
  db.selectFrom('threads').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();

export const getMessage = (db: Exec, projectId: string, threadId: string, id: string) =>
  db.selectFrom('thread_messages').selectAll().where('id', '=', id).where('thread_id', '=', threadId).where('project_id', '=', projectId).executeTakeFirst();

export const getRun = (db: Exec, projectId: string, threadId: string, id: string) =>
  db.selectFrom('thread_runs').selectAll().where('id', '=', id).where('thread_id', '=', threadId).where('project_id', '=', projectId).executeTakeFirst();

export const getRunById = (db: Exec, id: string) => db.selectFrom('thread_runs').selectAll().where('id', '=', id).executeTakeFirst();

export const getStep = (db: Exec, projectId: string, runId: string, id: string) =>
  db.selectFrom('run_steps').selectAll().where('id', '=', id).where('run_id', '=', runId).where('project_id', '=', projectId).executeTakeFirst();

/** Messages of a thread in creation order (the prompt's history). */
export const threadMessages = (db: Exec, threadId: string) =>
  db.selectFrom('thread_messages').selectAll().where('thread_id', '=', threadId).orderBy('id', 'asc').execute();

export const runSteps = (db: Exec, runId: string) => db.selectFrom('run_steps').selectAll().where('run_id', '=', runId).orderBy('id', 'asc').execute();

/** A run's events after `seq`, in order. */
export const eventsAfter = (db: Exec, runId: string, seq: number, limit = 500) =>
  db.selectFrom('run_events').select(['seq', 'event', 'data']).where('run_id', '=', runId).where('seq', '>', seq).orderBy('seq', 'asc').limit(limit).execute();

/** Appends events to a run's stream, numbering them after the run's last one (the run row serializes writers). */
export async function appendEvents(ctx: Pick<Ctx, 'clock' | 'store'>, tx: Exec, runId: string, events: { event: string; data: unknown }[]): Promise<void> {
  if (!events.length) return;
  const row = await tx
    .updateTable('thread_runs')
    .set({ event_seq: sql<number>`event_seq + ${events.length}` })
    .where('id', '=', runId)
    .returning('event_seq')
    .executeTakeFirst();
  if (!row) return;
  await insertEvents(ctx, tx, runId, Number(row.event_seq) - events.length, events);
}

/** Inserts events numbered after `base`, for a caller that already moved the run's event_seq past them. */
export async function insertEvents(ctx: Pick<Ctx, 'clock' | 'store'>, tx: Exec, runId: string, base: number, events: { event: string; data: unknown }[]): Promise<void> {
  const now = ctx.clock.now();
  await tx
    .insertInto('run_events')
    .values(events.map((e, i) => ({ run_id: runId, seq: base + i + 1, event: e.event, data: JSON.stringify(e.data), created_at: now })))
    .execute();
  if (ctx.store.dialect === 'postgres') await sql`select pg_notify('standin_runs', ${runId})`.execute(tx);
}

/** Deletes a thread and everything in it. */
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
