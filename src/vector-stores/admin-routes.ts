import { Type } from 'typebox';
import type { App, Ctx } from '../core/module.js';
import { PathId, ProjectParams } from '../core/schemas.js';
import { ListFilesQuery, ListQuery, StoreFileList, VectorStoreList } from './schemas.js';
import * as svc from './service.js';

const StoreParams = Type.Object({ project_id: PathId, vector_store_id: PathId });

/** A project's vector stores (status, file counts, usage) and each store's files (status, last error), under /admin/v1. */
export function vectorStoresAdminRoutes(app: App, ctx: Ctx) {
  const tags = ['admin: vector stores'];
  app.get(
    '/projects/:project_id/vector_stores',
    { schema: { tags, params: ProjectParams, querystring: ListQuery, response: { 200: VectorStoreList } } },
    async (req) => svc.listVectorStores(ctx, req.params.project_id, req.query),
  );
  app.get(
    '/projects/:project_id/vector_stores/:vector_store_id/files',
    { schema: { tags, params: StoreParams, querystring: ListFilesQuery, response: { 200: StoreFileList } } },
    async (req) => svc.listStoreFiles(ctx, req.params.project_id, req.params.vector_store_id, req.query),
  );
}
