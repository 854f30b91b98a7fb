import type { App, Ctx } from '../core/module.js';
import { ListOf, ProjectParams } from '../core/schemas.js';
import { AdminBatch, ListBatchesQuery } from './schemas.js';
import { listBatches, withProgress } from './service.js';

/** A project's batches for the dashboard (under /admin/v1): status, counts and progress, newest first. */
export function batchesAdminRoutes(app: App, ctx: Ctx) {
  app.get(
    '/projects/:project_id/batches',
    { schema: { tags: ['admin: batches'], params: ProjectParams, querystring: ListBatchesQuery, response: { 200: ListOf(AdminBatch) } } },
    async (req) => {
      const page = await listBatches(ctx, req.params.project_id, req.query);
      return { ...page, data: page.data.map(withProgress) };
    },
  );
}
