import { Readable } from 'node:stream';
import { invalid, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { Ctx } from '../core/module.js';
import { nextTurn } from '../core/next-turn.js';
import type { ListPage, ListParams } from '../core/pagination.js';
import { getFiles } from '../files/service.js';
import { toJson, type Exec, type Tx } from '../store/db.js';
import { AUTO_CHUNKING, type Chunking } from './chunk.js';
import { parseFilter, type Attributes } from './filters.js';
import { FileRefused } from './ingest-pool.js';
import { TEXT_PART } from './ingest-protocol.js';
import { words } from './lexical.js';
import { addCounts, batchObject, emptyCounts, isExpired, storeFileObject, vectorStoreObject, type Counts } from './objects.js';
import type {
  BatchObject,
  ChunkingStrategyParam,
  CreateBatchBody,
  CreateStoreFileBody,
  CreateVectorStoreBody,
  FileContentPage,
  ModifyVectorStoreBody,
  SearchBody,
  SearchResultsPage,
  StoreFileObject,
  VectorStoreObject,
} from './schemas.js';
import { searchVectorStores } from './search.js';
import * as store from './store.js';

/**
 * Vector stores: stores, their files and file batches, and search. Attaching a file queues its
 * ingestion (a job per file, ingest.ts), so any instance may do it and a restart resumes it.
 *
 * What other areas use (runs' file_search): `searchVectorStores`, `getVectorStore`, `createVectorStoreIn`,
 * `addFilesIn` and `existingVectorStoreIds`.
 */
export { searchVectorStores, type SearchHit, type SearchOptions } from './search.js';
export type { VectorStoreObject } from './schemas.js';
/** The search's `filters` and rankers, for the Responses API's file_search tool (one engine, one rule set). */
export { parseFilter, type Filter } from './filters.js';
export { RANKERS } from './schemas.js';
/** The embedders, for `/v1/embeddings` (the embeddings area). */
export { BUILTIN_DIMENSIONS, builtinEmbedder, normalize, type Embedder } from './embedder.js';

/**
 * The text of a file given to a model (an `input_file` of `/v1/responses`): extracted in an ingestion
 * process within the ingestion limits, exactly as a vector store's file is. A file that cannot be read is a 400.
 */
export async function extractFileText(ctx: Ctx, filename: string, data: Buffer, param: string): Promise<string> {
  try {
    return (await ctx.services.vectorStores.ingestion.run({ filename, data, chunking: AUTO_CHUNKING, embed: false })).text();
  } catch (err) {
    if (err instanceof FileRefused) throw invalid(err.refusal.message, param, err.refusal.code);
    throw err;
  }
}

/** The job kind of one file's ingestion. */
export const INGEST = 'vector_stores.ingest';
export interface IngestPayload {
  vectorStoreId: string;
  fileId: string;
  /** The attachment it serves (`vector_store_files.ingest_id`). */
  ingestId: string;
  /** The store's project (jobs queued before stop 66 have none): read with the attachment, used only when it is the attachment's. */
  projectId?: string;
}

/** The chunking of a request: `auto` (800/400), or `static` with an overlap of at most half the size. */
function chunkingOf(p: ChunkingStrategyParam | undefined, param = 'chunking_strategy'): Chunking {
  if (!p || p.type === 'auto') {
    if (p?.static)
      throw invalid(
        `Unrecognized request argument supplied: '${param}.static' (only with type 'static').`,
        `${param}.static`,
        'unknown_parameter',
      );
    return AUTO_CHUNKING;
  }
  if (!p.static) throw invalid(`Missing required parameter: '${param}.static'.`, `${param}.static`, 'missing_required_parameter');
  const { max_chunk_size_tokens: size, chunk_overlap_tokens: overlap } = p.static;
  if (overlap > size / 2) {
    throw invalid(
      `'${param}.static.chunk_overlap_tokens' must not exceed half of 'max_chunk_size_tokens' (${Math.floor(size / 2)}).`,
      `${param}.static.chunk_overlap_tokens`,
      'invalid_value',
    );
  }
  return { max_chunk_size_tokens: size, chunk_overlap_tokens: overlap };
}

async function countsOf(exec: Exec, ids: readonly string[]): Promise<Map<string, { counts: Counts; bytes: number }>> {
  const out = new Map(ids.map((id) => [id, { counts: emptyCounts(), bytes: 0 }]));
  for (const r of await store.fileCounts(exec, ids)) {
    const entry = out.get(r.vector_store_id)!;
    addCounts(entry.counts, r.status, r.n);
    entry.bytes += Number(r.bytes ?? 0);
  }
  return out;
}

async function objectOf(ctx: Ctx, exec: Exec, row: store.StoreRow): Promise<VectorStoreObject> {
  const { counts, bytes } = (await countsOf(exec, [row.id])).get(row.id)!;
  return vectorStoreObject(row, counts, bytes, ctx.clock.nowSeconds());
}

async function storeOf(exec: Exec, projectId: string, id: string): Promise<store.StoreRow> {
  const row = await store.getStore(exec, projectId, id);
  if (!row) throw notFound('vector store', id);
  return row;
}

/** A store new files may be attached to: not expired. */
async function liveStore(ctx: Ctx, exec: Exec, projectId: string, id: string): Promise<store.StoreRow> {
  const row = await storeOf(exec, projectId, id);
  if (isExpired(row, ctx.clock.nowSeconds()))
    throw invalid(`The vector store ${id} has expired; create a new one.`, 'vector_store_id', 'vector_store_expired');
  return row;
}

interface Attachment {
  fileId: string;
  chunking: Chunking;
  attributes?: Attributes | null;
  /** Where the file id came from in the request, for a 404's `param`. */
  param: string;
}

/** Files attached a round of statements (their rows, their earlier rows' look-up, their jobs): at most a few milliseconds of SQLite's. */
export const ATTACH_ROWS = 128;

/**
 * Attaches files (each again if it was already there: its earlier chunks go) and queues one ingestion
 * job per file in the same transaction. Every file must be a live file of the project. `now`: the
 * request's one instant (a store made with its files, or a batch, has one time for all it writes). A
 * file named twice is attached as the last names it (as if attached in turn: the first ingestion would
 * find itself replaced). ATTACH_ROWS files a statement of each kind, with a turn of the event loop
 * between: a statement a file (six round trips on PostgreSQL) held a batch of 1,024 files' request for
 * 0.7 s before any of them could be ingested.
 */
async function attach(
  ctx: Ctx,
  tx: Tx,
  row: store.StoreRow,
  items: Attachment[],
  batchId: string | null,
  now = ctx.clock.nowSeconds(),
): Promise<void> {
  const unique = [...new Map(items.map((item) => [item.fileId, item])).values()];
  for (let i = 0; i < unique.length; i += ATTACH_ROWS) {
    const slice = unique.slice(i, i + ATTACH_ROWS);
    const files = await getFiles(
      ctx,
      row.project_id,
      slice.map((item) => item.fileId),
      tx,
    );
    const missing = slice.find((item) => !files.has(item.fileId));
    if (missing) throw notFound('file', missing.fileId, missing.param);
    const attachments = slice.map((item) => ({
      vector_store_id: row.id,
      file_id: item.fileId,
      project_id: row.project_id,
      filename: files.get(item.fileId)!.filename,
      status: 'in_progress' as const,
      usage_bytes: 0,
      created_at: now,
      last_error: null,
      chunking: JSON.stringify(item.chunking),
      attributes: toJson(item.attributes ?? null),
      batch_id: batchId,
      ingest_id: newId('ingest', ctx.clock),
    }));
    // The attachments before their old rows go (store.ts stillIngesting: an earlier ingestion of each stops).
    await store.upsertStoreFiles(tx, attachments);
    await store.clearIngestedAll(
      tx,
      row.id,
      slice.map((item) => item.fileId),
    );
    const payloads = attachments.map((a): IngestPayload => ({
      vectorStoreId: row.id,
      fileId: a.file_id,
      ingestId: a.ingest_id,
      projectId: row.project_id,
    }));
    await ctx.jobs.enqueueAll(tx, INGEST, payloads);
    await nextTurn();
  }
  if (items.length) {
    await store.bumpVersion(
      tx,
      row.id,
      items.map((i) => i.fileId),
    );
    await store.touchStore(tx, row.id, now);
  }
}

// Stores

/** `POST /v1/vector_stores`. */
export async function createVectorStore(ctx: Ctx, projectId: string, body: CreateVectorStoreBody): Promise<VectorStoreObject> {
  return ctx.store.db.transaction().execute((tx) => createVectorStoreIn(ctx, tx, projectId, body));
}

/**
 * Creates a store in the caller's transaction (runs: the `vector_stores` helper, a thread's store of
 * message attachments). `madeForThread`: the thread it is made for, which takes it along when deleted.
 */
export async function createVectorStoreIn(
  ctx: Ctx,
  tx: Tx,
  projectId: string,
  body: CreateVectorStoreBody,
  opts: { madeForThread?: string } = {},
): Promise<VectorStoreObject> {
  const chunking = chunkingOf(body.chunking_strategy);
  const now = ctx.clock.nowSeconds();
  const row: store.StoreRow = {
    id: newId('vs', ctx.clock),
    project_id: projectId,
    name: body.name ?? '',
    description: body.description ?? null,
    created_at: now,
    last_active_at: now,
    expires_after: toJson(body.expires_after ?? null),
    metadata: toJson(body.metadata ?? null),
    index_version: 0,
    made_for_thread: opts.madeForThread ?? null,
  };
  await store.insertStore(tx, row);
  await attach(
    ctx,
    tx,
    row,
    (body.file_ids ?? []).map((fileId, i) => ({ fileId, chunking, param: `file_ids[${i}]` })),
    null,
    now,
  );
  return objectOf(ctx, tx, row);
}

/**
 * Adds files to a live store of the project in the caller's transaction (runs: a message's file_search
 * attachments join its thread's store), with auto chunking; files already in the store stay as they are.
 * `param` names each file id for a 404.
 */
export async function addFilesIn(
  ctx: Ctx,
  tx: Tx,
  projectId: string,
  storeId: string,
  files: readonly { fileId: string; param: string }[],
): Promise<void> {
  const row = await liveStore(ctx, tx, projectId, storeId);
  const items: Attachment[] = [];
  for (const f of files) {
    if (!(await store.getStoreFile(tx, storeId, f.fileId))) items.push({ fileId: f.fileId, chunking: AUTO_CHUNKING, param: f.param });
  }
  await attach(ctx, tx, row, items, null);
}

/** Which of `ids` are vector stores of the project (expired ones included). */
export async function existingVectorStoreIds(exec: Exec, projectId: string, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const id of new Set(ids)) if (await store.getStore(exec, projectId, id)) found.add(id);
  return found;
}

