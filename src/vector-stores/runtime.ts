import { resolve } from 'node:path';
import type { Ctx } from '../core/module.js';
import { createIngestPool, type IngestPool } from './ingest-pool.js';
import { limitsOf } from './limits.js';
import { builtinEmbedder, upstreamEmbedder, type Embedder, type VectorStoresConfig } from './embedder.js';
import { createIndexCache, type IndexCache } from './index-cache.js';
import { defaultIndexDir } from './index-file.js';

/** What the vector stores area keeps per instance (`ctx.services.vectorStores`). */
export interface VectorStoresRuntime {
  /** The embedder in force: built in, or the config file's `vector_stores.embeddings`. */
  embedder(): Embedder;
  configure(config: VectorStoresConfig): void;
  /** The search indexes of this instance (in its search worker). */
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
    indexes: createIndexCache({
      memoryBytes: Math.max(0, ctx.settings.searchMemoryMb) * 1024 * 1024,
      approximateFrom: Math.max(0, ctx.settings.searchApproximateFrom),
      saved:
        ctx.settings.searchIndexDir === 'off' || ctx.settings.searchIndexSaveFrom <= 0
          ? undefined
          : {
              dir: resolve(ctx.settings.searchIndexDir ?? defaultIndexDir(ctx.settings.data, ctx.store.dialect === 'sqlite')),
              from: ctx.settings.searchIndexSaveFrom,
            },
    }),
    ingestion: createIngestPool({ processes: Math.max(1, ctx.settings.ingestProcesses), limits: limitsOf(ctx.settings) }),
  };
}
