import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { BatchList, BatchObject, BatchParams, CreateBatchBody, ListBatchesQuery } from './schemas.js';
import { cancelBatch, createBatch, getBatch, listBatches } from './service.js';

/** `/v1/batches`: create, list, retrieve, cancel. */
export function batchesRoutes(app: App, ctx: Ctx): void {
  const tags = ['batches'];
  app.post(
    '/v1/batches',
    { config: needs('batch', 'write'), schema: { tags, body: CreateBatchBody, response: { 200: BatchObject } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      return createBatch(ctx, p, req.body);
    },
  );
  app.get(
    '/v1/batches',
    { config: needs('batch', 'read'), schema: { tags, querystring: ListBatchesQuery, response: { 200: BatchList } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      return listBatches(ctx, p.projectId, req.query);
    },
  );
  app.get(
    '/v1/batches/:batch_id',
    { config: needs('batch', 'read'), schema: { tags, params: BatchParams, response: { 200: BatchObject } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      return getBatch(ctx, p.projectId, req.params.batch_id);
    },
  );
  app.post(
    '/v1/batches/:batch_id/cancel',
    { config: needs('batch', 'write'), schema: { tags, params: BatchParams, response: { 200: BatchObject } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      return cancelBatch(ctx, p.projectId, req.params.batch_id);
    },
  );
}