/** The project of a vector store (expired ones included), found by its id alone; undefined when none. */
export const locateVectorStore = (exec: Exec, id: string): Promise<{ project_id: string } | undefined> => store.storeProject(exec, id);

export async function getVectorStore(ctx: Ctx, projectId: string, id: string): Promise<VectorStoreObject> {
  return objectOf(ctx, ctx.store.db, await storeOf(ctx.store.db, projectId, id));
}

export async function listVectorStores(ctx: Ctx, projectId: string, params: ListParams): Promise<ListPage<VectorStoreObject>> {
  const page = await store.listStores(ctx.store.db, projectId, params);
  const counts = await countsOf(
    ctx.store.db,
    page.data.map((r) => r.id),
  );
  const now = ctx.clock.nowSeconds();
  return { ...page, data: page.data.map((r) => vectorStoreObject(r, counts.get(r.id)!.counts, counts.get(r.id)!.bytes, now)) };
}

export async function modifyVectorStore(ctx: Ctx, projectId: string, id: string, body: ModifyVectorStoreBody): Promise<VectorStoreObject> {
  return ctx.store.db.transaction().execute(async (tx) => {
    const row = await storeOf(tx, projectId, id);
    const patch: Partial<store.StoreRow> = {};
    if (body.name !== undefined) patch.name = body.name ?? '';
    if (body.expires_after !== undefined) patch.expires_after = toJson(body.expires_after);
    if (body.metadata !== undefined) patch.metadata = toJson(body.metadata);
    if (Object.keys(patch).length) await store.updateStore(tx, id, patch);
    return objectOf(ctx, tx, { ...row, ...patch });
  });
}

