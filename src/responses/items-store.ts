import type { ChatMessage } from '../models/types.js';
import type { Exec } from '../store/db.js';
import type { ItemResource } from './input-schemas.js';

/** SQL of the items of stored responses (items-tables.ts). Reads are scoped to the caller's project. */

/** An item with the chat message the model saw for it. */
export interface ItemEntry {
  item: ItemResource;
  message: ChatMessage | null;
}

const entryOf = (row: { item: string; message: string | null }): ItemEntry => ({
  item: JSON.parse(row.item) as ItemResource,
  message: row.message === null ? null : (JSON.parse(row.message) as ChatMessage),
});

export async function insertItems(exec: Exec, responseId: string, projectId: string, kind: 'input' | 'output', entries: ItemEntry[]) {
  if (!entries.length) return;
  await exec
    .insertInto('response_items')
    .values(
      entries.map((e, seq) => ({
        response_id: responseId,
        kind,
        seq,
        id: e.item.id,
        project_id: projectId,
        item: JSON.stringify(e.item),
        message: e.message === null ? null : JSON.stringify(e.message),
      })),
    )
    .execute();
}

/** A response's input or output items, in order. */
export async function entries(exec: Exec, responseId: string, kind: 'input' | 'output'): Promise<ItemEntry[]> {
  const rows = await exec
    .selectFrom('response_items')
    .select(['item', 'message'])
    .where('response_id', '=', responseId)
    .where('kind', '=', kind)
    .orderBy('seq')
    .execute();
  return rows.map(entryOf);
}

/** The newest stored item of the project with this id (an `item_reference`). */
export async function findItem(exec: Exec, projectId: string, id: string): Promise<ItemEntry | undefined> {
  const row = await exec
    .selectFrom('response_items')
    .select(['item', 'message'])
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .orderBy('response_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && entryOf(row);
}

/** A page of a response's input items: `limit + 1` rows from `from` (a position, exclusive) in `order`. */
export async function inputPage(exec: Exec, responseId: string, order: 'asc' | 'desc', from: number | null, take: number) {
  let q = exec.selectFrom('response_items').select(['item']).where('response_id', '=', responseId).where('kind', '=', 'input');
  if (from !== null) q = q.where('seq', order === 'asc' ? '>' : '<', from);
  return (await q.orderBy('seq', order).limit(take).execute()).map((r) => JSON.parse(r.item) as ItemResource);
}

/** The position of an input item in a response, or undefined. */
export async function inputSeq(exec: Exec, responseId: string, itemId: string): Promise<number | undefined> {
  const row = await exec
    .selectFrom('response_items')
    .select('seq')
    .where('response_id', '=', responseId)
    .where('kind', '=', 'input')
    .where('id', '=', itemId)
    .executeTakeFirst();
  return row ? Number(row.seq) : undefined;
}

export async function deleteItems(exec: Exec, responseId: string): Promise<void> {
  await exec.deleteFrom('response_items').where('response_id', '=', responseId).execute();
}
