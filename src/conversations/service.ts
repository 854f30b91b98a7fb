import { notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { Ctx } from '../core/module.js';
import type { ListParams } from '../core/pagination.js';
import { itemPage, readInput, type ConversationLink, type ItemList, type ItemListQuery, type ItemResource } from '../responses/types.js';
import type { Exec } from '../store/db.js';
import type { ConversationObject, CreateConversationBody, CreateItemsBody, UpdateConversationBody } from './schemas.js';
import * as store from './store.js';

/**
 * Conversations: a project's lists of items that responses read as context and append their turns to
 * (`conversation` on `/v1/responses`). Items are rows in order, so a turn reads what the model needs
 * and writes only its own items, whatever the conversation's length.
 */

const objectOf = (row: store.ConversationRow): ConversationObject => ({
  id: row.id,
  object: 'conversation',
  metadata: JSON.parse(row.metadata) as Record<string, string>,
  created_at: Number(row.created_at),
});

async function load(exec: Exec, projectId: string, id: string): Promise<store.ConversationRow> {
  const row = await store.getConversation(exec, projectId, id);
  if (!row) throw notFound('conversation', id, 'conversation_id');
  return row;
}

/** `POST /v1/conversations`: a conversation, with its first items (read as a response's input is). */
export async function createConversation(ctx: Ctx, projectId: string, body: CreateConversationBody): Promise<ConversationObject> {
  const entries = await readInput(ctx, projectId, body.items, 'items');
  const row = {
    id: newId('conv', ctx.clock),
    project_id: projectId,
    metadata: JSON.stringify(body.metadata ?? {}),
    created_at: ctx.clock.nowSeconds(),
  };
  await ctx.store.db.transaction().execute(async (tx) => {
    await store.insertConversation(tx, row);
    await store.appendItems(tx, projectId, row.id, entries);
  });
  return objectOf(row);
}

export async function getConversation(ctx: Ctx, projectId: string, id: string): Promise<ConversationObject> {
  return objectOf(await load(ctx.store.db, projectId, id));
}

/** `POST /v1/conversations/{id}`: replaces its metadata. */
export async function updateConversation(
  ctx: Ctx,
  projectId: string,
  id: string,
  body: UpdateConversationBody,
): Promise<ConversationObject> {
  const metadata = JSON.stringify(body.metadata ?? {});
  if (!(await store.updateMetadata(ctx.store.db, projectId, id, metadata))) throw notFound('conversation', id, 'conversation_id');
  return getConversation(ctx, projectId, id);
}

/** `DELETE /v1/conversations/{id}`: the conversation and its items. */
export async function deleteConversation(ctx: Ctx, projectId: string, id: string) {
  const deleted = await ctx.store.db.transaction().execute((tx) => store.deleteConversation(tx, projectId, id));
  if (!deleted) throw notFound('conversation', id, 'conversation_id');
  return { id, object: 'conversation.deleted' as const, deleted: true };
}

/** `POST /v1/conversations/{id}/items`: up to 20 items appended; the list of those added. */
export async function createItems(ctx: Ctx, projectId: string, id: string, body: CreateItemsBody): Promise<ItemList> {
  await load(ctx.store.db, projectId, id);
  const entries = await readInput(ctx, projectId, body.items, 'items');
  if (!(await store.appendItems(ctx.store.db, projectId, id, entries))) throw notFound('conversation', id, 'conversation_id');
  const data = entries.map((e) => e.item);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false };
}

/** `GET /v1/conversations/{id}/items`. */
export async function listItems(ctx: Ctx, projectId: string, id: string, query: ItemListQuery): Promise<ItemList> {
  const exec = ctx.store.db;
  await load(exec, projectId, id);
  return itemPage(
    {
      page: (order, from, take) => store.itemPage(exec, id, order, from, take),
      seqOf: async (itemId) => {
        const row = await store.getItem(exec, id, itemId);
        return row ? Number(row.seq) : undefined;
      },
    },
    query,
  );
}

export async function getItem(ctx: Ctx, projectId: string, id: string, itemId: string): Promise<ItemResource> {
  await load(ctx.store.db, projectId, id);
  const row = await store.getItem(ctx.store.db, id, itemId);
  if (!row) throw notFound('item', itemId, 'item_id');
  return JSON.parse(row.item) as ItemResource;
}

/** `DELETE /v1/conversations/{id}/items/{item_id}`: answers the conversation, as the document says. */
export async function deleteItem(ctx: Ctx, projectId: string, id: string, itemId: string): Promise<ConversationObject> {
  const row = await load(ctx.store.db, projectId, id);
  const item = await store.getItem(ctx.store.db, id, itemId);
  if (!item) throw notFound('item', itemId, 'item_id');
  await store.deleteItem(ctx.store.db, id, Number(item.seq));
  return objectOf(row);
}

/** A page of the project's conversations, newest first by default (the control plane's list, for the dashboard). */
export const listConversations = (ctx: Ctx, projectId: string, page: ListParams) =>
  store.pageConversations(ctx.store.db, projectId, page, objectOf);

/** The project of a conversation, by its id alone (the dashboard's search); undefined when none. */
export const locateConversation = (exec: Exec, id: string) => store.conversationProject(exec, id);

/** What the responses area reads and writes of conversations (`ctx.services.conversations`). */
export const conversationLink: ConversationLink = {
  async context(exec, projectId, id) {
    if (!(await store.getConversation(exec, projectId, id))) return undefined;
    return store.messages(exec, id);
  },
  append: (exec, projectId, id, entries) => store.appendItems(exec, projectId, id, entries),
  async findItem(exec, projectId, itemId) {
    const row = await store.findItem(exec, projectId, itemId);
    return row && { item: JSON.parse(row.item) as ItemResource, message: row.message === null ? null : JSON.parse(row.message) };
  },
};