export async function deleteVectorStore(ctx: Ctx, projectId: string, id: string) {
  await ctx.store.db.transaction().execute(async (tx) => {
    await storeOf(tx, projectId, id);
    await store.deleteStore(tx, id);
  });
  // Its saved index goes with it here; other instances' sweeps remove theirs (index-cache.ts).
  await ctx.services.vectorStores.indexes.forget(ctx, id);
  return { id, object: 'vector_store.deleted' as const, deleted: true };
}

/** The stores Standin made for a thread (the helper's, its attachments'), whether still attached to it or not. */
export function vectorStoresMadeFor(exec: Exec, projectId: string, threadId: string): Promise<string[]> {
  return store.storesMadeFor(exec, projectId, threadId);
}

/** Deletes stores of the project, with their files' chunks, in the caller's transaction (a deleted thread's own). */
export async function deleteVectorStoresIn(tx: Tx, projectId: string, ids: readonly string[]): Promise<void> {
  for (const id of ids) if (await store.getStore(tx, projectId, id)) await store.deleteStore(tx, id);
}

// Files of a store

export async function attachFile(ctx: Ctx, projectId: string, storeId: string, body: CreateStoreFileBody): Promise<StoreFileObject> {
  const chunking = chunkingOf(body.chunking_strategy);
  return ctx.store.db.transaction().execute(async (tx) => {
    const row = await liveStore(ctx, tx, projectId, storeId);
    await attach(ctx, tx, row, [{ fileId: body.file_id, chunking, attributes: body.attributes, param: 'file_id' }], null);
    return storeFileObject((await store.getStoreFile(tx, storeId, body.file_id))!);
  });
}

