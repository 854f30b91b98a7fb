import { ApiError } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import { readFileBytes } from '../files/service.js';
import { fromJson, toJson } from '../store/db.js';
import { chunkText, TooManyTokens, type Chunking } from './chunk.js';
import { toBlob, type Embedder } from './embedder.js';
import { ExtractError, extractText } from './extract.js';
import type { IngestPayload } from './service.js';
import * as store from './store.js';

/**
 * One file's ingestion (a job): read the file, extract its text, chunk it by tokens, embed the chunks,
 * then — in one transaction, and only if the attachment is still current and in progress — store the
 * text and chunks and mark the file completed. A crash before that commit leaves nothing, and the job
 * runs again (idempotent); a cancel or delete meanwhile makes the commit a no-op.
 */

/** The platform's file limit; what the upload limit lets through is read whole for extraction. */
const MAX_FILE_BYTES = 512 * 1024 * 1024;
/** After this many attempts an unexpected error (the embeddings server down …) fails the file. */
export const INGEST_ATTEMPTS = 5;

class Superseded extends Error {}

/** Why a file cannot be ingested, or undefined for an error worth another attempt. */
function failureOf(err: unknown, fileId: string): { code: 'unsupported_file' | 'invalid_file'; message: string } | undefined {
  if (err instanceof ExtractError) return { code: err.code, message: err.message };
  if (err instanceof TooManyTokens) return { code: 'invalid_file', message: `The file ${fileId} is too large to index: ${err.message}.` };
  if (err instanceof ApiError && err.status === 404) return { code: 'invalid_file', message: `The file ${fileId} no longer exists.` };
  if (err instanceof ApiError && err.code === 'file_too_large') return { code: 'invalid_file', message: err.message };
  return undefined;
}

/** Embeds in slices, yielding to the event loop between them so requests keep being answered. */
async function embedAll(embedder: Embedder, texts: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += 256) {
    out.push(...(await embedder.embed(texts.slice(i, i + 256))));
    await new Promise((r) => setImmediate(r));
  }
  return out;
}

export async function ingestFile(ctx: Ctx, payload: IngestPayload, job: { attempts: number }): Promise<void> {
  const { vectorStoreId: storeId, fileId, ingestId } = payload;
  const row = await store.getStoreFile(ctx.store.db, storeId, fileId);
  if (!row || row.ingest_id !== ingestId || row.status !== 'in_progress') return;
  const key = { storeId, fileId, ingestId };
  const embedder = ctx.services.vectorStores.embedder();
  let text: string;
  let chunks: { text: string; tokens: number }[];
  let vectors: Float32Array[];
  try {
    const { file, data } = await readFileBytes(ctx, row.project_id, fileId, MAX_FILE_BYTES);
    text = await extractText(file.filename, data);
    if (!text.trim()) throw new ExtractError('invalid_file', `The file ${file.filename} holds no text to index.`);
    chunks = [...chunkText(text, fromJson<Chunking>(row.chunking)!)];
    await new Promise((r) => setImmediate(r));
    vectors = await embedAll(
      embedder,
      chunks.map((c) => c.text),
    );
  } catch (err) {
    let failure: { code: string; message: string } | undefined = failureOf(err, fileId);
    if (!failure) {
      if (job.attempts < INGEST_ATTEMPTS) throw err;
      failure = { code: 'server_error', message: `Ingestion failed ${job.attempts} times; the last error: ${(err as Error).message}` };
    }
    await store.endIngestion(ctx.store.db, key, { status: 'failed', usage_bytes: 0, last_error: toJson(failure) });
    return;
  }
  const rows: store.ChunkRow[] = chunks.map((c, seq) => ({
    vector_store_id: storeId,
    file_id: fileId,
    seq,
    text: c.text,
    tokens: c.tokens,
    embedding: toBlob(vectors[seq]),
    embedder: embedder.id,
  }));
  try {
    await ctx.store.db.transaction().execute(async (tx) => {
      if (!(await store.endIngestion(tx, key, { status: 'completed', usage_bytes: Buffer.byteLength(text), last_error: null })))
        throw new Superseded();
      await store.clearIngested(tx, storeId, fileId);
      await store.insertText(tx, storeId, fileId, text);
      await store.insertChunks(tx, rows);
      await store.bumpVersion(tx, [storeId]);
    });
  } catch (err) {
    if (!(err instanceof Superseded)) throw err;
  }
}
