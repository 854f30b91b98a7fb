import { invalid, notFound } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import type { Exec } from '../store/db.js';
import type { ItemList, ItemListQuery, ItemResource } from './input-schemas.js';
import * as itemsStore from './items-store.js';
import * as store from './store.js';

/** How a list of items reads a page: rows after a position, and the position of an item id (the `after` cursor). */
export interface ItemSource {
  page(order: 'asc' | 'desc', from: number | null, take: number): Promise<ItemResource[]>;
  seqOf(itemId: string): Promise<number | undefined>;
}

/**
 * A page of items (`limit` 1–100, default 20; `order` default `desc`; `after` an item id of the list), as
 * ResponseItemList and ConversationItemList have it. Items are kept in order by position, so `after` is
 * read as that item's position.
 */
export async function itemPage(source: ItemSource, query: ItemListQuery): Promise<ItemList> {
  const limit = query.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw invalid(`'limit' must be an integer from 1 to 100.`, 'limit', 'invalid_value');
  const order = query.order ?? 'desc';
  let from: number | null = null;
  if (query.after !== undefined) {
    const seq = await source.seqOf(query.after);
    if (seq === undefined) throw invalid(`'after' names no item of this list: '${query.after}'.`, 'after', 'invalid_value');
    from = seq;
  }
  const rows = await source.page(order, from, limit + 1);
  const data = rows.slice(0, limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
}

/** `GET /v1/responses/{id}/input_items`: the input items of a stored response, as it was given them. */
export async function listInputItems(ctx: Ctx, projectId: string, responseId: string, query: ItemListQuery): Promise<ItemList> {
  const exec: Exec = ctx.store.db;
  if (!(await store.getResponse(exec, projectId, responseId))) throw notFound('response', responseId, 'response_id');
  return itemPage(
    {
      page: (order, from, take) => itemsStore.inputPage(exec, responseId, order, from, take),
      seqOf: (itemId) => itemsStore.inputSeq(exec, responseId, itemId),
    },
    query,
  );
}