async function storeFileOf(exec: Exec, storeId: string, fileId: string): Promise<store.StoreFileRow> {
  const row = await store.getStoreFile(exec, storeId, fileId);
  if (!row) throw notFound('vector store file', fileId);
  return row;
}

export async function getStoreFile(ctx: Ctx, projectId: string, storeId: string, fileId: string): Promise<StoreFileObject> {
  await storeOf(ctx.store.db, projectId, storeId);
  return storeFileObject(await storeFileOf(ctx.store.db, storeId, fileId));
}

export async function listStoreFiles(
  ctx: Ctx,
  projectId: string,
  storeId: string,
  params: ListParams & { filter?: string },
): Promise<ListPage<StoreFileObject>> {
  await storeOf(ctx.store.db, projectId, storeId);
  const page = await store.listStoreFiles(ctx.store.db, storeId, params);
  return { ...page, data: page.data.map(storeFileObject) };
}

/** `POST /v1/vector_stores/{id}/files/{file_id}`: replaces the file's attributes (search filters see them at once). */
export async function updateStoreFileAttributes(
  ctx: Ctx,
  projectId: string,
  storeId: string,
  fileId: string,
  attributes: Attributes | null,
): Promise<StoreFileObject> {
  return ctx.store.db.transaction().execute(async (tx) => {
    await storeOf(tx, projectId, storeId);
    const row = await storeFileOf(tx, storeId, fileId);
    await store.setAttributes(tx, storeId, fileId, toJson(attributes));
    await store.bumpVersion(tx, storeId, [fileId]);
    return storeFileObject({ ...row, attributes: toJson(attributes) });
  });
}

