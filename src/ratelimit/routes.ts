import { Type } from 'typebox';
import type { App, Ctx } from '../core/module.js';
import { ApiError, notFound } from '../core/errors.js';
import { tierOf, usageLimitOf } from './catalogue.js';
import type { FaultInput } from './faults.js';
import { FaultBody } from './schemas.js';

/** Fault injection (an edge check) and GET /v1/fine_tuning/model_limits. */
export function rateLimitRoutes(app: App, ctx: Ctx) {
  const { ratelimit: limiter, faults } = ctx.services;
  // Faults answer before authentication or validation, like an overloaded edge would.
  ctx.edge.push((request) => {
    if (faults.size() === 0) return undefined;
    const path = request.url.split('?', 1)[0];
    if (path.startsWith('/admin/') || path === '/healthz') return undefined;
    return faults.take(request.method, path) ?? undefined;
  });

  app.get('/v1/fine_tuning/model_limits', { schema: { tags: ['fine_tuning'] } }, async (request) => {
    const principal = await ctx.auth.platform(request, { group: 'fine_tuning', access: 'read' });
    const { tier, models, limits } = limiter.fineTuningLimits(principal.organizationId);
    const data = models.map((model) => ({ object: 'fine_tuning.model_limit', model, tier, ...limits }));
    return { object: 'list', data, first_id: data[0]?.model ?? null, last_id: data.at(-1)?.model ?? null, has_more: false };
  });
}

/** The control plane of rate limits and faults (under /admin/v1). */
export function rateLimitAdminRoutes(app: App, ctx: Ctx) {
  const { ratelimit: limiter, faults } = ctx.services;
  const tags = ['admin: rate limits'];
  const FaultParams = Type.Object({ fault_id: Type.String({ maxLength: 100 }) });

  app.post('/faults', { schema: { tags, body: FaultBody } }, async (request, reply) => {
    const body = request.body as FaultInput;
    if (body.path.startsWith('/admin/')) throw new ApiError('invalid_request_error', "'path' must not be in the control plane (/admin/…).", { param: 'path' });
    reply.code(201);
    return faults.add(body);
  });
  app.get('/faults', { schema: { tags } }, async () => {
    const data = faults.list();
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false };
  });
  app.get('/faults/:fault_id', { schema: { tags, params: FaultParams } }, async (request) => {
    const id = (request.params as { fault_id: string }).fault_id;
    return faults.get(id) ?? Promise.reject(notFound('fault', id, 'fault_id'));
  });
  app.delete('/faults/:fault_id', { schema: { tags, params: FaultParams } }, async (request) => {
    const id = (request.params as { fault_id: string }).fault_id;
    if (!faults.remove(id)) throw notFound('fault', id, 'fault_id');
    return { id, object: 'admin.fault.deleted', deleted: true };
  });
  app.delete('/faults', { schema: { tags } }, async () => {
    const n = faults.list().length;
    faults.clear();
    return { object: 'admin.faults.cleared', deleted: n };
  });

  app.get('/rate_limits', { schema: { tags } }, async () => ({ object: 'admin.rate_limits', backend: limiter.backend.name, config: limiter.config() }));
  app.get('/rate_limits/organizations/:org_id', { schema: { tags, params: Type.Object({ org_id: Type.String({ maxLength: 200 }) }) } }, async (request) => {
    const id = (request.params as { org_id: string }).org_id;
    const config = limiter.config();
    return {
      object: 'admin.organization_rate_limits',
      organization_id: id,
      tier: tierOf(config, id),
      usage_limit_usd: usageLimitOf(config, id),
      usage_this_month_usd: await limiter.spend(id),
      overrides: config.organizations[id]?.models ?? {},
    };
  });
  app.post('/rate_limits/reset', { schema: { tags } }, async () => {
    await limiter.backend.reset();
    return { object: 'admin.rate_limits.reset', backend: limiter.backend.name };
  });
}
