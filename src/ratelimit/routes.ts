import { needs } from '../core/auth.js';
import { HEALTH_PATHS } from '../core/health.js';
import { routerPath } from '../core/route-path.js';
import type { App, Ctx } from '../core/module.js';
import { wholeList as list } from '../core/pagination.js';
import { Deleted, ListOf } from '../core/schemas.js';
import { invalid, notFound } from '../core/errors.js';
import { tierOf, usageLimitOf } from './catalog.js';
import { rateLimitHistory } from './history.js';
import {
  FaultBody,
  FaultObject,
  FaultParams,
  FaultsCleared,
  FineTuningModelLimit,
  OrganizationParams,
  HistoryQuery,
  HistoryView,
  OrganizationRateLimitsView,
  RateLimitsReset,
  RateLimitsView,
} from './schemas.js';

/** Fault injection (an edge check) and GET /v1/fine_tuning/model_limits. */
export function rateLimitRoutes(app: App, ctx: Ctx) {
  const { ratelimit: limiter, faults } = ctx.services;
  // Faults answer before authentication or validation, like an overloaded edge would. They match the path
  // as the router reads it (`/%761/models` is /v1/models; the control plane is never faulted, however spelled).
  ctx.edge.push((request) => {
    if (faults.size() === 0) return undefined;
    const path = routerPath(request.url);
    if (path === null || path.startsWith('/admin/') || HEALTH_PATHS.has(path)) return undefined;
    return faults.take(request.method, path) ?? undefined;
  });

  app.get(
    '/v1/fine_tuning/model_limits',
    { config: needs('fine_tuning', 'read'), schema: { tags: ['fine_tuning'], response: { 200: ListOf(FineTuningModelLimit) } } },
    async (request) => {
      const principal = ctx.auth.principalOf(request);
      const { tier, models, limits } = limiter.fineTuningLimits(principal.organizationId);
      const data = models.map((model) => ({ object: 'fine_tuning.model_limit' as const, model, tier, ...limits }));
      return { object: 'list' as const, data, first_id: data[0]?.model ?? null, last_id: data.at(-1)?.model ?? null, has_more: false };
    },
  );
}

/** The control plane of rate limits and faults (under /admin/v1). */
export function rateLimitAdminRoutes(app: App, ctx: Ctx) {
  const { ratelimit: limiter, faults } = ctx.services;
  const tags = ['admin: rate limits'];

  app.post('/faults', { schema: { tags, body: FaultBody, response: { 201: FaultObject } } }, async (request, reply) => {
    if (request.body.path.startsWith('/admin/')) throw invalid("'path' must not be in the control plane (/admin/…).", 'path');
    const fault = await faults.add(request.body);
    reply.code(201);
    return fault;
  });
  app.get('/faults', { schema: { tags, response: { 200: ListOf(FaultObject) } } }, async () => list(await faults.list()));
  app.get('/faults/:fault_id', { schema: { tags, params: FaultParams, response: { 200: FaultObject } } }, async (request) => {
    const id = request.params.fault_id;
    const fault = await faults.get(id);
    if (!fault) throw notFound('fault', id, 'fault_id');
    return fault;
  });
  app.delete(
    '/faults/:fault_id',
    { schema: { tags, params: FaultParams, response: { 200: Deleted('admin.fault.deleted') } } },
    async (request) => {
      const id = request.params.fault_id;
      if (!(await faults.remove(id))) throw notFound('fault', id, 'fault_id');
      return { id, object: 'admin.fault.deleted' as const, deleted: true };
    },
  );
  app.delete('/faults', { schema: { tags, response: { 200: FaultsCleared } } }, async () => ({
    object: 'admin.faults.cleared' as const,
    deleted: await faults.clear(),
  }));

  app.get('/rate_limits', { schema: { tags, response: { 200: RateLimitsView } } }, async () => ({
    object: 'admin.rate_limits' as const,
    backend: limiter.backend.name,
    config: { ...limiter.config() },
  }));
  app.get(
    '/rate_limits/organizations/:org_id',
    { schema: { tags, params: OrganizationParams, response: { 200: OrganizationRateLimitsView } } },
    async (request) => {
      const id = request.params.org_id;
      const config = limiter.config();
      return {
        object: 'admin.organization_rate_limits' as const,
        organization_id: id,
        tier: tierOf(config, id),
        usage_limit_usd: usageLimitOf(config, id),
        usage_this_month_usd: await limiter.spend(id),
        overrides: config.organizations[id]?.models ?? {},
      };
    },
  );
  // Use over the last minutes, from the request log's reply headers (the dashboard's chart).
  app.get('/rate_limits/history', { schema: { tags, querystring: HistoryQuery, response: { 200: HistoryView } } }, async (request) => {
    const now = ctx.clock.nowSeconds();
    const bucket = request.query.bucket_seconds ?? 10;
    const { from, series } = rateLimitHistory(ctx.services.requestLog, now, request.query.minutes ?? 10, bucket);
    return { object: 'admin.rate_limit_history' as const, from, to: now, bucket_seconds: bucket, series };
  });
  app.post('/rate_limits/reset', { schema: { tags, response: { 200: RateLimitsReset } } }, async () => {
    await limiter.reset();
    return { object: 'admin.rate_limits.reset' as const, backend: limiter.backend.name };
  });
}
