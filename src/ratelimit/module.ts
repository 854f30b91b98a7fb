import type { Static } from 'typebox';
import { parseDuration } from '../core/clock.js';
import { configSection, type Ctx, type Module } from '../core/module.js';
import type { Exec } from '../store/db.js';
import {
  defaultConfig,
  mergeConfig,
  type OrganizationLimits,
  type ProjectLimits,
  type RateLimitConfig,
  type RateLimitConfigInput,
} from './catalog.js';
import { createBatchQueue } from './batch-queue.js';
import { createFaults, FAULTS, type Faults } from './fault-sync.js';
import type { LimiterBackend } from './interface.js';
import { createMemoryBackend } from './memory.js';
import { createRedisBackend } from './redis.js';
import { rateLimitAdminRoutes, rateLimitRoutes } from './routes.js';
import { OrganizationLimitsSchema, ProjectLimitsSchema, RateLimitsConfigSchema } from './schemas.js';
import { createRateLimiter, OUTAGE_POLICIES, type OutagePolicy, type RateLimitService } from './service.js';
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

/** The config file's root `rate_limits` section. */
type RateLimitsFile = Static<typeof RateLimitsConfigSchema>;

/** The config file's `rate_limits` (durations as text) in the catalog's terms. */
export function configInput(file: RateLimitsFile): RateLimitConfigInput {
  const { ramp, overload_retry_after, concurrency_lease_ttl, ...rest } = file;
  const out: RateLimitConfigInput = { ...rest };
  if (ramp) {
    const { period, window, ...r } = ramp;
    out.ramp = { ...r, ...(period ? { period_ms: parseDuration(period) } : {}), ...(window ? { window_ms: parseDuration(window) } : {}) };
  }
  if (overload_retry_after) out.overload_retry_after_ms = parseDuration(overload_retry_after);
  if (concurrency_lease_ttl) out.lease_ttl_ms = parseDuration(concurrency_lease_ttl);
  return out;
}

/** The catalog from the saved sections: built-ins, the root section, then per-organization and per-project sections. */
export async function loadConfig(db: Exec): Promise<RateLimitConfig> {
  return configOf(await loadSections(db));
}

function configOf(sections: { scope: string; value: unknown }[]): RateLimitConfig {
  let config = defaultConfig();
  const root = sections.find((s) => s.scope === 'root');
  // Saved only after the config file validated it.
  if (root) config = mergeConfig(config, configInput(root.value as RateLimitsFile));
  for (const s of sections) {
    if (s.scope.startsWith('organization:')) config.organizations[s.scope.slice(13)] = s.value as OrganizationLimits;
    else if (s.scope.startsWith('project:')) config.projects[s.scope.slice(8)] = s.value as ProjectLimits;
  }
  return config;
}

/** The outage policy of the settings (`--rate-limit-outage`). */
function outagePolicy(ctx: Ctx): OutagePolicy {
  const value = ctx.settings.rateLimitOutage;
  if (!(OUTAGE_POLICIES as readonly string[]).includes(value))
    throw new Error(`--rate-limit-outage must be 'closed' or 'open', got '${value}'`);
  return value as OutagePolicy;
}

/** The concern of `ctx.changes` that a change of the catalog (tiers, overrides, limits) bumps. */
const CATALOG = 'rate_limit_config';

/** Saves a section and puts the catalog it makes in force on this instance; the others follow (watch.ts). */
async function applySection(ctx: Ctx, tx: Exec, scope: string, value: unknown) {
  await saveSection(tx, scope, value, ctx.clock.now());
  await ctx.changes.bump(tx, CATALOG);
  ctx.services.ratelimit.setConfig(await loadConfig(tx));
}

/** Re-reads the catalog when another instance changed it (the limiter's caches are dropped only then). */
function followConfig(ctx: Ctx): () => Promise<void> {
  let seen = '';
  return async () => {
    try {
      const sections = await loadSections(ctx.store.db);
      const text = JSON.stringify(sections);
      if (text === seen) return;
      seen = text;
      ctx.services.ratelimit.setConfig(configOf(sections));
    } catch (err) {
      ctx.log.warn({ err }, 'reading the rate-limit catalog failed; keeping the last one');
    }
  };
}

/** Rate limits (section C of the platform spec): limiter service, headers, fault injection, model_limits. */
export const rateLimitModule: Module = {
  name: 'ratelimit',
  migrations: rateLimitMigrations,
  async provide(ctx) {
    // State lives in ctx (not in this module object), so two Standins in one process stay apart.
    const onOutage = outagePolicy(ctx);
    const backend: LimiterBackend = ctx.settings.redisUrl
      ? createRedisBackend(ctx.settings.redisUrl, { log: ctx.log })
      : createMemoryBackend(ctx.clock);
    ctx.services.ratelimit = createRateLimiter({
      backend,
      clock: ctx.clock,
      config: await loadConfig(ctx.store.db),
      onOutage,
      log: ctx.log,
    });
    ctx.services.batchQueue = createBatchQueue(ctx);
    ctx.services.faults = createFaults(ctx);
    // Other instances' changes of faults and of the catalog (core/changes.ts).
    ctx.changes.on(FAULTS, ctx.services.faults.refresh);
    ctx.changes.on(CATALOG, followConfig(ctx));
  },
  async init(ctx) {
    await ctx.services.faults.refresh();
  },
  config: [
    configSection({
      at: 'root',
      key: 'rate_limits',
      schema: RateLimitsConfigSchema,
      apply: (ctx, tx, value) => applySection(ctx, tx, 'root', value),
    }),
    configSection({
      at: 'organization',
      key: 'rate_limits',
      schema: OrganizationLimitsSchema,
      apply: (ctx, tx, value, { organizationId }) => applySection(ctx, tx, `organization:${organizationId}`, value),
    }),
    configSection({
      at: 'project',
      key: 'rate_limits',
      schema: ProjectLimitsSchema,
      apply: (ctx, tx, value, { projectId }) => applySection(ctx, tx, `project:${projectId}`, value),
    }),
  ],
  routes(app, ctx) {
    rateLimitRoutes(app, ctx);
  },
  adminRoutes: rateLimitAdminRoutes,
  health(ctx) {
    return { ...ctx.services.ratelimit.backend.health(), required: outagePolicy(ctx) === 'closed' };
  },
  async reset(ctx) {
    await ctx.services.faults.reset();
    await ctx.services.ratelimit.reset();
    ctx.services.ratelimit.setConfig(await loadConfig(ctx.store.db));
    await ctx.changes.bump(ctx.store.db, CATALOG);
  },
  async stop(ctx) {
    await ctx.services.faults.flush();
    await ctx.services.ratelimit.backend.close();
  },
};
