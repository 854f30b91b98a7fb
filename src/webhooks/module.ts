import { keepGeneratedSecret } from '../core/generated-secrets.js';
import { EVENT_FANOUT } from '../core/events.js';
import { configSection, type Module } from '../core/module.js';
import { deliver, fanout, type DeliverOptions } from './deliver.js';
import { createReceivers } from './receivers.js';
import { createRecorder } from './recorder.js';
import { webhookAdminRoutes } from './routes.js';
import { WebhooksConfig } from './schemas.js';
import { declareEndpoints, DELIVER } from './service.js';
import { endpointsOfEvents, purgeDeliveries, purgeEvents } from './store.js';
import { groupRead } from '../store/group-read.js';
import { webhookMigrations } from './tables.js';

declare module '../core/module.js' {
  interface Services {
    /** How this instance delivers: the guarded client, the receiver timeout, the batched attempt recorder. */
    webhooks: DeliverOptions;
  }
}

const DAY_MS = 86_400_000;
/**
 * Deliveries at a time, per kind: as many as the outbound client's connections to one receiver
 * (outboundFor). Deliveries wait on receivers, not on this process, and none waits for a connection (its
 * timeout would run meanwhile).
 */
const DELIVERY_SLOTS = 128;

/** Webhook endpoints per project, the event fan-out and signed, retried deliveries. */
export const webhooksModule: Module = {
  name: 'webhooks',
  migrations: webhookMigrations,
  provide(ctx) {
    ctx.services.webhooks = {
      outbound: ctx.outbound,
      timeoutMs: ctx.settings.webhookTimeoutMs,
      recorder: createRecorder(ctx),
      // A slow receiver may hold a quarter of the delivery slots (the concurrency below).
      receivers: createReceivers({ timeoutMs: ctx.settings.webhookTimeoutMs, share: DELIVERY_SLOTS / 4 }),
      endpointsOfEvent: groupRead(
        (eventIds: string[]) => endpointsOfEvents(ctx.store.db, eventIds),
        (row) => row.event_id,
      ),
    };
  },
  adminRoutes: webhookAdminRoutes,
  commands: {
    trigger: {
      usage: ['trigger <event-type> [options]         emit a webhook event into the store (--help: types, options)'],
      load: async () => (await import('./cli.js')).runTriggerCli,
    },
  },
  retention: [
    {
      name: 'webhook_deliveries',
      description:
        'Webhook deliveries and their attempts, by when the delivery ended (succeeded, or failed after 72 hours); pending ones are kept.',
      tables: ['webhook_attempts', 'webhook_deliveries'],
      defaultMs: 30 * DAY_MS,
      purge: (tx, cutoffMs, limit) => purgeDeliveries(tx, cutoffMs, limit),
    },
    {
      name: 'webhook_events',
      description: 'Events of the outbox (the envelopes deliveries send), by creation; kept while any delivery of the event is.',
      tables: ['events'],
      defaultMs: 30 * DAY_MS,
      purge: (tx, cutoffMs, limit) => purgeEvents(tx, Math.floor(cutoffMs / 1000), limit, EVENT_FANOUT),
    },
  ],
  jobs: (ctx) => [
    {
      kind: EVENT_FANOUT,
      concurrency: DELIVERY_SLOTS,
      // The claim (--lease-ms) is renewed while the inline first attempts run: a live worker's claim never
      // lapses, a dead one's does, and another instance makes the attempts it left (at least once).
      retryDelayMs: 1_000,
      handler: (payload: { eventId: string }, job) => fanout(ctx, ctx.services.webhooks, payload, job),
    },
    {
      kind: DELIVER,
      concurrency: DELIVERY_SLOTS,
      retryDelayMs: 5_000,
      handler: (payload: { deliveryId: string }, job) => deliver(ctx, ctx.services.webhooks, payload, job),
    },
  ],
  config: [
    configSection({
      at: 'project',
      key: 'webhooks',
      schema: WebhooksConfig,
      async apply(ctx, tx, endpoints, { projectId }) {
        for (const created of await declareEndpoints(ctx, tx, projectId!, endpoints)) {
          const file = keepGeneratedSecret(ctx.settings.data, `webhook-${created.id}`, created.secret!);
          ctx.log.warn(
            { project: projectId, endpoint: created.id, secret_file: file },
            `webhook endpoint '${created.name}' has a generated signing secret: read it from ${file} (this instance's data folder)`,
          );
        }
      },
    }),
  ],
};
