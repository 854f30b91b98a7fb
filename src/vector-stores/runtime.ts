import type { Ctx } from '../core/module.js';
import { createIngestPool, type IngestPool } from './ingest-pool.js';
import { limitsOf } from './limits.js';
import { builtinEmbedder, upstreamEmbedder, type Embedder, type VectorStoresConfig } from './embedder.js';
import { createIndexCache, type IndexCache } from './search.js';

/** What the vector stores area keeps per instance (`ctx.services.vectorStores`). */
export interface VectorStoresRuntime {
  /** The embedder in force: built in, or the config file's `vector_stores.embeddings`. */
  embedder(): Embedder;
  configure(config: VectorStoresConfig): void;
  indexes: IndexCache;
  /** The ingestion processes (started on first use). */
  ingestion: IngestPool;
}

export function createRuntime(ctx: Ctx): VectorStoresRuntime {
  let embedder: Embedder = builtinEmbedder;
  return {
    embedder: () => embedder,
    configure(config) {
      embedder = config.embeddings ? upstreamEmbedder(ctx.outbound, config.embeddings) : builtinEmbedder;
    },
    indexes: createIndexCache(),
    ingestion: createIngestPool({ processes: Math.max(1, ctx.settings.ingestProcesses), limits: limitsOf(ctx.settings) }),
  };
}
