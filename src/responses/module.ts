import type { Module } from '../core/module.js';
import { responsesRoutes } from './routes.js';
import { createFinishedResponse, defaultDeps, RUN_RESPONSE, runResponse, type ResponsesDeps } from './service.js';
import { responsesMigrations } from './tables.js';

/** The Responses API; background responses run as jobs and feed the response.* webhook events. */
export function createResponsesModule(deps?: (ctx: Parameters<typeof defaultDeps>[0]) => ResponsesDeps): Module {
  const depsOf = deps ?? defaultDeps;
  return {
    name: 'responses',
    migrations: responsesMigrations,
    routes: (app, ctx) => responsesRoutes(app, ctx, depsOf(ctx)),
    eventSamples: [
      {
        types: ['response.completed', 'response.failed', 'response.cancelled', 'response.incomplete'],
        async create(ctx, tx, { type, projectId }) {
          const status = type.slice(type.indexOf('.') + 1) as 'completed' | 'failed' | 'cancelled' | 'incomplete';
          return { id: (await createFinishedResponse(ctx, tx, projectId, status)).id };
        },
      },
    ],
    jobs: (ctx) => [
      { kind: RUN_RESPONSE, concurrency: 8, visibilityMs: 10 * 60_000, handler: (payload) => runResponse(ctx, depsOf(ctx), payload) },
    ],
  };
}

export const responsesModule = createResponsesModule();
