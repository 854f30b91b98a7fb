import { batchesAdminRoutes } from './admin-routes.js';
import type { Module } from '../core/module.js';
import { batchesRoutes } from './routes.js';
import { abandonBatch, runBatch, type RunBatchJob } from './runner.js';
import { createSampleBatch, RUN_BATCH } from './service.js';
import { batchesMigrations } from './tables.js';

const ENDINGS = ['completed', 'failed', 'expired', 'cancelled'] as const;
const isEnding = (s: string): s is (typeof ENDINGS)[number] => (ENDINGS as readonly string[]).includes(s);

/** Batches (`/v1/batches`): input files of purpose `batch` run line by line on the job queue; the batch.* events. */
export const batchesModule: Module = {
  name: 'batches',
  migrations: batchesMigrations,
  routes: (app, ctx) => batchesRoutes(app, ctx),
  adminRoutes: batchesAdminRoutes,
  jobs: (ctx) => [
    // A step works for at most ~10 s under a claim of --lease-ms, renewed while it works: only a dead worker's claim lapses.
    {
      kind: RUN_BATCH,
      concurrency: 4,
      retryDelayMs: 2_000,
      handler: (payload: RunBatchJob, job) => runBatch(ctx, payload, job),
      onAbandon: (payload: RunBatchJob, reason) => abandonBatch(ctx, payload, reason),
    },
  ],
  eventSamples: [
    {
      types: ENDINGS.map((s) => `batch.${s}`),
      async create(ctx, tx, { type, organizationId, projectId }) {
        const status = type.slice(type.indexOf('.') + 1);
        if (!isEnding(status)) throw new Error(`no sample for ${type}`);
        return { id: (await createSampleBatch(ctx, tx, { organizationId, projectId }, status)).id };
      },
    },
  ],
};
