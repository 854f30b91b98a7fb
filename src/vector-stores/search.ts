import { ApiError, invalid, notFound } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import { fromJson } from '../store/db.js';
import { fromBlob, type Embedder } from './embedder.js';
import { matches, type Attributes, type Filter } from './filters.js';
import { addBm25, buildLexicalIndex, words, type LexicalIndex } from './lexical.js';
import { isExpired } from './objects.js';
import * as store from './store.js';

/**
 * Retrieval: each store's chunks are held in memory as a search index (vectors and an inverted index),
 * cached per instance by the store's `index_version`, which every change of its chunks or attributes
 * bumps in the same transaction — so every instance sees a change at its next search. A query is scored
 * against every chunk: cosine similarity of the embeddings and BM25 over words, fused into 0..1.
 */
export interface StoreIndex {
  key: string;
  n: number;
  dimensions: number;
  /** n × dimensions; a chunk embedded by another embedder has no vector (`hasVector` 0). */
  vectors: Float32Array;
  hasVector: Uint8Array;
  /** Per chunk: its file (index into `files`) and its place in the file. */
  fileOf: Uint32Array;
  seqs: Uint32Array;
  files: { id: string; filename: string; attributes: Attributes | null }[];
  lexical: LexicalIndex;
}

/** Most chunks held in memory across cached stores; the least recently used stores leave first. */
const CACHE_CHUNKS = 500_000;

export interface IndexCache {
  get(ctx: Ctx, row: store.StoreRow, embedder: Embedder): Promise<StoreIndex>;
  clear(): void;
}

export function createIndexCache(): IndexCache {
  const cache = new Map<string, StoreIndex>();
  const building = new Map<string, Promise<StoreIndex>>();
  let held = 0;
  const drop = (id: string) => {
    const old = cache.get(id);
    if (old) held -= old.n;
    cache.delete(id);
  };
  return {
    async get(ctx, row, embedder) {
      const key = `${row.index_version}|${embedder.id}`;
      const hit = cache.get(row.id);
      if (hit?.key === key) {
        // Map order is recency order.
        cache.delete(row.id);
        cache.set(row.id, hit);
        return hit;
      }
      const pending = building.get(`${row.id}|${key}`);
      if (pending) return pending;
      const build = buildIndex(ctx, row.id, key, embedder.id).then((index) => {
        drop(row.id);
        cache.set(row.id, index);
        held += index.n;
        for (const id of cache.keys()) {
          if (held <= CACHE_CHUNKS || id === row.id) break;
          drop(id);
        }
        return index;
      });
      building.set(`${row.id}|${key}`, build);
      try {
        return await build;
      } finally {
        building.delete(`${row.id}|${key}`);
      }
    },
    clear() {
      cache.clear();
      held = 0;
    },
  };
}

async function buildIndex(ctx: Ctx, storeId: string, key: string, embedderId: string): Promise<StoreIndex> {
  // Files first: a file completed between the two reads has no chunks here yet, and the index is
  // rebuilt at the next search anyway (its change bumped the version).
  const fileRows = await store.readIndexedFiles(ctx.store.db, storeId);
  const chunks = await store.readChunks(ctx.store.db, storeId);
  const files = fileRows.map((f) => ({ id: f.file_id, filename: f.filename, attributes: fromJson<Attributes>(f.attributes) }));
  const fileIndex = new Map(files.map((f, i) => [f.id, i]));
  const rows = chunks.filter((c) => fileIndex.has(c.file_id));
  const n = rows.length;
  const own = rows.find((c) => c.embedder === embedderId);
  const dimensions = own ? own.embedding.length / 4 : 0;
  const vectors = new Float32Array(n * dimensions);
  const hasVector = new Uint8Array(n);
  const fileOf = new Uint32Array(n);
  const seqs = new Uint32Array(n);
  const docs: string[][] = new Array(n);
  rows.forEach((c, i) => {
    fileOf[i] = fileIndex.get(c.file_id)!;
    seqs[i] = c.seq;
    docs[i] = words(c.text);
    if (c.embedder === embedderId && c.embedding.length === dimensions * 4) {
      vectors.set(fromBlob(c.embedding), i * dimensions);
      hasVector[i] = 1;
    }
  });
  return { key, n, dimensions, vectors, hasVector, fileOf, seqs, files, lexical: buildLexicalIndex(docs) };
}

export interface SearchOptions {
  maxNumResults?: number;
  rankingOptions?: { ranker?: string; score_threshold?: number };
  filters?: Filter;
}

/** One retrieved chunk. */
export interface SearchHit {
  vector_store_id: string;
  file_id: string;
  filename: string;
  score: number;
  attributes: Attributes | null;
  text: string;
}

/**
 * Scores of every chunk for the queries (the best over them): `ranker: none` ranks by embedding
 * similarity alone; `auto` and `default-2024-11-15` fuse it half and half with BM25 (docs/files.md).
 * Where the store's chunks have no vectors of the current embedder, BM25 alone.
 */
