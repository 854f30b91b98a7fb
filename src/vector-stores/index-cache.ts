import { Worker } from 'node:worker_threads';
import type { Ctx } from '../core/module.js';
import { nextTurn } from '../core/next-turn.js';
import { fromJson } from '../store/db.js';
import type { Embedder } from './embedder.js';
import { entryScript } from './entry-script.js';
import type { Attributes, Filter } from './filters.js';
import type { Candidate, ChunkPage } from './index-core.js';
import { clearSaved, fingerprintOf, removeSaved, sourceKey } from './index-file.js';
import type { SaveTo, WorkerReply, WorkerRequest } from './search-protocol.js';
import * as store from './store.js';

/**
 * This instance's search indexes (docs/files.md, "Retrieval"): held in a worker thread (search-worker.ts),
 * which reads the chunks over a connection of its own, tokenizes, indexes and scores, so the server's
 * thread only reads a store's version and its change log (an in-memory SQLite store, which no other
 * thread can open, is read here and handed over a page at a time). A store's index follows its
 * `index_version`: an index at version v applies only the files `vector_store_changes` logs after v; it
 * is loaded whole only when first searched here, after the embedder changed, or when it fell further
 * behind than the log keeps. Indexes of all stores together hold at most `memoryBytes` between searches,
 * the least recently searched leaving first; the most recently searched store stays even when it alone
 * is larger than the budget (else each of its searches would load it again).
 */
export interface IndexCache {
  /** The best chunks of the stores for the queries, each store's index brought up to date first. */
  search(
    ctx: Ctx,
    rows: readonly store.StoreRow[],
    embedder: Embedder,
    queries: { vector: Float32Array | null; text: string }[],
    options: { ranker: string; filter?: Filter; max: number; threshold: number },
  ): Promise<(Candidate & { store: number })[]>;
  /** Forgets every index (the worker keeps running), and removes the saved indexes of `ctx`'s database. */
  clear(ctx?: Ctx): Promise<void>;
  /** Forgets a deleted store's index and removes its saved file. */
  forget(ctx: Ctx, storeId: string): Promise<void>;
  /** Ends the worker. */
  close(): Promise<void>;
  /** What is held and what was done (tests, the bench). */
  stats(): IndexStats;
}

export interface IndexStats {
  stores: number;
  bytes: number;
  /** Stores loaded whole, deltas applied, chunk pages the worker indexed (read by it or handed to it). */
  fullLoads: number;
  /** Stores loaded from their saved index (then brought up to date by a delta). */
  restores: number;
  deltas: number;
  pages: number;
  /** The worker thread's id (0 before it started). */
  workerThreadId: number;
}

/** Chunks read and handed to the worker at a time. */
const PAGE = 500;
/** Files whose rows are read at a time. */
const FILES_PAGE = 100;

interface Held {
  version: number;
  embedder: string;
  dimensions: number;
  bytes: number;
  /** The worker it lives in (a worker that died took its indexes along). */
  generation: number;
}

/** Saved indexes (index-file.ts): the folder, and the live chunks from which a store's index is saved. */
export interface SavedIndexes {
  dir: string;
  from: number;
}

/** Searches between two sweeps of saved indexes whose stores were deleted (on any instance). */
const SWEEP_EVERY_MS = 3_600_000;

