import { ApiError, invalid, notFound } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import type { Attributes, Filter } from './filters.js';
import { isExpired } from './objects.js';
import * as store from './store.js';

/**
 * Retrieval: each store's index (vectors and an inverted index of its chunks) lives in this instance's
 * search worker, kept up to date a changed file at a time (index-cache.ts). A query is scored against
 * every chunk: cosine similarity of the embeddings and BM25 over words, fused into 0..1 (index-core.ts).
 */
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
  const top = await ctx.services.vectorStores.indexes.search(
    ctx,
    rows,
    embedder,
    texts.map((text, i) => ({ vector: vectors[i], text })),
    { ranker, filter: opts.filters, max, threshold },
  );
  const hits: SearchHit[] = [];
  for (const [s, row] of rows.entries()) {
    const mine = top.filter((c) => c.store === s);
    const found = await store.chunkTexts(ctx.store.db, row.id, mine);
    mine.forEach((c, j) => {
      // A chunk deleted since the index was read is left out.
      if (found[j] !== undefined)
        hits.push({
          vector_store_id: row.id,
          file_id: c.fileId,
          filename: c.filename,
          score: Math.min(1, c.score),
          attributes: c.attributes,
          text: found[j],
        });
    });
    // Its last activity is already now (the update would change nothing): no statement.
    if (Number(row.last_active_at) < now) await store.touchStore(ctx.store.db, row.id, now);
  }
  // `top` is in rank order already (ties broken alike on every instance); a stable sort keeps it.
  return hits.sort((a, b) => b.score - a.score);
}
