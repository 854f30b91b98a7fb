import { ApiError } from '../core/errors.js';
import { ClaimLost, type JobClaim } from '../core/jobs.js';
import type { Ctx } from '../core/module.js';
import { nextTurn } from '../core/next-turn.js';
import { bytesOfFile, getFile } from '../files/service.js';
import { HOLD_RECHECK_MS, workHolds } from '../holds/service.js';
import { fromJson, runsTogetherAtOnce, toJson, type Tx } from '../store/db.js';
import type { Chunking } from './chunk.js';
import { builtinEmbedder, toBlob, type Embedder } from './embedder.js';
import { FileRefused } from './ingest-pool.js';
import { TEXT_PART, type Received } from './ingest-protocol.js';
import { segmentsOf } from './ingest-segments.js';
import type { Refusal } from './prepare.js';
import type { IngestPayload } from './service.js';
import * as store from './store.js';

/**
 * One file's ingestion (a job): read the file, have an ingestion process extract, chunk and (built-in
 * embedder) embed it within the limits (ingest-pool.ts), embed with an upstream embedder here if one is
 * configured, then — in one transaction, and only if the attachment is still current and in progress —
 * store the text and chunks and mark the file completed. A crash before that commit leaves nothing, and
 * the job runs again (idempotent); a cancel or delete meanwhile makes the commit a no-op. A file refused
 * (its type, its content, a limit) fails at once; anything else is tried again, and fails the file after
 * INGEST_ATTEMPTS: a file never stays in progress because its ingestion kept failing.
 */

/** The platform's file limit; what the upload limit lets through is read whole for extraction. */
const MAX_FILE_BYTES = 512 * 1024 * 1024;
/** After this many attempts an unexpected error (the embeddings server down …) fails the file. */
export const INGEST_ATTEMPTS = 5;

class Superseded extends Error {}

/** The most a file's ingestion writes (bytes of text and of vectors) to be sent in one go (store.ts ingestAtOnce). */
const AT_ONCE_BYTES = 1 << 16;

/** About the most a transaction of an ingestion writes (bytes of text and of vectors): SQLite commits that in a few milliseconds. */
const TRANSACTION_BYTES = 2 << 20;

/** Why a file cannot be ingested, or undefined for an error worth another attempt. */
function refusalOf(err: unknown, fileId: string): Refusal | undefined {
  if (err instanceof FileRefused) return err.refusal;
  if (err instanceof ApiError && err.status === 404) return { code: 'invalid_file', message: `The file ${fileId} no longer exists.` };
  if (err instanceof ApiError && err.code === 'file_too_large') return { code: 'invalid_file', message: err.message };
  return undefined;
}

/** Embeds in slices, yielding to the event loop between them so requests keep being answered. */
async function embedAll(embedder: Embedder, texts: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += 256) {
    out.push(...(await embedder.embed(texts.slice(i, i + 256))));
    await nextTurn();
  }
  return out;
}

/** Marks the attachment failed (if it is still the current one, in progress) with this `last_error`, and drops what it had written. */
export async function failIngestion(ctx: Ctx, payload: IngestPayload, error: { code: string; message: string }): Promise<void> {
  const key = { storeId: payload.vectorStoreId, fileId: payload.fileId, ingestId: payload.ingestId };
  await ctx.store.db.transaction().execute(async (tx) => {
    if (await store.endIngestion(tx, key, { status: 'failed', usage_bytes: 0, last_error: toJson(error) }))
      await store.clearIngested(tx, key.storeId, key.fileId);
  });
}

/**
 * Drops the rows an ingestion wrote before its file was cancelled or failed meanwhile (they were never
 * read: the file did not complete). Not after a new attachment of the file, which dropped them itself and
 * whose own ingestion writes under the same keys.
 */
async function dropAbandoned(ctx: Ctx, key: { storeId: string; fileId: string; ingestId: string }): Promise<void> {
  await ctx.store.db.transaction().execute(async (tx) => {
    const status = await store.attachmentStatus(tx, key);
    if (status === 'cancelled' || status === 'failed') await store.clearIngested(tx, key.storeId, key.fileId);
  });
}

/** What ends the file after the last attempt: the error that kept coming back. */
const givenUp = (attempts: number, err: unknown) => ({
  code: 'server_error',
  message: `Ingestion failed ${attempts} times; the last error: ${(err as Error)?.message ?? String(err)}`,
});

