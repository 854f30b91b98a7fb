import { parentPort, workerData } from 'node:worker_threads';
import type { Attributes } from './filters.js';
import { words } from './lexical.js';
import { searchIndexes, StoreIndex, type ChunkPage } from './index-core.js';
import type { WorkerReply, WorkerRequest } from './search-protocol.js';
import { openSource, type ChunkRow, type Source, type SourceLocation } from './search-source.js';

/**
 * The search worker (a thread started by index-cache.ts): holds this instance's store indexes and does
 * all the work on them — reading a store's rows over a connection of its own, tokenizing added chunks,
 * scoring, compaction — so none of it runs on the server's thread. Messages are handled in order; a load
 * lets other messages (searches of other stores) in between two pages of rows.
 */
const indexes = new Map<string, StoreIndex>();
const approximateFrom = (workerData as { approximateFrom: number }).approximateFrom || Infinity;
/** Chunks read at a time by a load. */
const PAGE = 2000;
/** Changed files read at a time. */
const FILES_PAGE = 500;

const sources = new Map<string, Source>();
function sourceOf(at: SourceLocation): Source {
  const key = JSON.stringify(at);
  let s = sources.get(key);
  if (!s) sources.set(key, (s = openSource(at)));
  return s;
}

function handle(req: Exclude<WorkerRequest, { op: 'load' }>): WorkerReply {
  switch (req.op) {
    case 'reset':
      indexes.set(req.store, new StoreIndex(approximateFrom));
      return { id: req.id, bytes: 0 };
    case 'drop':
      indexes.delete(req.store);
      return { id: req.id, bytes: 0 };
    case 'clear':
      indexes.clear();
      return { id: req.id, bytes: 0 };
    case 'files': {
      const index = indexes.get(req.store);
      if (!index) return { id: req.id, bytes: 0 };
      index.removeFiles(req.remove);
      index.setFiles(req.set);
      return { id: req.id, bytes: index.bytes() };
    }
    case 'chunks': {
      const index = indexes.get(req.store);
      if (!index) return { id: req.id, bytes: 0 };
      index.addChunks(req.page);
      return { id: req.id, bytes: index.bytes() };
    }
    case 'search': {
      const queries = req.queries.map((q) => ({ vector: q.vector, words: words(q.text) }));
      const hits = searchIndexes(
        req.stores.map((s) => indexes.get(s)),
        queries,
        req.options,
      );
      return { id: req.id, bytes: 0, hits };
    }
  }
}

/** Reads a store's rows (whole, or its changed files) into its index. */
async function load(req: Extract<WorkerRequest, { op: 'load' }>): Promise<WorkerReply> {
  const source = sourceOf(req.source);
  let index = indexes.get(req.store);
  if (req.full || !index) indexes.set(req.store, (index = new StoreIndex(approximateFrom)));
  let pages = 0;
  const groups: (string[] | undefined)[] = [];
  if (req.fileIds) for (let i = 0; i < req.fileIds.length; i += FILES_PAGE) groups.push(req.fileIds.slice(i, i + FILES_PAGE));
  else groups.push(undefined);
  for (const ids of groups) {
    const files = await source.files(req.store, ids);
    index.removeFiles(ids ?? []);
    index.setFiles(
      files.map(([id, filename, attributes]) => ({
        id,
        filename,
        attributes: attributes == null ? null : (JSON.parse(attributes) as Attributes),
      })),
    );
    if (ids && !files.length) continue;
    const present = ids ? files.map((f) => f[0]) : undefined;
    let after: { fileId: string; seq: number } | null = null;
    for (;;) {
      const rows = await source.chunks(req.store, after, PAGE, present);
      if (!rows.length) break;
      index.addChunks(pageOf(rows, req.embedder, index.dimensions));
      pages++;
      const last = rows[rows.length - 1];
      after = { fileId: last[0], seq: last[1] };
      if (rows.length < PAGE) break;
      // Searches of other stores go between two pages.
      await new Promise((r) => setImmediate(r));
    }
  }
  index.flush();
  return { id: req.id, bytes: index.bytes(), pages };
}

/** Chunk rows as the index takes them: vectors of the current embedder packed into one array. */
function pageOf(rows: ChunkRow[], embedder: string, dimensions: number): ChunkPage {
  let d = dimensions;
  if (!d) {
    const own = rows.find((r) => r[4] === embedder);
    if (own) d = own[3].length / 4;
  }
  const vectors = new Float32Array(rows.length * d);
  const bytes = new Uint8Array(vectors.buffer);
  const hasVector = new Uint8Array(rows.length);
  const fileIds = new Array<string>(rows.length);
  const seqs = new Array<number>(rows.length);
  const texts = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const [fileId, seq, text, embedding, by] = rows[i];
    fileIds[i] = fileId;
    seqs[i] = seq;
    texts[i] = text;
    if (d && by === embedder && embedding.length === d * 4) {
      // A blob's bytes need not be 4-byte aligned: copied as bytes.
      bytes.set(embedding, i * d * 4);
      hasVector[i] = 1;
    }
  }
  return { fileIds, seqs, texts, vectors, hasVector, dimensions: d };
}

parentPort!.on('message', (req: WorkerRequest) => {
  const fail = (err: unknown) =>
    parentPort!.postMessage({ id: req.id, bytes: 0, error: (err as Error)?.stack ?? String(err) } satisfies WorkerReply);
  if (req.op === 'load') {
    load(req).then((reply) => parentPort!.postMessage(reply), fail);
    return;
  }
  try {
    parentPort!.postMessage(handle(req));
  } catch (err) {
    fail(err);
  }
});
