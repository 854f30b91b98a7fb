import { parseDuration } from '../core/clock.js';
import type { Ctx } from '../core/module.js';
import type { Exec } from '../store/db.js';
import type { Module } from '../core/module.js';
import { defaultConfig, mergeConfig, type OrganizationLimits, type ProjectLimits, type RateLimitConfig, type RateLimitConfigInput } from './catalogue.js';
import { createFaults, type Faults } from './faults.js';
import type { LimiterBackend } from './interface.js';
import { createMemoryBackend } from './memory.js';
import { createRedisBackend } from './redis.js';
import { rateLimitAdminRoutes, rateLimitRoutes } from './routes.js';
import { OrganizationLimitsSchema, ProjectLimitsSchema, RateLimitsConfigSchema } from './schemas.js';
import { createRateLimiter, type RateLimitService } from './service.js';
import { loadSections, saveSection } from './store.js';
import { rateLimitMigrations } from './tables.js';

declare module '../core/module.js' {
  interface Services {
    /** Admits and releases model requests (section C of the platform spec). */
    ratelimit: RateLimitService;
    /** Faults injected through the control plane. */
    faults: Faults;
  }
}

/** The config file's `rate_limits` (durations as text) in the catalogue's terms. */
export function configInput(file: any): RateLimitConfigInput {
  const { ramp, overload_retry_after, concurrency_lease_ttl, ...rest } = file ?? {};
  const out: RateLimitConfigInput = { ...rest };
  if (ramp) {
    const { period, window, ...r } = ramp;
    out.ramp = { ...r, ...(period ? { period_ms: parseDuration(period) } : {}), ...(window ? { window_ms: parseDuration(window) } : {}) };
  }
  if (overload_retry_after) out.overload_retry_after_ms = parseDuration(overload_retry_after);
  if (concurrency_lease_ttl) out.lease_ttl_ms = parseDuration(concurrency_lease_ttl);
  return out;
}

/** The catalogue from the saved sections: built-ins, the root section, then per-organization and per-project sections. */
export async function loadConfig(db: Exec): Promise<RateLimitConfig> {
  let config = defaultConfig();
  const sections = await loadSections(db);
  const root = sections.find((s) => s.scope === 'root');
  if (root) config = mergeConfig(config, configInput(root.value));
  for (const s of sections) {
    if (s.scope.startsWith('organization:')) config.organizations[s.scope.slice(13)] = s.value as OrganizationLimits;
    else if (s.scope.startsWith('project:')) config.projects[s.scope.slice(8)] = s.value as ProjectLimits;
  }
  return config;
}

/** Rate limits (section C of the platform spec): limiter service, headers, fault injection, model_limits. */
export const rateLimitModule: Module = {
  name: 'ratelimit',
  migrations: rateLimitMigrations,
  async provide(ctx) {
    // State lives in ctx (not in this module object), so two Standins in one process stay apart.
    const backend: LimiterBackend = ctx.settings.redisUrl ? createRedisBackend(ctx.settings.redisUrl) : createMemoryBackend(ctx.clock);
    ctx.services.ratelimit = createRateLimiter({ backend, clock: ctx.clock, config: await loadConfig(ctx.store.db) });
    ctx.services.faults = createFaults(ctx.clock);
  },
  config: [
    {
      at: 'root',
      key: 'rate_limits',
      schema: RateLimitsConfigSchema,
      async apply(ctx, tx, value) {
        await saveSection(tx, 'root', value, ctx.clock.now());
        ctx.services.ratelimit.setConfig(await loadConfig(tx));
      },
    },
    {
      at: 'organization',
      key: 'rate_limits',
      schema: OrganizationLimitsSchema,
      async apply(ctx, tx, value, { organizationId }) {
        await saveSection(tx, `organization:${organizationId}`, value, ctx.clock.now());
        ctx.services.ratelimit.setConfig(await loadConfig(tx));
      },
    },
    {
      at: 'project',
      key: 'rate_limits',
      schema: ProjectLimitsSchema,
      async apply(ctx, tx, value, { projectId }) {
        await saveSection(tx, `project:${projectId}`, value, ctx.clock.now());
        ctx.services.ratelimit.setConfig(await loadConfig(tx));
      },
    },
  ],
  routes(app, ctx) {
    rateLimitRoutes(app, ctx);
  },
  adminRoutes: rateLimitAdminRoutes,
  async reset(ctx) {
    ctx.services.faults.clear();
    await ctx.services.ratelimit.backend.reset();
    ctx.services.ratelimit.setConfig(await loadConfig(ctx.store.db));
  },
  async stop(ctx) {
    await ctx.services.ratelimit.backend.close();
  },
};
