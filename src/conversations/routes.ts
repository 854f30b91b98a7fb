import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { ItemList, ItemListQuery, ItemResource } from '../responses/types.js';
import {
  ConversationDeleted,
  ConversationObject,
  ConversationParams,
  CreateConversationBody,
  CreateItemsBody,
  IncludeQuery,
  ItemParams,
  UpdateConversationBody,
} from './schemas.js';
import * as service from './service.js';

/** `/v1/conversations`: create, retrieve, update, delete; items create, list, retrieve, delete. */
export function conversationsRoutes(app: App, ctx: Ctx): void {
  const tags = ['conversations'];
  const read = needs('responses', 'read');
  const write = needs('responses', 'write');
  const project = (req: Parameters<Ctx['auth']['principalOf']>[0]) => ctx.auth.principalOf(req).projectId;

  app.post(
    '/v1/conversations',
    { config: write, schema: { tags, body: CreateConversationBody, response: { 200: ConversationObject } } },
    (req) => service.createConversation(ctx, project(req), req.body),
  );
  app.get(
    '/v1/conversations/:conversation_id',
    { config: read, schema: { tags, params: ConversationParams, response: { 200: ConversationObject } } },
    (req) => service.getConversation(ctx, project(req), req.params.conversation_id),
  );
  app.post(
    '/v1/conversations/:conversation_id',
    { config: write, schema: { tags, params: ConversationParams, body: UpdateConversationBody, response: { 200: ConversationObject } } },
    (req) => service.updateConversation(ctx, project(req), req.params.conversation_id, req.body),
  );
  app.delete(
    '/v1/conversations/:conversation_id',
    { config: write, schema: { tags, params: ConversationParams, response: { 200: ConversationDeleted } } },
    (req) => service.deleteConversation(ctx, project(req), req.params.conversation_id),
  );
  app.post(
    '/v1/conversations/:conversation_id/items',
    {
      config: write,
      schema: { tags, params: ConversationParams, querystring: IncludeQuery, body: CreateItemsBody, response: { 200: ItemList } },
    },
    (req) => service.createItems(ctx, project(req), req.params.conversation_id, req.body),
  );
  app.get(
    '/v1/conversations/:conversation_id/items',
    { config: read, schema: { tags, params: ConversationParams, querystring: ItemListQuery, response: { 200: ItemList } } },
    (req) => {
      const { 'include[]': _include, ...query } = req.query;
      return service.listItems(ctx, project(req), req.params.conversation_id, query);
    },
  );
  app.get(
    '/v1/conversations/:conversation_id/items/:item_id',
    { config: read, schema: { tags, params: ItemParams, querystring: IncludeQuery, response: { 200: ItemResource } } },
    (req) => service.getItem(ctx, project(req), req.params.conversation_id, req.params.item_id),
  );
  app.delete(
    '/v1/conversations/:conversation_id/items/:item_id',
    { config: write, schema: { tags, params: ItemParams, response: { 200: ConversationObject } } },
    (req) => service.deleteItem(ctx, project(req), req.params.conversation_id, req.params.item_id),
  );
}
