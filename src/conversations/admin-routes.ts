import { Type } from 'typebox';
import type { App, Ctx } from '../core/module.js';
import { ListOf, PageParams, PathId, ProjectParams } from '../core/schemas.js';
import { ItemList, ItemListQuery } from '../responses/types.js';
import { ConversationObject } from './schemas.js';
import * as service from './service.js';

const ConversationParams = Type.Object({ project_id: PathId, conversation_id: PathId });
const ListQuery = Type.Object(PageParams, { additionalProperties: false });

/** Read-only views of a project's conversations and their items for the dashboard (under /admin/v1). */
export function conversationsAdminRoutes(app: App, ctx: Ctx): void {
  const tags = ['admin: conversations'];
  app.get(
    '/projects/:project_id/conversations',
    { schema: { tags, params: ProjectParams, querystring: ListQuery, response: { 200: ListOf(ConversationObject) } } },
    async (req) => service.listConversations(ctx, req.params.project_id, req.query),
  );
  app.get(
    '/projects/:project_id/conversations/:conversation_id/items',
    { schema: { tags, params: ConversationParams, querystring: ItemListQuery, response: { 200: ItemList } } },
    async (req) => {
      const { 'include[]': _include, ...query } = req.query;
      return service.listItems(ctx, req.params.project_id, req.params.conversation_id, query);
    },
  );
}