function score(
  index: StoreIndex,
  queries: { vector: Float32Array | null; words: string[] }[],
  ranker: string,
  allowed: Uint8Array | null,
): Float32Array {
  const best = new Float32Array(index.n);
  const one = new Float32Array(index.n);
  const anyVector = index.hasVector.some((x) => x === 1);
  const vectorWeight = !anyVector ? 0 : ranker === 'none' ? 1 : 0.5;
  const lexicalWeight = 1 - vectorWeight;
  const d = index.dimensions;
  for (const q of queries) {
    one.fill(0);
    if (vectorWeight > 0 && q.vector && q.vector.length === d) {
      const v = index.vectors;
      const qv = q.vector;
      // Dimensions are a multiple of 4 for every embedder worth using; the tail loop covers the rest.
      const d4 = d - (d % 4);
      for (let i = 0, off = 0; i < index.n; i++, off += d) {
        if (!index.hasVector[i]) continue;
        let a = 0;
        let b = 0;
        let c = 0;
        let e = 0;
        let k = 0;
        for (; k < d4; k += 4) {
          a += v[off + k] * qv[k];
          b += v[off + k + 1] * qv[k + 1];
          c += v[off + k + 2] * qv[k + 2];
          e += v[off + k + 3] * qv[k + 3];
        }
        for (; k < d; k++) a += v[off + k] * qv[k];
        const dot = a + b + c + e;
        if (dot > 0) one[i] = vectorWeight * Math.min(1, dot);
      }
    }
    if (lexicalWeight > 0) addBm25(index.lexical, q.words, lexicalWeight, one);
    for (let i = 0; i < index.n; i++) if (one[i] > best[i]) best[i] = one[i];
  }
  if (allowed) for (let i = 0; i < index.n; i++) if (!allowed[index.fileOf[i]]) best[i] = 0;
  return best;
}

/**
 * Searches stores of a project: the best `maxNumResults` chunks (default 10, at most 50) scoring at
 * least the threshold (default 0; a chunk scoring 0 matches nothing and is never returned), best first.
 * Each store's last activity moves to now (its expiry counts from there). An expired store is refused.
 */
export async function searchVectorStores(
  ctx: Ctx,
  projectId: string,
  storeIds: readonly string[],
  query: string | readonly string[],
  opts: SearchOptions = {},
): Promise<SearchHit[]> {
  const max = opts.maxNumResults ?? 10;
  if (!Number.isInteger(max) || max < 1 || max > 50)
    throw invalid("'max_num_results' must be an integer from 1 to 50.", 'max_num_results', 'invalid_value');
  const threshold = opts.rankingOptions?.score_threshold ?? 0;
  if (!(threshold >= 0 && threshold <= 1))
    throw invalid("'ranking_options.score_threshold' must be from 0 to 1.", 'ranking_options.score_threshold', 'invalid_value');
  const ranker = opts.rankingOptions?.ranker ?? 'auto';
  const texts = typeof query === 'string' ? [query] : [...query];
  const embedder = ctx.services.vectorStores.embedder();
  const now = ctx.clock.nowSeconds();
  const rows: store.StoreRow[] = [];
  for (const id of new Set(storeIds)) {
    const row = await store.getStore(ctx.store.db, projectId, id);
    if (!row) throw notFound('vector store', id);
    if (isExpired(row, now))
      throw invalid(`The vector store ${id} has expired; create a new one.`, 'vector_store_id', 'vector_store_expired');
    rows.push(row);
  }
  const vectors = await embedder.embed(texts).catch((err: Error) => {
    throw new ApiError('service_unavailable_error', `The embeddings server could not embed the query: ${err.message}`, {
      code: 'embeddings_unavailable',
    });
  });
  const queries = texts.map((t, i) => ({ vector: vectors[i], words: words(t) }));
  // The best `max`, kept in order as the scores stream by (a full sort of every chunk's score cost more
  // than the scoring). Chunks come in a fixed order (store, then file and chunk), and a later chunk must
  // score strictly higher to pass an earlier one: the same query always answers the same.
  const top: { store: number; index: StoreIndex; i: number; score: number }[] = [];
  for (const [s, row] of rows.entries()) {
    const index = await ctx.services.vectorStores.indexes.get(ctx, row, embedder);
    const allowed = opts.filters ? Uint8Array.from(index.files, (f) => (matches(opts.filters!, f.attributes) ? 1 : 0)) : null;
    const scores = score(index, queries, ranker, allowed);
    for (let i = 0; i < index.n; i++) {
      const sc = scores[i];
      if (sc <= 0 || sc < threshold || (top.length === max && sc <= top[max - 1].score)) continue;
      let at = top.length;
      while (at > 0 && top[at - 1].score < sc) at--;
      top.splice(at, 0, { store: s, index, i, score: sc });
      if (top.length > max) top.pop();
    }
  }
  const hits: SearchHit[] = [];
  for (const [s, row] of rows.entries()) {
    const mine = top.filter((c) => c.store === s);
    const keys = mine.map((c) => ({ fileId: c.index.files[c.index.fileOf[c.i]].id, seq: c.index.seqs[c.i] }));
    const found = await store.chunkTexts(ctx.store.db, row.id, keys);
    mine.forEach((c, j) => {
      const file = c.index.files[c.index.fileOf[c.i]];
      // A chunk deleted since the index was read is left out.
      if (found[j] !== undefined)
        hits.push({
          vector_store_id: row.id,
          file_id: file.id,
          filename: file.filename,
          score: Math.min(1, c.score),
          attributes: file.attributes,
          text: found[j],
        });
    });
    await store.touchStore(ctx.store.db, row.id, now);
  }
  return hits.sort((a, b) => b.score - a.score);
}