export async function ingestFile(
  ctx: Ctx,
  payload: IngestPayload,
  job: Pick<JobClaim, 'attempts'> & Partial<Pick<JobClaim, 'fence' | 'fenceQuery'>>,
): Promise<void | { retryAt: number; recheck?: boolean }> {
  const { vectorStoreId: storeId, fileId, ingestId } = payload;
  // The project's holds and the file, read with the attachment where the job names its project (on
  // PostgreSQL the three in one round trip): used only when the attachment is of that project (a job's
  // payload may come from a snapshot).
  const ofProject = (projectId: string) =>
    Promise.all([
      workHolds(ctx, projectId),
      getFile(ctx, projectId, fileId).then(
        (file) => ({ file }),
        (error: unknown) => ({ error }),
      ),
    ]);
  const [row, early] = await Promise.all([
    store.getStoreFile(ctx.store.db, storeId, fileId),
    typeof payload.projectId === 'string' ? ofProject(payload.projectId) : undefined,
  ]);
  if (!row || row.ingest_id !== ingestId) return;
  // Cancelled while an earlier attempt was writing (it stopped, say, in a crash): what it wrote goes.
  if (row.status !== 'in_progress') return row.status === 'cancelled' ? dropAbandoned(ctx, { storeId, fileId, ingestId }) : undefined;
  const [holds, fileRead] = early && payload.projectId === row.project_id ? early : await ofProject(row.project_id);
  // A project holding its ingestion (holds/): the file stays in_progress; look again later, not in a loop,
  // and not as an attempt (a long hold must not use up the file's attempts).
  if (holds.ingestionHeld) return { retryAt: ctx.clock.now() + HOLD_RECHECK_MS, recheck: true };
  const key = { storeId, fileId, ingestId };
  const started = performance.now();
  const embedder = ctx.services.vectorStores.embedder();
  let prepared: Received;
  /** Each chunk's vector as stored. */
  let vectors: Buffer[];
  try {
    if ('error' in fileRead) throw fileRead.error;
    const { file } = fileRead;
    const builtin = embedder === builtinEmbedder;
    prepared = await ctx.services.vectorStores.ingestion.run({
      filename: file.filename,
      // On this machine's disk the process reads the file itself; else it is read once a process is free (a
      // job waiting for one holds no bytes), or while it waits when small (ingest-pool.ts).
      data: () => bytesOfFile(ctx, file, MAX_FILE_BYTES),
      bytes: file.bytes,
      chunking: fromJson<Chunking>(row.chunking)!,
      embed: builtin,
    });
    vectors =
      prepared.vectors ??
      (
        await embedAll(
          embedder,
          Array.from(prepared.tokens, (_, i) => prepared.textOf(i)),
        )
      ).map(toBlob);
  } catch (err) {
    const refusal = refusalOf(err, fileId);
    const retried = !refusal && job.attempts < INGEST_ATTEMPTS;
    ctx.services.metrics?.ingestion(retried ? 'retried' : 'failed', started);
    if (retried) throw err;
    await failIngestion(ctx, payload, refusal ?? givenUp(job.attempts, err));
    return;
  }
  // The text cut at the chunks' edges: each chunk (a span of it) is stored as its run of segments.
  const { parts, spans, tokens, textOf } = prepared;
  const segments = segmentsOf(parts, spans);
  const rows: store.ChunkRow[] = Array.from(tokens, (count, seq) => {
    const from = segments.runs[2 * seq];
    return {
      vector_store_id: storeId,
      file_id: fileId,
      seq,
      text: from < 0 ? textOf(seq) : '',
      text_from: from < 0 ? null : from,
      text_to: from < 0 ? null : segments.runs[2 * seq + 1],
      tokens: count,
      embedding: vectors[seq],
      embedder: embedder.id,
    };
  });
  // The writes, in order, each with about the bytes it stores: what an earlier attempt of this ingestion
  // wrote dropped, the text's segments, the chunks (each step up to TEXT_PART bytes, and on
  // SQLite up to CHUNK_ROWS rows; on PostgreSQL a step is one COPY however many rows), then the
  // completion. A first attempt finds nothing to drop: the attachment dropped the file's earlier rows with
  // it (service.ts attach), and no other ingestion writes under this one's keys (stillIngesting); every
  // claim of the job counts as an attempt, so one after a crash or a stop midway is not the first
  // (core/jobs.ts).
  const steps: { bytes: number; run(tx: Tx): Promise<unknown> }[] =
    job.attempts > 1 ? [{ bytes: 0, run: (tx) => store.clearIngested(tx, storeId, fileId) }] : [];
  const stepRows = store.rowsAStatement(ctx.store.db);
  for (const [first, end, bytes] of stepsOf(segments.texts, (t) => t.length, stepRows)) {
    const texts = segments.texts.slice(first, end);
    steps.push({ bytes, run: (tx) => store.insertTextParts(tx, storeId, fileId, first, texts) });
  }
  for (const [first, end, bytes] of stepsOf(rows, (r) => r.text.length + r.embedding.length, stepRows)) {
    const batch = rows.slice(first, end);
    steps.push({ bytes, run: (tx) => store.insertChunks(tx, batch) });
  }
  const usage = parts.reduce((n, part) => n + part.length, 0);
  steps.push({ bytes: 0, run: (tx) => store.completeIngestion(tx, key, usage) });
  // A small file's first attempt on PostgreSQL: its writes sent as one transaction, in one round trip
  // where the steps take seven (store.ts ingestAtOnce). If it fails, for whatever reason, nothing of it was
  // kept, and the steps below run and find out why (the claim lost, the file cancelled, the store down).
  // Larger files keep to the pool's connections: a long statement on a pipelined one holds up those behind it.
  const db = ctx.store.db;
  if (job.attempts === 1 && job.fenceQuery && runsTogetherAtOnce(db) && steps.reduce((n, s) => n + s.bytes, 0) <= AT_ONCE_BYTES) {
    const wrote = await store.ingestAtOnce(db, key, job.fenceQuery(db), segments.texts, rows, usage).then(
      () => true,
      () => false,
    );
    if (wrote) {
      ctx.services.metrics?.ingestion('completed', started);
      return;
    }
  }
  try {
    // In transactions of about TRANSACTION_BYTES at most: a file's rows in one had SQLite write them all at
    // its commit, on the server's thread (100–160 ms for a file of 8 MB). Each writes only while this
    // ingestion is the file's current one and in progress, and while the worker holds its claim (one
    // whose claim lapsed, and whose file another instance took over, writes nothing). None of the rows is
    // read before the last one completes the file: their readers check each row's file (store.ts
    // readChunkPage and chunkTexts, search-source.ts).
    for (let i = 0; i < steps.length;) {
      let end = i + 1;
      for (let bytes = steps[i].bytes; end < steps.length && bytes + steps[end].bytes <= TRANSACTION_BYTES; end++)
        bytes += steps[end].bytes;
      const group = steps.slice(i, end);
      await ctx.store.db.transaction().execute(async (tx) => {
        await job.fence?.(tx);
        if (!(await store.stillIngesting(tx, key))) throw new Superseded();
        // A turn after each step, and after the commit: on SQLite a text part's statement, the commit and the
        // next transaction's first statement otherwise ran as one task of the server's thread.
        for (const step of group) {
          await step.run(tx);
          await nextTurn();
        }
      });
      await nextTurn();
      i = end;
    }
    ctx.services.metrics?.ingestion('completed', started);
  } catch (err) {
    const retried = job.attempts < INGEST_ATTEMPTS;
    const lost = err instanceof Superseded || err instanceof ClaimLost;
    ctx.services.metrics?.ingestion(lost ? 'superseded' : retried ? 'retried' : 'failed', started);
    if (err instanceof Superseded) await dropAbandoned(ctx, key);
    if (lost) return;
    // The store refused what was extracted (or is down): try again, and after the last attempt fail the
    // file rather than leave it in progress.
    if (retried) throw err;
    await failIngestion(ctx, payload, givenUp(job.attempts, err));
  }
}

/** Consecutive runs of `items` ([first, end, bytes]) of at most `rows` items and TEXT_PART bytes (an item larger alone). */
export function* stepsOf<T>(items: readonly T[], bytesOf: (item: T) => number, rows: number): Generator<[number, number, number]> {
  for (let i = 0; i < items.length;) {
    const first = i;
    let bytes = bytesOf(items[i++]);
    for (let b = 0; i < items.length && i - first < rows && bytes + (b = bytesOf(items[i])) <= TEXT_PART; i++) bytes += b;
    yield [first, i, bytes];
  }
}
