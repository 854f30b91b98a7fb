import { Type } from 'typebox';
import { notFound } from '../core/errors.js';
import type { App, Ctx } from '../core/module.js';
import { PathId } from '../core/schemas.js';
import {
  AdminEventsQuery,
  AdminResponseEvents,
  AdminResponseList,
  AdminResponsesQuery,
  type AdminResponseSummary,
} from './admin-schemas.js';
import { listInputItems } from './input-items.js';
import { ItemList, ItemListQuery } from './input-schemas.js';
import { ResponseObject } from './schemas.js';
import * as store from './store.js';
import { eventsAfter } from './stream-store.js';

const ProjectParams = Type.Object({ project_id: PathId });
const ResponseParams = Type.Object({ project_id: PathId, response_id: PathId });

function summary(row: store.ResponseRow): AdminResponseSummary {
  const r = JSON.parse(row.payload) as ResponseObject;
  return {
    id: r.id,
    object: 'response',
    status: r.status,
    model: r.model,
    created_at: r.created_at,
    completed_at: r.completed_at,
    background: r.background,
    usage: r.usage,
    error: r.error,
    incomplete_details: r.incomplete_details,
    previous_response_id: r.previous_response_id,
    conversation_id: r.conversation?.id ?? null,
    output_types: r.output.map((o) => o.type),
  };
}

async function stored(ctx: Ctx, projectId: string, id: string): Promise<ResponseObject> {
  const row = await store.getResponse(ctx.store.db, projectId, id);
  if (!row) throw notFound('response', id, 'response_id');
  return JSON.parse(row.payload) as ResponseObject;
}

/** Read-only views of a project's stored responses for the dashboard (under /admin/v1): list, one, its input items, its stream. */
export function responsesAdminRoutes(app: App, ctx: Ctx): void {
  const tags = ['admin: responses'];
  app.get(
    '/projects/:project_id/responses',
    { schema: { tags, params: ProjectParams, querystring: AdminResponsesQuery, response: { 200: AdminResponseList } } },
    async (req) => {
      const { status, ...page } = req.query;
      return store.pageResponses(ctx.store.db, req.params.project_id, status, page, summary);
    },
  );
  app.get(
    '/projects/:project_id/responses/:response_id',
    { schema: { tags, params: ResponseParams, response: { 200: ResponseObject } } },
    async (req) => stored(ctx, req.params.project_id, req.params.response_id),
  );
  app.get(
    '/projects/:project_id/responses/:response_id/input_items',
    { schema: { tags, params: ResponseParams, querystring: ItemListQuery, response: { 200: ItemList } } },
    async (req) => {
      const { 'include[]': _include, ...query } = req.query;
      return listInputItems(ctx, req.params.project_id, req.params.response_id, query);
    },
  );
  // The stream of a background response created with `stream: true`, as kept for its followers (until retention drops it).
  app.get(
    '/projects/:project_id/responses/:response_id/events',
    { schema: { tags, params: ResponseParams, querystring: AdminEventsQuery, response: { 200: AdminResponseEvents } } },
    async (req) => {
      await stored(ctx, req.params.project_id, req.params.response_id);
      const limit = req.query.limit ?? 200;
      const rows = await eventsAfter(ctx.store.db, req.params.response_id, req.query.after ?? -1, limit + 1);
      return {
        object: 'list' as const,
        data: rows.slice(0, limit).map((r) => {
          const event = JSON.parse(r.data) as { type: string } & Record<string, unknown>;
          return { sequence_number: Number(r.seq), type: event.type, event };
        }),
        has_more: rows.length > limit,
      };
    },
  );
}