/** Removes a file from a store (its chunks with it); the file itself stays. */
export async function deleteStoreFile(ctx: Ctx, projectId: string, storeId: string, fileId: string) {
  await ctx.store.db.transaction().execute(async (tx) => {
    await storeOf(tx, projectId, storeId);
    if (!(await store.deleteStoreFile(tx, storeId, fileId))) throw notFound('vector store file', fileId);
    await store.bumpVersion(tx, storeId, [fileId]);
  });
  return { id: fileId, object: 'vector_store.file.deleted' as const, deleted: true };
}

/** Parts of a text read a statement at most. */
const CONTENT_PARTS = 256;

/**
 * The text extracted from a file of the store (empty until its ingestion completed). A text is sent as
 * JSON written a few parts at a time (its parts as stored, about TEXT_PART characters a statement): a
 * text of 100 MB is neither one string nor one JSON encoding on the server's thread. The reply is the
 * one JSON document it would be otherwise.
 */
export async function storeFileContent(ctx: Ctx, projectId: string, storeId: string, fileId: string): Promise<FileContentPage | Readable> {
  await storeOf(ctx.store.db, projectId, storeId);
  const file = await storeFileOf(ctx.store.db, storeId, fileId);
  // A file's text counts once its ingestion completed (it is written over several transactions).
  const parts = file.status === 'completed' ? await store.countTextParts(ctx.store.db, storeId, fileId) : 0;
  if (!parts) return { object: 'vector_store.file_content.page', data: [], has_more: false, next_page: null };
  const db = ctx.store.db;
  return Readable.from(
    (async function* () {
      yield Buffer.from('{"object":"vector_store.file_content.page","data":[{"type":"text","text":"');
      // About TEXT_PART characters a statement: one part of a text stored before its chunks' edges cut it,
      // a hundred or so of one cut at them (a part per chunk's half), judged from the parts read so far.
      let read = 0;
      let chars = 0;
      for (let part = 0; part < parts;) {
        const count = read ? Math.max(1, Math.min(CONTENT_PARTS, Math.floor((TEXT_PART * read) / Math.max(1, chars)))) : 1;
        const texts = await store.readTextParts(db, { storeId, fileId, ingestId: file.ingest_id }, part, Math.min(parts, part + count) - 1);
        // Ingested again or removed meanwhile: the reply is cut rather than made of two texts.
        if (texts === undefined) throw new Error(`the file ${fileId} changed while its content was being sent`);
        let text = '';
        for (const t of texts) text += t;
        yield Buffer.from(JSON.stringify(text).slice(1, -1));
        part += texts.length;
        read += texts.length;
        chars += text.length;
        await nextTurn();
      }
      yield Buffer.from('"}],"has_more":false,"next_page":null}');
    })(),
  );
}

/** Runs in the transaction deleting a file (files area): the file leaves every store of its project. */
export async function forgetDeletedFile(tx: Tx, projectId: string, fileId: string): Promise<void> {
  const stores = await store.storesOfFile(tx, projectId, fileId);
  for (const id of stores) {
    await store.deleteStoreFile(tx, id, fileId);
    await store.bumpVersion(tx, id, [fileId]);
  }
}

// Batches

async function batchObjectOf(exec: Exec, row: store.BatchRow): Promise<BatchObject> {
  const counts = emptyCounts();
  for (const r of await store.batchCounts(exec, row.id)) addCounts(counts, r.status, r.n);
  return batchObject(row, counts);
}

async function batchOf(exec: Exec, projectId: string, storeId: string, batchId: string): Promise<store.BatchRow> {
  await storeOf(exec, projectId, storeId);
  const row = await store.getBatch(exec, storeId, batchId);
  if (!row) throw notFound('vector store file batch', batchId);
  return row;
}

/**
 * `POST …/file_batches`: `file_ids` share the request's `chunking_strategy` and `attributes`; with
 * `files`, each item carries its own and the request-level ones are ignored (as the OpenAPI document says).
 */
