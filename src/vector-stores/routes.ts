import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { ingestionLimit } from './ratelimit.js';
import * as S from './schemas.js';
import * as svc from './service.js';

/** How soon a client polling an ingestion in progress should ask again (the SDKs' poll helpers read it). */
const POLL_AFTER_MS = '50';

/** `/v1/vector_stores…`: stores, their files and file batches, search. */
export function vectorStoresRoutes(app: App, ctx: Ctx): void {
  const tags = ['vector_stores'];
  const project = (req: FastifyRequest) => ctx.auth.principalOf(req).projectId;
  /** A write to a store's files or file batches: rate-limit rule 5, taken before the body is read. */
  const limited = ingestionLimit(ctx);
  const polled = <T extends { status: string }>(reply: FastifyReply, o: T) => {
    if (o.status === 'in_progress') reply.header('openai-poll-after-ms', POLL_AFTER_MS);
    return o;
  };

  // Stores
  app.post(
    '/v1/vector_stores',
    { config: needs('vector_stores', 'write'), schema: { tags, body: S.CreateVectorStoreBody, response: { 200: S.VectorStoreObject } } },
    async (req) => svc.createVectorStore(ctx, project(req), req.body),
  );
  app.get(
    '/v1/vector_stores',
    { config: needs('vector_stores', 'read'), schema: { tags, querystring: S.ListQuery, response: { 200: S.VectorStoreList } } },
    async (req) => svc.listVectorStores(ctx, project(req), req.query),
  );
  app.get(
    '/v1/vector_stores/:vector_store_id',
    { config: needs('vector_stores', 'read'), schema: { tags, params: S.StoreParams, response: { 200: S.VectorStoreObject } } },
    async (req, reply) => polled(reply, await svc.getVectorStore(ctx, project(req), req.params.vector_store_id)),
  );
  app.post(
    '/v1/vector_stores/:vector_store_id',
    {
      config: needs('vector_stores', 'write'),
      schema: { tags, params: S.StoreParams, body: S.ModifyVectorStoreBody, response: { 200: S.VectorStoreObject } },
    },
    async (req) => svc.modifyVectorStore(ctx, project(req), req.params.vector_store_id, req.body),
  );
  app.delete(
    '/v1/vector_stores/:vector_store_id',
    { config: needs('vector_stores', 'write'), schema: { tags, params: S.StoreParams, response: { 200: S.VectorStoreDeleted } } },
    async (req) => svc.deleteVectorStore(ctx, project(req), req.params.vector_store_id),
  );

  // Files of a store
  app.post(
    '/v1/vector_stores/:vector_store_id/files',
    {
      config: needs('vector_stores', 'write'),
      preParsing: limited,
      schema: { tags, params: S.StoreParams, body: S.CreateStoreFileBody, response: { 200: S.StoreFileObject } },
    },
    async (req, reply) => polled(reply, await svc.attachFile(ctx, project(req), req.params.vector_store_id, req.body)),
  );
  app.get(
    '/v1/vector_stores/:vector_store_id/files',
    {
      config: needs('vector_stores', 'read'),
      schema: { tags, params: S.StoreParams, querystring: S.ListFilesQuery, response: { 200: S.StoreFileList } },
    },
    async (req) => svc.listStoreFiles(ctx, project(req), req.params.vector_store_id, req.query),
  );
  app.get(
    '/v1/vector_stores/:vector_store_id/files/:file_id',
    { config: needs('vector_stores', 'read'), schema: { tags, params: S.StoreFileParams, response: { 200: S.StoreFileObject } } },
    async (req, reply) => polled(reply, await svc.getStoreFile(ctx, project(req), req.params.vector_store_id, req.params.file_id)),
  );
  app.post(
    '/v1/vector_stores/:vector_store_id/files/:file_id',
    {
      config: needs('vector_stores', 'write'),
      preParsing: limited,
      schema: { tags, params: S.StoreFileParams, body: S.UpdateAttributesBody, response: { 200: S.StoreFileObject } },
    },
    async (req) => svc.updateStoreFileAttributes(ctx, project(req), req.params.vector_store_id, req.params.file_id, req.body.attributes),
  );
  app.delete(
    '/v1/vector_stores/:vector_store_id/files/:file_id',
    {
      config: needs('vector_stores', 'write'),
      preParsing: limited,
      schema: { tags, params: S.StoreFileParams, response: { 200: S.StoreFileDeleted } },
    },
    async (req) => svc.deleteStoreFile(ctx, project(req), req.params.vector_store_id, req.params.file_id),
  );
  app.get(
    '/v1/vector_stores/:vector_store_id/files/:file_id/content',
    { config: needs('vector_stores', 'read'), schema: { tags, params: S.StoreFileParams, response: { 200: S.FileContentPage } } },
    async (req, reply) => {
      const page = await svc.storeFileContent(ctx, project(req), req.params.vector_store_id, req.params.file_id);
      return page instanceof Readable ? sendJsonStream(reply, page) : page;
    },
  );

  // File batches
  app.post(
    '/v1/vector_stores/:vector_store_id/file_batches',
    {
      config: needs('vector_stores', 'write'),
      preParsing: limited,
      schema: { tags, params: S.StoreParams, body: S.CreateBatchBody, response: { 200: S.BatchObject } },
    },
    async (req, reply) => polled(reply, await svc.createFileBatch(ctx, project(req), req.params.vector_store_id, req.body)),
  );
  app.get(
    '/v1/vector_stores/:vector_store_id/file_batches/:batch_id',
    { config: needs('vector_stores', 'read'), schema: { tags, params: S.BatchParams, response: { 200: S.BatchObject } } },
    async (req, reply) => polled(reply, await svc.getFileBatch(ctx, project(req), req.params.vector_store_id, req.params.batch_id)),
  );
  app.post(
    '/v1/vector_stores/:vector_store_id/file_batches/:batch_id/cancel',
    {
      config: needs('vector_stores', 'write'),
      preParsing: limited,
      schema: { tags, params: S.BatchParams, response: { 200: S.BatchObject } },
    },
    async (req) => svc.cancelFileBatch(ctx, project(req), req.params.vector_store_id, req.params.batch_id),
  );
  app.get(
    '/v1/vector_stores/:vector_store_id/file_batches/:batch_id/files',
    {
      config: needs('vector_stores', 'read'),
      schema: { tags, params: S.BatchParams, querystring: S.ListFilesQuery, response: { 200: S.StoreFileList } },
    },
    async (req) => svc.listBatchFiles(ctx, project(req), req.params.vector_store_id, req.params.batch_id, req.query),
  );

  // Search
  app.post(
    '/v1/vector_stores/:vector_store_id/search',
    {
      config: needs('vector_stores', 'read'),
      schema: { tags, params: S.StoreParams, body: S.SearchBody, response: { 200: S.SearchResultsPage } },
    },
    async (req) => svc.search(ctx, project(req), req.params.vector_store_id, req.body),
  );
}

/** A JSON reply written as it is read (service.ts storeFileContent): the schema's shape, not checked here. */
const sendJsonStream = (reply: FastifyReply, body: Readable) => reply.type('application/json; charset=utf-8').send(body);
