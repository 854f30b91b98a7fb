import { paginate, type ListParams } from '../core/pagination.js';
import type { ChatMessage } from '../models/types.js';
import type { Exec } from '../store/db.js';
import type { ResponseObject } from './schemas.js';
import type { ResponsesTables } from './tables.js';

/**
 * SQL of stored responses: the response object (JSON) with the conversation the model saw, so
 * `previous_response_id` can continue it. Reads are scoped to the caller's project.
 */
/** A row of `responses`. */
export type ResponseRow = ResponsesTables['responses'];

export const getResponse = (exec: Exec, projectId: string, id: string) =>
  exec.selectFrom('responses').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();

export const getResponseById = (exec: Exec, id: string) => exec.selectFrom('responses').selectAll().where('id', '=', id).executeTakeFirst();

/** The conversation a stored response left behind, or undefined when there is no such response. */
export async function conversationOf(exec: Exec, projectId: string, id: string): Promise<ChatMessage[] | undefined> {
  const row = await exec
    .selectFrom('responses')
    .select('messages')
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return row ? (JSON.parse(row.messages) as ChatMessage[]) : undefined;
}

/** Stores a response; `stream` marks a background response created with `stream: true`. */
export async function insertResponse(
  exec: Exec,
  projectId: string,
  r: ResponseObject,
  messages: ChatMessage[],
  stream = false,
): Promise<void> {
  await exec
    .insertInto('responses')
    .values({
      id: r.id,
      project_id: projectId,
      status: r.status,
      background: r.background ? 1 : 0,
      payload: JSON.stringify(r),
      messages: JSON.stringify(messages),
      created_at: r.created_at,
      stream: stream ? 1 : 0,
    })
    .execute();
}

/** Moves a queued response to in progress (a job picking it up again keeps it so); false when it has ended meanwhile. */
export async function startResponse(exec: Exec, r: ResponseObject): Promise<boolean> {
  const res = await exec
    .updateTable('responses')
    .set({ status: 'in_progress', payload: JSON.stringify(r) })
    .where('id', '=', r.id)
    .where('status', 'in', ['queued', 'in_progress'])
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Stores the end of a running response; false when it was no longer running (a cancel won). */
export async function finishResponse(exec: Exec, r: ResponseObject, messages: ChatMessage[]): Promise<boolean> {
  const res = await exec
    .updateTable('responses')
    .set({ status: r.status, payload: JSON.stringify(r), messages: JSON.stringify(messages) })
    .where('id', '=', r.id)
    .where('status', '=', 'in_progress')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Cancels a queued or running response; false when it had ended meanwhile. */
export async function cancelResponse(exec: Exec, r: ResponseObject): Promise<boolean> {
  const res = await exec
    .updateTable('responses')
    .set({ status: 'cancelled', payload: JSON.stringify(r) })
    .where('id', '=', r.id)
    .where('status', 'in', ['queued', 'in_progress'])
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deleteResponse(exec: Exec, id: string): Promise<void> {
  await exec.deleteFrom('responses').where('id', '=', id).execute();
}

/** A page of the project's stored responses (the dashboard's list), newest first by default; `status` keeps one status. */
export function pageResponses<T>(
  exec: Exec,
  projectId: string,
  status: string | undefined,
  page: ListParams,
  map: (row: ResponseRow) => T,
) {
  let q = exec.selectFrom('responses').selectAll().where('project_id', '=', projectId);
  if (status) q = q.where('status', '=', status);
  return paginate(q, 'id', page, { defaultLimit: 20, maxLimit: 100, map });
}

/** The project of a stored response, by its id alone (the dashboard's search); undefined when none. */
export const responseProject = (exec: Exec, id: string) =>
  exec.selectFrom('responses').select('project_id').where('id', '=', id).executeTakeFirst();

/** Whether a stored response was created with `background` and `stream` (its events kept for a time). */
export async function wasStreamed(exec: Exec, projectId: string, id: string): Promise<boolean> {
  const row = await exec
    .selectFrom('responses')
    .select('stream')
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return Number(row?.stream ?? 0) === 1;
}
