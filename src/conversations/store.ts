import { paginate, type ListParams } from '../core/pagination.js';
import type { ChatMessage } from '../models/types.js';
import type { ItemEntry, ItemResource } from '../responses/types.js';
import type { Exec } from '../store/db.js';

/** SQL of conversations and their items. Reads are scoped to the caller's project. */

export interface ConversationRow {
  id: string;
  project_id: string;
  metadata: string;
  created_at: number;
}

export const getConversation = (exec: Exec, projectId: string, id: string) =>
  exec
    .selectFrom('conversations')
    .select(['id', 'project_id', 'metadata', 'created_at'])
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

/** The project of a conversation, found by its id alone (the dashboard's search). */
export const conversationProject = (exec: Exec, id: string) =>
  exec.selectFrom('conversations').select('project_id').where('id', '=', id).executeTakeFirst();

export async function insertConversation(exec: Exec, row: ConversationRow): Promise<void> {
  await exec
    .insertInto('conversations')
    .values({ ...row, next_seq: 0 })
    .execute();
}

export async function updateMetadata(exec: Exec, projectId: string, id: string, metadata: string): Promise<boolean> {
  const r = await exec
    .updateTable('conversations')
    .set({ metadata })
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function deleteConversation(exec: Exec, projectId: string, id: string): Promise<boolean> {
  const r = await exec.deleteFrom('conversations').where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  if (!Number(r.numDeletedRows)) return false;
  await exec.deleteFrom('conversation_items').where('conversation_id', '=', id).execute();
  return true;
}

/**
 * Appends items at the end of a conversation: their positions are reserved by one update of the
 * conversation's row (which also serializes concurrent appends); false when the conversation is gone.
 */
export async function appendItems(exec: Exec, projectId: string, id: string, entries: ItemEntry[]): Promise<boolean> {
  const reserved = await exec
    .updateTable('conversations')
    .set((eb) => ({ next_seq: eb('next_seq', '+', entries.length) }))
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .returning('next_seq')
    .executeTakeFirst();
  if (!reserved) return false;
  if (!entries.length) return true;
  const start = Number(reserved.next_seq) - entries.length;
  await exec
    .insertInto('conversation_items')
    .values(
      entries.map((e, i) => ({
        conversation_id: id,
        seq: start + i,
        id: e.item.id,
        project_id: projectId,
        item: JSON.stringify(e.item),
        message: e.message === null ? null : JSON.stringify(e.message),
      })),
    )
    .execute();
  return true;
}

/** The chat messages of a conversation's items, in order (items the model does not see left out). */
export async function messages(exec: Exec, id: string): Promise<ChatMessage[]> {
  const rows = await exec
    .selectFrom('conversation_items')
    .select('message')
    .where('conversation_id', '=', id)
    .where('message', 'is not', null)
    .orderBy('seq')
    .execute();
  return rows.map((r) => JSON.parse(r.message!) as ChatMessage);
}

export async function itemPage(exec: Exec, id: string, order: 'asc' | 'desc', from: number | null, take: number): Promise<ItemResource[]> {
  let q = exec.selectFrom('conversation_items').select('item').where('conversation_id', '=', id);
  if (from !== null) q = q.where('seq', order === 'asc' ? '>' : '<', from);
  return (await q.orderBy('seq', order).limit(take).execute()).map((r) => JSON.parse(r.item) as ItemResource);
}

/** An item of a conversation by its id: the first with that id. */
export const getItem = (exec: Exec, id: string, itemId: string) =>
  exec
    .selectFrom('conversation_items')
    .select(['seq', 'item', 'message'])
    .where('conversation_id', '=', id)
    .where('id', '=', itemId)
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();

export async function deleteItem(exec: Exec, id: string, seq: number): Promise<void> {
  await exec.deleteFrom('conversation_items').where('conversation_id', '=', id).where('seq', '=', seq).execute();
}

/** The newest item of one of the project's conversations with this id (an `item_reference`). */
export const findItem = (exec: Exec, projectId: string, itemId: string) =>
  exec
    .selectFrom('conversation_items')
    .select(['item', 'message'])
    .where('project_id', '=', projectId)
    .where('id', '=', itemId)
    .orderBy('conversation_id', 'desc')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();

/** A page of the project's conversations (the dashboard's list), newest first by default. */
export const pageConversations = <T>(exec: Exec, projectId: string, page: ListParams, map: (row: ConversationRow) => T) =>
  paginate(
    exec.selectFrom('conversations').select(['id', 'project_id', 'metadata', 'created_at']).where('project_id', '=', projectId),
    'id',
    page,
    { defaultLimit: 20, maxLimit: 100, map },
  );
