import { EVENT_FANOUT } from '../core/events.js';
import { configSection, type Module } from '../core/module.js';
import { deliver, fanout, type DeliverOptions } from './deliver.js';
import { createRecorder } from './recorder.js';
import { webhookAdminRoutes } from './routes.js';
import { WebhooksConfig } from './schemas.js';
import { declareEndpoints, DELIVER } from './service.js';
import { webhookMigrations } from './tables.js';

declare module '../core/module.js' {
  interface Services {
    /** How this instance delivers: the guarded client, the receiver timeout, the batched attempt recorder. */
    webhooks: DeliverOptions;
  }
}

/** Webhook endpoints per project, the event fan-out and signed, retried deliveries. */
export const webhooksModule: Module = {
  name: 'webhooks',
  migrations: webhookMigrations,
  provide(ctx) {
    ctx.services.webhooks = { outbound: ctx.outbound, timeoutMs: ctx.settings.webhookTimeoutMs, recorder: createRecorder(ctx) };
  },
  adminRoutes: webhookAdminRoutes,
  jobs: (ctx) => [
    {
      kind: EVENT_FANOUT,
      concurrency: 64,
      // Covers the inline first attempts: a live worker's claim never lapses, a dead one's does.
      visibilityMs: ctx.settings.webhookTimeoutMs + 30_000,
      retryDelayMs: 1_000,
      handler: (payload: { eventId: string }, job) => fanout(ctx, ctx.services.webhooks, payload, job),
    },
    {
      kind: DELIVER,
      concurrency: 64,
      visibilityMs: ctx.settings.webhookTimeoutMs + 30_000,
      retryDelayMs: 5_000,
      handler: (payload: { deliveryId: string }) => deliver(ctx, ctx.services.webhooks, payload),
    },
  ],
  config: [
    configSection({
      at: 'project',
      key: 'webhooks',
      schema: WebhooksConfig,
      async apply(ctx, tx, endpoints, { projectId }) {
        for (const created of await declareEndpoints(ctx, tx, projectId!, endpoints)) {
          ctx.log.warn(
            { project: projectId, endpoint: created.id },
            `webhook endpoint '${created.name}' signing secret: ${created.secret} (shown once)`,
          );
        }
      },
    }),
  ],
};