export function createIndexCache(opts: { memoryBytes: number; approximateFrom?: number; saved?: SavedIndexes }): IndexCache {
  let worker: Worker | undefined;
  let generation = 0;
  let nextId = 1;
  const pending = new Map<number, { resolve(r: WorkerReply): void; reject(e: Error): void }>();
  /** Map order is recency order. */
  const held = new Map<string, Held>();
  const locks = new Map<string, Promise<void>>();
  const inUse = new Map<string, number>();
  const stats = { fullLoads: 0, restores: 0, deltas: 0, pages: 0, workerThreadId: 0 };
  let sweptAt = -Infinity;

  /** Where this store's index is saved, and as what (none for an in-memory store, or when switched off). */
  function saveTo(ctx: Ctx, row: store.StoreRow, embedder: string, fingerprint: string): SaveTo | undefined {
    const at = ctx.store.location;
    if (!opts.saved || !at || !opts.memoryBytes) return undefined;
    return {
      dir: opts.saved.dir,
      who: { store: row.id, createdAt: Number(row.created_at), source: sourceKey(at), embedder },
      version: row.index_version,
      fingerprint,
      from: opts.saved.from,
      maxBytes: opts.memoryBytes,
    };
  }

  function start(): Worker {
    const w = new Worker(entryScript('search-worker'), { workerData: { approximateFrom: opts.approximateFrom ?? 0 } });
    generation++;
    stats.workerThreadId = w.threadId;
    w.on('message', (r: WorkerReply) => {
      const p = pending.get(r.id);
      pending.delete(r.id);
      if (!pending.size) w.unref();
      if (r.error) p?.reject(new Error(`the search worker failed: ${r.error}`));
      else p?.resolve(r);
    });
    const gone = (err: Error) => {
      if (worker !== w) return;
      worker = undefined;
      held.clear();
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    };
    w.on('error', gone);
    w.on('exit', (code) => gone(new Error(`the search worker exited (${code})`)));
    return w;
  }

  function call(req: DistributiveOmit<WorkerRequest, 'id'>, transfer: ArrayBuffer[] = []): Promise<WorkerReply> {
    const w = (worker ??= start());
    const id = nextId++;
    w.ref();
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      w.postMessage({ ...req, id }, transfer);
    });
  }

  /** Runs `fn` holding the stores' locks (taken in id order, so two searches never wait on each other). */
  async function locked<T>(ids: readonly string[], fn: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(ids)].sort();
    const releases: (() => void)[] = [];
    try {
      for (const id of sorted) {
        const prev = locks.get(id);
        let release!: () => void;
        const mine = new Promise<void>((r) => (release = r));
        const chained = (prev ?? Promise.resolve()).then(() => mine);
        locks.set(id, chained);
        releases.push(() => {
          release();
          if (locks.get(id) === chained) locks.delete(id);
        });
        await prev;
      }
      return await fn();
    } finally {
      for (const r of releases) r();
    }
  }

  /** Drops the least recently searched indexes not in use until the rest fit the budget. */
  function evict(): void {
    let total = 0;
    for (const h of held.values()) total += h.bytes;
    let left = held.size;
    for (const [id, h] of held) {
      // The most recently searched store (last in the map) stays.
      if (total <= opts.memoryBytes || --left === 0) break;
      if (inUse.get(id)) continue;
      held.delete(id);
      total -= h.bytes;
      void call({ op: 'drop', store: id }).catch(() => {});
    }
  }

  async function load(ctx: Ctx, storeId: string, embedder: string, h: Held, fileIds?: string[], save?: SaveTo): Promise<void> {
    const source = ctx.store.location;
    if (source) {
      const reply = await call({ op: 'load', store: storeId, source, embedder, full: !fileIds, fileIds, save });
      h.bytes = reply.bytes;
      stats.pages += reply.pages ?? 0;
      return;
    }
    const db = ctx.store.db;
    const metasOf = (rows: Awaited<ReturnType<typeof store.readIndexedFiles>>) =>
      rows.map((f) => ({ id: f.file_id, filename: f.filename, attributes: fromJson<Attributes>(f.attributes) }));
    const groups: (string[] | undefined)[] = [];
    if (fileIds) for (let i = 0; i < fileIds.length; i += FILES_PAGE) groups.push(fileIds.slice(i, i + FILES_PAGE));
    else groups.push(undefined);
    for (const ids of groups) {
      const metas = metasOf(await store.readIndexedFiles(db, storeId, ids));
      h.bytes = (await call({ op: 'files', store: storeId, remove: ids ?? [], set: metas })).bytes;
      const present = ids ? metas.map((m) => m.id) : undefined;
      if (present && !present.length) continue;
      let after: { fileId: string; seq: number } | null = null;
      for (;;) {
        const { rows, next } = await store.readChunkPage(db, storeId, after, PAGE, present);
        if (rows.length) {
          const page = pageOf(rows, embedder, h);
          h.bytes = (await call({ op: 'chunks', store: storeId, page }, [page.vectors.buffer as ArrayBuffer])).bytes;
        }
        stats.pages++;
        if (!next) break;
        after = next;
        // Requests waiting on the server's thread go between two pages.
        await nextTurn();
      }
    }
  }

  /** Brings a store's index to the row's version: its changed files, or whole. */
  async function sync(ctx: Ctx, row: store.StoreRow, embedder: Embedder): Promise<void> {
    const h = held.get(row.id);
    if (h && (h.generation !== generation || h.embedder !== embedder.id)) held.delete(row.id);
    else if (h) {
      held.delete(row.id);
      held.set(row.id, h);
      if (h.version >= row.index_version) return;
      const changes = await store.readChanges(ctx.store.db, row.id, h.version, row.index_version);
      if (new Set(changes.map((c) => c.version)).size === row.index_version - h.version) {
        const last = fingerprintOf(changes.filter((c) => c.version === row.index_version).map((c) => c.file_id));
        await load(ctx, row.id, embedder.id, h, [...new Set(changes.map((c) => c.file_id))], saveTo(ctx, row, embedder.id, last));
        h.version = row.index_version;
        stats.deltas++;
        return;
      }
    }
    // The worker started first: the index lives in this generation of it.
    worker ??= start();
    if (!ctx.store.location) await call({ op: 'reset', store: row.id });
    const fresh: Held = { version: row.index_version, embedder: embedder.id, dimensions: 0, bytes: 0, generation };
    held.set(row.id, fresh);
    const save = saveTo(ctx, row, embedder.id, '');
    if (save && (await restore(ctx, row, embedder, fresh, save))) return;
    if (save) {
      const logged = await store.readChanges(ctx.store.db, row.id, row.index_version - 1, row.index_version);
      save.fingerprint = fingerprintOf(logged.map((c) => c.file_id));
    }
    await load(ctx, row.id, embedder.id, fresh, undefined, save);
    stats.fullLoads++;
  }

  /**
   * Loads a store from its saved index, if the worker finds one that passes its checks, the change log
   * still reaches back to its version, and what that version logged is what the file says (a store whose
   * history diverged, a backup restored, does not match); then applies the changes since as a delta.
   * False: nothing usable, the store is to be loaded whole (which replaces whatever the worker read).
   */
  async function restore(ctx: Ctx, row: store.StoreRow, embedder: Embedder, h: Held, save: SaveTo): Promise<boolean> {
    const reply = await call({ op: 'restore', store: row.id, dir: save.dir, who: save.who, maxBytes: save.maxBytes });
    const r = reply.restored;
    if (!r || 'refused' in r || r.version > row.index_version) return false;
    const changes = await store.readChanges(ctx.store.db, row.id, r.version - 1, row.index_version);
    const at = changes.filter((c) => c.version === r.version).map((c) => c.file_id);
    const later = changes.filter((c) => c.version > r.version);
    if (fingerprintOf(at) !== r.fingerprint || new Set(later.map((c) => c.version)).size !== row.index_version - r.version) return false;
    h.bytes = reply.bytes;
    stats.restores++;
    if (later.length) {
      const last = fingerprintOf(changes.filter((c) => c.version === row.index_version).map((c) => c.file_id));
      await load(ctx, row.id, embedder.id, h, [...new Set(later.map((c) => c.file_id))], { ...save, fingerprint: last });
      stats.deltas++;
    }
    return true;
  }

  /** Now and then (the first search, then hourly), removes saved indexes of stores deleted on any instance. */
  function sweep(ctx: Ctx): void {
    const at = ctx.store.location;
    const now = performance.now();
    if (!opts.saved || !at || now - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = now;
    void call({ op: 'sweep', dir: opts.saved.dir, sourceLocation: at, source: sourceKey(at) }).catch(() => {});
  }

  return {
    async search(ctx, rows, embedder, queries, options) {
      const ids = rows.map((r) => r.id);
      sweep(ctx);
      for (const id of ids) inUse.set(id, (inUse.get(id) ?? 0) + 1);
      try {
        return await locked(ids, async () => {
          for (const row of rows) {
            try {
              await sync(ctx, row, embedder);
            } catch (err) {
              // Half loaded: loaded again at the next search.
              held.delete(row.id);
              throw err;
            }
          }
          evict();
          const reply = await call({ op: 'search', stores: ids, queries, options });
          return reply.hits ?? [];
        });
      } finally {
        for (const id of ids) {
          const n = inUse.get(id)! - 1;
          if (n) inUse.set(id, n);
          else inUse.delete(id);
        }
        evict();
      }
    },
    async clear(ctx) {
      held.clear();
      // The worker first: a save it has begun is not renamed into place after the files are removed.
      if (worker) await call({ op: 'clear' });
      const at = ctx?.store.location;
      if (opts.saved && at) await clearSaved(opts.saved.dir, sourceKey(at));
    },
    async forget(ctx, storeId) {
      held.delete(storeId);
      if (worker) await call({ op: 'drop', store: storeId });
      const at = ctx.store.location;
      if (opts.saved && at) await removeSaved(opts.saved.dir, sourceKey(at), storeId);
    },
    async close() {
      const w = worker;
      worker = undefined;
      held.clear();
      await w?.terminate();
    },
    stats: () => ({ stores: held.size, bytes: [...held.values()].reduce((s, h) => s + h.bytes, 0), ...stats }),
  };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Chunk rows as the worker takes them: vectors of the current embedder packed into one transferable array. */
function pageOf(
  rows: { file_id: string; seq: number; text: string; embedding: Uint8Array; embedder: string }[],
  embedder: string,
  h: Held,
): ChunkPage {
  if (!h.dimensions) {
    const own = rows.find((r) => r.embedder === embedder);
    if (own) h.dimensions = own.embedding.length / 4;
  }
  const d = h.dimensions;
  const vectors = new Float32Array(rows.length * d);
  const bytes = new Uint8Array(vectors.buffer);
  const hasVector = new Uint8Array(rows.length);
  rows.forEach((r, i) => {
    if (d && r.embedder === embedder && r.embedding.length === d * 4) {
      // A blob's bytes need not be 4-byte aligned: copied as bytes.
      bytes.set(r.embedding, i * d * 4);
      hasVector[i] = 1;
    }
  });
  return {
    fileIds: rows.map((r) => r.file_id),
    seqs: rows.map((r) => r.seq),
    texts: rows.map((r) => r.text),
    vectors,
    hasVector,
    dimensions: d,
  };
}
