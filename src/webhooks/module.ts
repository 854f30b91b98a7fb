import { EVENT_FANOUT } from '../core/events.js';
import type { Module } from '../core/module.js';
import { deliver, fanout, type DeliverOptions } from './deliver.js';
import { createRecorder } from './recorder.js';
import { webhookAdminRoutes, webhookPages } from './routes.js';
import { WebhooksConfig } from './schemas.js';
import { createEndpoint, DELIVER, listEndpoints } from './service.js';
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
  routes: (app) => webhookPages(app),
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
    {
      at: 'project',
      key: 'webhooks',
      schema: WebhooksConfig,
      async apply(ctx, tx, endpoints: any[], { projectId }) {
        const existing = new Map((await listEndpoints(ctx, tx, projectId!)).map((e) => [e.name, e]));
        for (const e of endpoints) {
          const found = existing.get(e.name);
          if (!found) {
            // A config file mirrors an existing setup, so it may keep a live.call.incoming subscription.
            const created = await createEndpoint(ctx, tx, projectId!, e, { allowDeprecated: true, outbound: ctx.outbound });
            if (!e.secret) ctx.log.warn({ project: projectId, endpoint: created.id }, `webhook endpoint '${e.name}' signing secret: ${created.secret} (shown once)`);
            continue;
          }
          await tx
            .updateTable('webhook_endpoints')
            .set({ url: e.url, event_types: JSON.stringify([...new Set(e.event_types)]), enabled: e.enabled === false ? 0 : 1, ...(e.secret ? { secret: e.secret } : {}), updated_at: ctx.clock.nowSeconds() })
            .where('id', '=', found.id)
            .execute();
        }
      },
    },
  ],

};
