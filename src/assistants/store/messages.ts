import { paginate, type ListParams } from '../../core/pagination.js';
import { precompiled, precompiledRows, toJson, type Exec } from '../../store/db.js';
import type { MessageIncompleteReason } from '../objects.js';
import type { AssistantsTables } from '../tables.js';
import { LIST } from './page.js';

/** SQL of thread messages, scoped to the caller's project and thread. */
export type MessageRow = AssistantsTables['thread_messages'];

export const getMessage = (db: Exec, projectId: string, threadId: string, id: string) =>
  db
    .selectFrom('thread_messages')
    .selectAll()
    .where('id', '=', id)
    .where('thread_id', '=', threadId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

/** The attachments of a thread's messages that give files to code_interpreter (JSON, one entry per message). */
export const interpreterAttachments = (db: Exec, threadId: string) =>
  db
    .selectFrom('thread_messages')
    .select('attachments')
    .where('thread_id', '=', threadId)
    .where('attachments', 'like', '%"code_interpreter"%')
    .orderBy('id', 'asc')
    .execute();

const insertMessagesStatement = precompiledRows<MessageRow>(
  [
    'id',
    'project_id',
    'thread_id',
    'created_at',
    'role',
    'content',
    'attachments',
    'metadata',
    'assistant_id',
    'run_id',
    'status',
    'completed_at',
    'incomplete_at',
    'incomplete_details',
  ],
  (db, rows) => db.insertInto('thread_messages').values(rows),
);

export async function insertMessages(tx: Exec, rows: MessageRow[]): Promise<void> {
  if (rows.length) await tx.executeQuery(insertMessagesStatement(tx, rows).compile());
}

/** A thread's messages, those of one run when `runId` is given. */
export function pageMessages<T>(
  db: Exec,
  projectId: string,
  threadId: string,
  runId: string | undefined,
  page: ListParams,
  map: (row: MessageRow) => T,
) {
  let q = db.selectFrom('thread_messages').selectAll().where('thread_id', '=', threadId).where('project_id', '=', projectId);
  if (runId !== undefined) q = q.where('run_id', '=', runId);
  return paginate(q, 'id', page, { ...LIST, map });
}

export const setMessageMetadata = (db: Exec, projectId: string, threadId: string, id: string, metadata: unknown) =>
  db
    .updateTable('thread_messages')
    .set({ metadata: toJson(metadata) })
    .where('id', '=', id)
    .where('thread_id', '=', threadId)
    .where('project_id', '=', projectId)
    .returningAll()
    .executeTakeFirst();

/** Deletes a message of the thread; false when there was none. */
export async function deleteMessage(db: Exec, projectId: string, threadId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('thread_messages')
    .where('id', '=', id)
    .where('thread_id', '=', threadId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Messages of a thread in creation order (the prompt's history). */
const threadMessagesQuery = precompiled(['threadId'], (db, a: { threadId: string }) =>
  db.selectFrom('thread_messages').selectAll().where('thread_id', '=', a.threadId).orderBy('id', 'asc'),
);
export const threadMessages = (db: Exec, threadId: string) => threadMessagesQuery(db, { threadId });

/** The text of a message being written (content blocks as JSON). */
export async function setMessageContent(tx: Exec, id: string, content: string): Promise<void> {
  await tx.updateTable('thread_messages').set({ content }).where('id', '=', id).execute();
}

export async function completeMessage(tx: Exec, id: string, content: string, now: number): Promise<void> {
  await tx.updateTable('thread_messages').set({ content, status: 'completed', completed_at: now }).where('id', '=', id).execute();
}

export const markMessageIncomplete = (tx: Exec, id: string, reason: MessageIncompleteReason, now: number) =>
  tx
    .updateTable('thread_messages')
    .set({ status: 'incomplete', incomplete_at: now, incomplete_details: toJson({ reason }) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();

/** The end of a completed run's messages, compiled once (every run that completes ends its reply so). */
const completeRunMessages = precompiled(['runId', 'now'], (db, a: { runId: string; now: number }) =>
  db
    .updateTable('thread_messages')
    .set({ status: 'completed', completed_at: a.now })
    .where('run_id', '=', a.runId)
    .where('status', '=', 'in_progress')
    .returningAll(),
);

/** Ends the messages a run is still writing: completed, or incomplete for `reason`. Returns them. */
export function endRunMessages(
  tx: Exec,
  runId: string,
  end: { status: 'completed' } | { status: 'incomplete'; reason: MessageIncompleteReason },
  now: number,
) {
  if (end.status === 'completed') return completeRunMessages(tx, { runId, now });
  const set = { status: 'incomplete' as const, incomplete_at: now, incomplete_details: toJson({ reason: end.reason }) };
  return tx
    .updateTable('thread_messages')
    .set(set)
    .where('run_id', '=', runId)
    .where('status', '=', 'in_progress')
    .returningAll()
    .execute();
}

/** Deletes the messages a run is still writing (the cut reply of a run taken over). Returns how many. */
export async function dropRunMessagesInProgress(tx: Exec, runId: string): Promise<number> {
  const res = await tx.deleteFrom('thread_messages').where('run_id', '=', runId).where('status', '=', 'in_progress').executeTakeFirst();
  return Number(res.numDeletedRows);
}