export async function createFileBatch(ctx: Ctx, projectId: string, storeId: string, body: CreateBatchBody): Promise<BatchObject> {
  if ((body.file_ids === undefined) === (body.files === undefined)) {
    throw body.file_ids === undefined
      ? invalid("Missing required parameter: 'file_ids' (or 'files').", 'file_ids', 'missing_required_parameter')
      : invalid("Give either 'file_ids' or 'files', not both.", 'files', 'invalid_value');
  }
  let items: Attachment[];
  if (body.file_ids) {
    const chunking = chunkingOf(body.chunking_strategy);
    items = body.file_ids.map((fileId, i) => ({ fileId, chunking, attributes: body.attributes, param: `file_ids[${i}]` }));
  } else {
    items = body.files!.map((f, i) => ({
      fileId: f.file_id,
      chunking: chunkingOf(f.chunking_strategy, `files[${i}].chunking_strategy`),
      attributes: f.attributes,
      param: `files[${i}].file_id`,
    }));
  }
  return ctx.store.db.transaction().execute(async (tx) => {
    const row = await liveStore(ctx, tx, projectId, storeId);
    const batch: store.BatchRow = {
      id: newId('vsfb', ctx.clock),
      vector_store_id: storeId,
      project_id: projectId,
      created_at: ctx.clock.nowSeconds(),
      cancelled_at: null,
    };
    await store.insertBatch(tx, batch);
    await attach(ctx, tx, row, items, batch.id, batch.created_at);
    return batchObjectOf(tx, batch);
  });
}

export async function getFileBatch(ctx: Ctx, projectId: string, storeId: string, batchId: string): Promise<BatchObject> {
  return batchObjectOf(ctx.store.db, await batchOf(ctx.store.db, projectId, storeId, batchId));
}

/** Cancels a batch in progress: its files not yet ingested end `cancelled` (their jobs then do nothing). */
export async function cancelFileBatch(ctx: Ctx, projectId: string, storeId: string, batchId: string): Promise<BatchObject> {
  return ctx.store.db.transaction().execute(async (tx) => {
    const row = await batchOf(tx, projectId, storeId, batchId);
    const before = await batchObjectOf(tx, row);
    if (before.status === 'cancelled') return before;
    if (before.status !== 'in_progress')
      throw invalid(`The batch ${batchId} is ${before.status} and can no longer be cancelled.`, null, 'batch_not_in_progress');
    const cancelledAt = ctx.clock.nowSeconds();
    await store.cancelBatch(tx, batchId, cancelledAt);
    return batchObjectOf(tx, { ...row, cancelled_at: cancelledAt });
  });
}

export async function listBatchFiles(
  ctx: Ctx,
  projectId: string,
  storeId: string,
  batchId: string,
  params: ListParams & { filter?: string },
): Promise<ListPage<StoreFileObject>> {
  await batchOf(ctx.store.db, projectId, storeId, batchId);
  const page = await store.listStoreFiles(ctx.store.db, storeId, { ...params, batchId });
  return { ...page, data: page.data.map(storeFileObject) };
}

// Search

/** `rewrite_query`: the query's words, lowercased, without punctuation and function words (no model is asked). */
const rewrite = (q: string) => words(q).join(' ') || q.trim();

/** `POST /v1/vector_stores/{id}/search`: one page of the best chunks (results stop at `max_num_results`). */
export async function search(ctx: Ctx, projectId: string, storeId: string, body: SearchBody): Promise<SearchResultsPage> {
  const filters = body.filters === undefined ? undefined : parseFilter(body.filters);
  let queries = typeof body.query === 'string' ? [body.query] : body.query;
  if (body.rewrite_query) queries = queries.map(rewrite);
  const hits = await searchVectorStores(ctx, projectId, [storeId], queries, {
    maxNumResults: body.max_num_results,
    rankingOptions: body.ranking_options,
    filters,
  });
  return {
    object: 'vector_store.search_results.page',
    search_query: queries,
    data: hits.map((h) => ({
      file_id: h.file_id,
      filename: h.filename,
      score: h.score,
      attributes: h.attributes,
      content: [{ type: 'text' as const, text: h.text }],
    })),
    has_more: false,
    next_page: null,
  };
}
