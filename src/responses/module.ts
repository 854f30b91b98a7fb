import { ChangeBus } from '../core/bus.js';
import type { Module } from '../core/module.js';
import { responsesAdminRoutes } from './admin-routes.js';
import { inputItemsRoutes } from './input-items-routes.js';
import { responseItemsMigrations } from './items-tables.js';
import { responsesRoutes } from './routes.js';
import {
  abandonResponse,
  createFinishedResponse,
  RUN_RESPONSE,
  runResponse,
  type ResponsesRuntime,
  type RunResponseJob,
} from './service.js';
import { forgetInstanceKey, purgeEvents, RESPONSES_CHANNEL } from './stream-store.js';
import { responseStreamMigrations } from './stream-tables.js';
import { responsesMigrations } from './tables.js';

declare module '../core/module.js' {
  interface Services {
    /** The background responses this instance is running (service.ts). */
    responses: ResponsesRuntime;
  }
}

const FINISHED = ['completed', 'failed', 'cancelled', 'incomplete'] as const;
const isFinished = (s: string): s is (typeof FINISHED)[number] => (FINISHED as readonly string[]).includes(s);

/**
 * The Responses API on `ctx.services.models` (read at each call, so a test may swap the providers);
 * background responses run as jobs and feed the response.* webhook events.
 */
export const responsesModule: Module = {
  name: 'responses',
  migrations: { ...responsesMigrations, ...responseStreamMigrations, ...responseItemsMigrations },
  provide(ctx) {
    ctx.services.responses = { running: new Map(), bus: new ChangeBus(RESPONSES_CHANNEL) };
  },
  start: (ctx) => ctx.services.responses.bus.start(ctx),
  stop: (ctx) => ctx.services.responses.bus.stop(),
  reset: (ctx) => forgetInstanceKey(ctx),
  retention: [
    {
      name: 'response_events',
      description:
        "The stream events of background responses created with stream: true (what `GET /v1/responses/{id}?stream=true` replays), by when they were written; a running response's are kept.",
      tables: ['response_events'],
      defaultMs: 86_400_000,
      purge: (tx, cutoffMs, limit) => purgeEvents(tx, cutoffMs, limit),
    },
  ],
  adminRoutes: responsesAdminRoutes,
  routes: (app, ctx) => {
    responsesRoutes(app, ctx);
    inputItemsRoutes(app, ctx);
  },
  eventSamples: [
    {
      types: FINISHED.map((s) => `response.${s}`),
      async create(ctx, tx, { type, projectId }) {
        const status = type.slice(type.indexOf('.') + 1);
        if (!isFinished(status)) throw new Error(`no sample for ${type}`);
        return { id: (await createFinishedResponse(ctx, tx, projectId, status)).id };
      },
    },
  ],
  jobs: (ctx) => [
    {
      kind: RUN_RESPONSE,
      concurrency: 8,
      // The claim lasts --lease-ms and is renewed while the model answers: a dead instance's response is taken over.
      handler: (payload: RunResponseJob, job) => runResponse(ctx, payload, job),
      onAbandon: (payload: RunResponseJob, reason) => abandonResponse(ctx, payload, reason),
    },
  ],
};
