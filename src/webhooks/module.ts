import type { Ctx } from '../core/context.js';
import { EVENT_FANOUT } from '../core/events.js';
import { createOutbound, type Outbound } from '../core/outbound.js';
import { isLoopback } from '../core/settings.js';
import type { Module } from '../server/module.js';
import { deliver, fanout, type DeliverOptions } from './deliver.js';
import { createRecorder } from './recorder.js';
import { webhookRoutes } from './routes.js';
import { WebhooksConfig } from './schemas.js';
import { createEndpoint, DELIVER, listEndpoints } from './service.js';
import { webhookMigrations } from './tables.js';

/**
 * The SSRF-guarded client of webhook deliveries. Loopback is allowed only while Standin itself listens
 * on loopback (a developer's receiver on localhost); `--outbound-allow` adds CIDRs or hosts.
 */
export function outboundFor(settings: Ctx['settings']): Outbound {
  return createOutbound({
    allowLoopback: isLoopback(settings.host),
    allow: (settings.outboundAllow ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    timeoutMs: settings.webhookTimeoutMs,
    connections: 128,
  });
}

const outbounds = new WeakMap<Ctx, Outbound>();
const outboundOf = (ctx: Ctx): Outbound => {
  let o = outbounds.get(ctx);
  if (!o) outbounds.set(ctx, (o = outboundFor(ctx.settings)));
  return o;
};

const optionsByCtx = new WeakMap<Ctx, DeliverOptions>();
const deliverOptions = (ctx: Ctx): DeliverOptions => {
  let o = optionsByCtx.get(ctx);
  if (!o) optionsByCtx.set(ctx, (o = { outbound: outboundOf(ctx), timeoutMs: ctx.settings.webhookTimeoutMs, recorder: createRecorder(ctx) }));
  return o;
};

/** Webhook endpoints per project, the event fan-out and signed, retried deliveries. */
export const webhooksModule: Module = {
  name: 'webhooks',
  migrations: webhookMigrations,
  init(ctx) {
    ctx.services.outbound = outboundOf(ctx);
  },
  routes: (app, ctx) => webhookRoutes(app, ctx, outboundOf(ctx)),
  jobs: (ctx) => [
    {
      kind: EVENT_FANOUT,
      concurrency: 64,
      // Covers the inline first attempts: a live worker's claim never lapses, a dead one's does.
      visibilityMs: ctx.settings.webhookTimeoutMs + 30_000,
      retryDelayMs: 1_000,
      handler: (payload: { eventId: string }, job) => fanout(ctx, deliverOptions(ctx), payload, job),
    },
    {
      kind: DELIVER,
      concurrency: 64,
      visibilityMs: ctx.settings.webhookTimeoutMs + 30_000,
      retryDelayMs: 5_000,
      handler: (payload: { deliveryId: string }) => deliver(ctx, deliverOptions(ctx), payload),
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
            const created = await createEndpoint(ctx, tx, projectId!, e, { allowDeprecated: true, outbound: outboundOf(ctx) });
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
  async stop(ctx) {
    await outbounds.get(ctx)?.close();
    outbounds.delete(ctx);
    optionsByCtx.delete(ctx);
  },
};
