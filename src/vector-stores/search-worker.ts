import { parentPort, workerData } from 'node:worker_threads';
import { nextTurn } from '../core/next-turn.js';
import type { Attributes } from './filters.js';
import { words } from './lexical.js';
import { searchIndexes, StoreIndex, type ChunkPage } from './index-core.js';
import { prepareDir, restoreIndex, saveIndex, savedPath, sweepSaved } from './index-file.js';
import type { SaveTo, WorkerReply, WorkerRequest } from './search-protocol.js';
import { openSource, type ChunkKey, type ChunkRow, type Source, type SourceLocation } from './search-source.js';

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

/**
 * Saved indexes (index-file.ts): per store, where and as what version to save it, the version of its file
 * (null: none written by this worker, or a refused one) and the chunks changed since. A store is saved
 * after a whole load, and after deltas once RESAVE_VERSIONS versions or a tenth of its chunks changed
 * since its file (so a first load elsewhere applies few changes), one store at a time, in the background.
 */
interface SaveState {
  to: SaveTo;
  savedVersion: number | null;
  changed: number;
}
const RESAVE_VERSIONS = 100;
const saveStates = new Map<string, SaveState>();
const wanted = new Set<string>();
let saving = false;
/** Grows with every `clear`: a save begun before one is not renamed into place after it. */
let epoch = 0;
const dirs = new Map<string, Promise<string | null>>();
const dirReady = (dir: string) => {
  let p = dirs.get(dir);
  if (!p) dirs.set(dir, (p = prepareDir(dir)));
  return p;
};

/** After a load with a place to save: whether the store's file is due, and if so, queues it. */
function noteLoad(store: string, index: StoreIndex, to: SaveTo, full: boolean, changed: number): void {
  const state = (!full && saveStates.get(store)) || { to, savedVersion: null, changed: 0 };
  state.to = to;
  state.changed += changed;
  saveStates.set(store, state);
  if (index.size < Math.max(1, to.from)) return;
  if (state.savedVersion === null || to.version - state.savedVersion >= RESAVE_VERSIONS || state.changed >= index.size / 10) {
    wanted.add(store);
    void runSaves();
  }
}

async function runSaves(): Promise<void> {
  if (saving) return;
  saving = true;
  try {
    for (const store of wanted) {
      wanted.delete(store);
      const index = indexes.get(store);
      const state = saveStates.get(store);
      if (!index || !state || index.size < Math.max(1, state.to.from)) continue;
      const to = state.to;
      if (await dirReady(to.dir)) continue;
      const at = epoch;
      const ok = await saveIndex(
        savedPath(to.dir, to.who.source, store),
        to.who,
        { version: to.version, fingerprint: to.fingerprint },
        index,
        to.maxBytes,
        () => indexes.get(store) === index && epoch === at && saveStates.get(store) === state,
      );
      if (ok) {
        state.savedVersion = to.version;
        state.changed = 0;
      }
    }
  } finally {
    saving = false;
  }
}

function forget(store: string): void {
  indexes.delete(store);
  saveStates.delete(store);
  wanted.delete(store);
}

/** The requests that wait on the disk or the database. */
async function handleAsync(req: Extract<WorkerRequest, { op: 'restore' | 'sweep' | 'clear' }>): Promise<WorkerReply> {
  switch (req.op) {
    case 'restore': {
      const problem = await dirReady(req.dir);
      if (problem) return { id: req.id, bytes: 0, restored: { refused: problem } };
      const r = await restoreIndex(savedPath(req.dir, req.who.source, req.store), req.who, req.maxBytes, approximateFrom);
      if ('refused' in r) return { id: req.id, bytes: 0, restored: r };
      indexes.set(req.store, r.index);
      const to: SaveTo = { dir: req.dir, who: req.who, version: r.version, fingerprint: r.fingerprint, from: 0, maxBytes: req.maxBytes };
      saveStates.set(req.store, { to, savedVersion: r.version, changed: 0 });
      return { id: req.id, bytes: r.index.bytes(), restored: { version: r.version, fingerprint: r.fingerprint } };
    }
    case 'sweep': {
      if (await dirReady(req.dir)) return { id: req.id, bytes: 0 };
      const source = sourceOf(req.sourceLocation);
      await sweepSaved(req.dir, req.source, (ids) => source.existing(ids));
      return { id: req.id, bytes: 0 };
    }
    case 'clear':
      indexes.clear();
      saveStates.clear();
      wanted.clear();
      epoch++;
      return { id: req.id, bytes: 0 };
  }
}

function handle(req: Exclude<WorkerRequest, { op: 'load' | 'restore' | 'sweep' | 'clear' }>): WorkerReply {
  switch (req.op) {
    case 'reset':
      forget(req.store);
      indexes.set(req.store, new StoreIndex(approximateFrom));
      return { id: req.id, bytes: 0 };
    case 'drop':
      forget(req.store);
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
  let added = 0;
  const liveBefore = index.size;
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
    let after: ChunkKey | null = null;
    for (;;) {
      const { rows, next } = await source.chunks(req.store, after, PAGE, present);
      if (rows.length) index.addChunks(pageOf(rows, req.embedder, index.dimensions));
      pages++;
      added += rows.length;
      if (!next) break;
      after = next;
      // Searches of other stores go between two pages.
      await nextTurn();
    }
  }
  index.flush();
  // Chunks added, and those removed (the live count fell by them less the ones added).
  if (req.save) noteLoad(req.store, index, req.save, req.full, added + Math.max(0, liveBefore + added - index.size));
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
  if (req.op === 'restore' || req.op === 'sweep' || req.op === 'clear') {
    handleAsync(req).then((reply) => parentPort!.postMessage(reply), fail);
    return;
  }
  try {
    parentPort!.postMessage(handle(req));
  } catch (err) {
    fail(err);
  }
});
