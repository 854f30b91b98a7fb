import type { Module } from '../core/module.js';
import { createMetrics, type Metrics } from './registry.js';

declare module '../core/module.js' {
  interface Services {
    metrics: Metrics;
  }
}

/**
 * Prometheus metrics of the instance at `/admin/v1/metrics` (the admin key guards it, as the rest of the
 * control plane). The request metrics and log line come from the app's one onResponse hook (observe.ts).
 */
export const metricsModule: Module = {
  name: 'metrics',
  provide(ctx) {
    ctx.services.metrics = createMetrics(ctx);
  },
  adminRoutes(app, ctx) {
    if (!ctx.settings.metrics) return;
    const { registry } = ctx.services.metrics;
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      const text = await registry.metrics();
      return reply.type(registry.contentType).send(text);
    });
  },
  start(ctx) {
    if (ctx.settings.metrics) ctx.services.metrics.start();
  },
  stop(ctx) {
    ctx.services.metrics.stop();
  },
};
