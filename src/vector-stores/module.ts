import { invalid } from '../core/errors.js';
import { vectorStoresAdminRoutes } from './admin-routes.js';
import { configSection, type Module } from '../core/module.js';
import { VectorStoresConfig } from './embedder.js';
import { failIngestion, INGEST_ATTEMPTS, ingestFile } from './ingest.js';
import { vectorStoresRoutes } from './routes.js';
import { createRuntime, type VectorStoresRuntime } from './runtime.js';
import { forgetDeletedFile, INGEST, type IngestPayload } from './service.js';
import { vectorStoreMigrations } from './tables.js';

declare module '../core/module.js' {
  interface Services {
    /** The embedder in force and the cached search indexes of this instance. */
    vectorStores: VectorStoresRuntime;
  }
}

/**
 * Vector stores (`/v1/vector_stores…`): ingestion as jobs (one per file), search over cached indexes,
 * and the root `vector_stores` section of the config file (an embeddings server). Needs the files module.
 */
export const vectorStoresModule: Module = {
  name: 'vector_stores',
  migrations: vectorStoreMigrations,
  provide(ctx) {
    ctx.services.vectorStores = createRuntime(ctx);
  },
  init(ctx) {
    ctx.services.files.deleted.push(forgetDeletedFile);
  },
  config: [
    configSection({
      at: 'root',
      key: 'vector_stores',
      schema: VectorStoresConfig,
      async apply(ctx, _tx, value) {
        try {
          ctx.services.vectorStores.configure(value);
        } catch (err) {
          throw invalid(`the config is not valid: ${(err as Error).message}`, 'vector_stores.embeddings', 'invalid_config');
        }
      },
    }),
  ],
  routes: vectorStoresRoutes,
  adminRoutes: vectorStoresAdminRoutes,
  jobs: (ctx) => [
    {
      kind: INGEST,
      // Four jobs per ingestion process: while one job's rows are written (the server's thread commits them),
      // another's file is already in the process. With one, each process waited out every write (files of
      // 4 MB: 4.8–5.1 against 5.6–6.0 MB/s, bench/ingest-throughput.mjs). A small file's job is mostly
      // waiting on the store's round trips: with four rather than two, files of 2 KB went 1.0–1.1 → 1.2–1.3
      // MB/s on SQLite and 0.27–0.32 → 0.23–0.41 on PostgreSQL (medians 0.30 → 0.35; eight: no better);
      // files of 512 KB the same.
      // A job waiting for a process has not read its file (a small one at most, ingest-pool.ts).
      concurrency: 4 * Math.max(1, ctx.settings.ingestProcesses),
      // The claim lasts --lease-ms and is renewed while the file is ingested, so no other worker takes a file
      // still in progress on a live instance, and a dead instance's file is taken over soon.
      retryDelayMs: 5_000,
      maxAttempts: INGEST_ATTEMPTS + 1,
      handler: (payload: IngestPayload, job) => ingestFile(ctx, payload, job),
      // A job the queue gives up on because its process kept dying while it ran (core/jobs.ts, --job-max-deaths):
      // the file fails rather than stays in progress.
      onAbandon: (payload: IngestPayload, reason: string) => {
        ctx.services.metrics?.ingestion('abandoned');
        return failIngestion(ctx, payload, { code: 'server_error', message: `Ingestion of this file was abandoned: ${reason}` });
      },
    },
  ],
  async stop(ctx) {
    await ctx.services.vectorStores.ingestion.close();
    await ctx.services.vectorStores.indexes.close();
  },
  async reset(ctx) {
    await ctx.services.vectorStores.indexes.clear(ctx);
  },
};
