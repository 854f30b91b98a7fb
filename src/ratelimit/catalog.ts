/**
 * The rate-limit catalog: per-model limits per usage tier, shared-limit groups, long-context limits,
 * organization tiers and overrides, project limits, the ramp rule and the monthly usage limits.
 * Everything here is pure data and lookups; the limiter (service.ts) turns a lookup into buckets.
 */

export const TIERS = ['free', 'tier_1', 'tier_2', 'tier_3', 'tier_4', 'tier_5'] as const;
export type Tier = (typeof TIERS)[number];

/** The six metrics of the spec (rule 1). Per-minute and per-day windows. */
export const METRICS = ['rpm', 'rpd', 'tpm', 'tpd', 'ipm', 'audio_mpm'] as const;
export type Metric = (typeof METRICS)[number];
/**
 * A model's limits for one tier. `batch_queue_tokens` is rule 4: the input tokens that pending batches of
 * the organization may hold for the model (batch-queue.ts); it is no bucket of the per-request limiter.
 */
export type Limits = Partial<Record<Metric, number>> & { batch_queue_tokens?: number };

export const MINUTE = 60_000;
export const DAY = 86_400_000;
export const WINDOW: Record<Metric, number> = { rpm: MINUTE, rpd: DAY, tpm: MINUTE, tpd: DAY, ipm: MINUTE, audio_mpm: MINUTE };
/** How the platform names each metric in its messages. */
export const METRIC_TEXT: Record<Metric, string> = {
  rpm: 'requests per min (RPM)',
  rpd: 'requests per day (RPD)',
  tpm: 'tokens per min (TPM)',
  tpd: 'tokens per day (TPD)',
  ipm: 'images per min (IPM)',
  audio_mpm: 'audio minutes per min',
};

export interface Price {
  /** Dollars per million input tokens. */
  input_per_million?: number;
  output_per_million?: number;
  per_image?: number;
  per_audio_minute?: number;
}

/** One limit definition: a model, or a shared-limit group of models. */
export interface LimitEntry {
  tiers: Partial<Record<Tier, Limits>>;
  /** Requests above `threshold_tokens` input tokens count against these separate limits instead. */
  long_context?: { threshold_tokens: number; tiers: Partial<Record<Tier, Limits>> };
  /** Requests of this model in flight at once, across all organizations; beyond it: 503 server_is_overloaded. */
  concurrency?: number;
  price?: Price;
}

export interface GroupEntry extends LimitEntry {
  models: string[];
}

export interface TierInfo {
  /** Dollars paid that qualify for the tier (spec: Free needs an allowed geography, i.e. 0). */
  qualification_usd: number;
  /** Approved monthly usage limit in dollars (rule 7). */
  usage_limit_usd: number;
}

export interface OrganizationLimits {
  tier?: Tier;
  /** Dollars paid so far; picks the tier when `tier` is not set ("growth in spend moves an organization up"). */
  paid_usd?: number;
  usage_limit_usd?: number;
  /** Per model or group name (or `*`): limits that replace the tier's for this organization. */
  models?: Record<string, Limits>;
}

export interface ProjectLimits {
  /** Per model or group name (or `*`): extra limits held by this project alone (never above the organization's). */
  models?: Record<string, Limits>;
}

export interface FineTuningLimits {
  max_active_jobs: number;
  max_jobs_per_day: number;
  max_training_tokens_per_day: number;
}

export interface RampRule {
  enabled: boolean;
  /** Input tokens per minute above which growth is policed (spec: "1 million input TPM"). */
  threshold_tpm: number;
  /** Allowed growth per period (spec: 50% …). */
  growth: number;
  /** … per this many milliseconds (spec: 15 minutes). */
  period_ms: number;
  /** Window of the meter that measures the current rate (one minute: TPM). */
  window_ms: number;
}

export interface RateLimitConfig {
  default_tier: Tier;
  usage_tiers: Record<Tier, TierInfo>;
  models: Record<string, LimitEntry>;
  groups: Record<string, GroupEntry>;
  organizations: Record<string, OrganizationLimits>;
  projects: Record<string, ProjectLimits>;
  ramp: RampRule;
  /** Retry-After of a 503 server_is_overloaded, ms. */
  overload_retry_after_ms: number;
  /** A concurrency slot whose request never reports back is freed after this long, ms. */
  lease_ttl_ms: number;
  fine_tuning: { models: string[]; tiers: Record<Tier, FineTuningLimits> };
}

const perTier = (rows: Record<Tier, Limits>) => rows;

/** The limits and price of a small model (gpt-4o-mini's), also the default for unlisted models. */
const smallModel = () => ({
  tiers: perTier({
    free: { rpm: 3, rpd: 200, tpm: 40_000, batch_queue_tokens: 200_000 },
    tier_1: { rpm: 500, rpd: 10_000, tpm: 200_000, tpd: 2_000_000, batch_queue_tokens: 2_000_000 },
    tier_2: { rpm: 5_000, tpm: 2_000_000, tpd: 20_000_000, batch_queue_tokens: 20_000_000 },
    tier_3: { rpm: 5_000, tpm: 4_000_000, tpd: 40_000_000, batch_queue_tokens: 40_000_000 },
    tier_4: { rpm: 10_000, tpm: 10_000_000, tpd: 1_000_000_000, batch_queue_tokens: 1_000_000_000 },
    tier_5: { rpm: 30_000, tpm: 150_000_000, tpd: 15_000_000_000, batch_queue_tokens: 15_000_000_000 },
  }),
  price: { input_per_million: 0.15, output_per_million: 0.6 },
});

/**
 * Built-in catalog: realistic limits of the platform's public tier tables (illustrative, not
 * authoritative — the spec does not give the numbers). Any model not listed uses the `*` entry, per model.
 */
export function defaultConfig(): RateLimitConfig {
  return {
    default_tier: 'tier_1',
    usage_tiers: {
      free: { qualification_usd: 0, usage_limit_usd: 100 },
      tier_1: { qualification_usd: 5, usage_limit_usd: 100 },
      tier_2: { qualification_usd: 50, usage_limit_usd: 500 },
      tier_3: { qualification_usd: 100, usage_limit_usd: 1_000 },
      tier_4: { qualification_usd: 250, usage_limit_usd: 5_000 },
      tier_5: { qualification_usd: 1_000, usage_limit_usd: 200_000 },
    },
    models: {
      // Unlisted models get the limits and price of a small model.
      '*': smallModel(),
      'gpt-image-1': {
        tiers: perTier({
          free: { rpm: 1, ipm: 1, tpm: 10_000 },
          tier_1: { rpm: 50, ipm: 5, tpm: 100_000 },
          tier_2: { rpm: 100, ipm: 20, tpm: 250_000 },
          tier_3: { rpm: 500, ipm: 50, tpm: 800_000 },
          tier_4: { rpm: 2_000, ipm: 150, tpm: 3_000_000 },
          tier_5: { rpm: 5_000, ipm: 250, tpm: 8_000_000 },
        }),
        price: { input_per_million: 5, output_per_million: 40, per_image: 0.04 },
      },
      'gpt-realtime': {
        tiers: perTier({
          free: { rpm: 3, rpd: 100, tpm: 10_000, audio_mpm: 1 },
          tier_1: { rpm: 200, rpd: 1_000, tpm: 40_000, audio_mpm: 10 },
          tier_2: { rpm: 400, tpm: 200_000, audio_mpm: 50 },
          tier_3: { rpm: 5_000, tpm: 800_000, audio_mpm: 200 },
          tier_4: { rpm: 10_000, tpm: 4_000_000, audio_mpm: 500 },
          tier_5: { rpm: 20_000, tpm: 15_000_000, audio_mpm: 1_000 },
        }),
        price: { input_per_million: 4, output_per_million: 16, per_audio_minute: 0.06 },
      },
    },
    groups: {
      'gpt-4o': {
        models: ['gpt-4o', 'gpt-4o-2024-05-13', 'gpt-4o-2024-08-06', 'gpt-4o-2024-11-20', 'chatgpt-4o-latest'],
        tiers: perTier({
          free: { rpm: 3, rpd: 200, tpm: 10_000, batch_queue_tokens: 90_000 },
          tier_1: { rpm: 500, tpm: 30_000, tpd: 90_000, batch_queue_tokens: 90_000 },
          tier_2: { rpm: 5_000, tpm: 450_000, tpd: 1_350_000, batch_queue_tokens: 1_350_000 },
          tier_3: { rpm: 5_000, tpm: 800_000, tpd: 50_000_000, batch_queue_tokens: 50_000_000 },
          tier_4: { rpm: 10_000, tpm: 2_000_000, tpd: 200_000_000, batch_queue_tokens: 200_000_000 },
          tier_5: { rpm: 10_000, tpm: 30_000_000, tpd: 5_000_000_000, batch_queue_tokens: 5_000_000_000 },
        }),
        price: { input_per_million: 2.5, output_per_million: 10 },
      },
      'gpt-4o-mini': {
        models: ['gpt-4o-mini', 'gpt-4o-mini-2024-07-18'],
        ...smallModel(),
      },
      'gpt-4.1': {
        models: ['gpt-4.1', 'gpt-4.1-2025-04-14'],
        tiers: perTier({
          free: { rpm: 3, rpd: 200, tpm: 10_000, batch_queue_tokens: 90_000 },
          tier_1: { rpm: 500, tpm: 30_000, tpd: 900_000, batch_queue_tokens: 90_000 },
          tier_2: { rpm: 5_000, tpm: 450_000, tpd: 1_350_000, batch_queue_tokens: 1_350_000 },
          tier_3: { rpm: 5_000, tpm: 800_000, tpd: 50_000_000, batch_queue_tokens: 50_000_000 },
          tier_4: { rpm: 10_000, tpm: 2_000_000, tpd: 200_000_000, batch_queue_tokens: 200_000_000 },
          tier_5: { rpm: 10_000, tpm: 30_000_000, tpd: 5_000_000_000, batch_queue_tokens: 5_000_000_000 },
        }),
        long_context: {
          threshold_tokens: 128_000,
          tiers: perTier({
            free: { rpm: 1, rpd: 20, tpm: 200_000 },
            tier_1: { rpm: 50, tpm: 400_000, tpd: 2_000_000 },
            tier_2: { rpm: 500, tpm: 1_000_000, tpd: 10_000_000 },
            tier_3: { rpm: 1_000, tpm: 2_000_000, tpd: 100_000_000 },
            tier_4: { rpm: 2_000, tpm: 4_000_000, tpd: 400_000_000 },
            tier_5: { rpm: 5_000, tpm: 10_000_000, tpd: 2_000_000_000 },
          }),
        },
        price: { input_per_million: 2, output_per_million: 8 },
      },
    },
    organizations: {},
    projects: {},
    ramp: { enabled: true, threshold_tpm: 1_000_000, growth: 0.5, period_ms: 15 * MINUTE, window_ms: MINUTE },
    overload_retry_after_ms: 1_000,
    lease_ttl_ms: 15 * MINUTE,
    fine_tuning: {
      models: ['gpt-4o-2024-08-06', 'gpt-4o-mini-2024-07-18', 'gpt-4.1-2025-04-14', 'gpt-4.1-mini-2025-04-14'],
      tiers: {
        free: { max_active_jobs: 0, max_jobs_per_day: 0, max_training_tokens_per_day: 0 },
        tier_1: { max_active_jobs: 3, max_jobs_per_day: 48, max_training_tokens_per_day: 2_000_000 },
        tier_2: { max_active_jobs: 5, max_jobs_per_day: 100, max_training_tokens_per_day: 20_000_000 },
        tier_3: { max_active_jobs: 8, max_jobs_per_day: 200, max_training_tokens_per_day: 100_000_000 },
        tier_4: { max_active_jobs: 12, max_jobs_per_day: 400, max_training_tokens_per_day: 500_000_000 },
        tier_5: { max_active_jobs: 20, max_jobs_per_day: 800, max_training_tokens_per_day: 2_000_000_000 },
      },
    },
  };
}

/** What the config file may say (snake_case, all optional); durations in ms or as text are parsed by the module. */
export interface RateLimitConfigInput {
  replace_defaults?: boolean;
  default_tier?: Tier;
  usage_tiers?: Partial<Record<Tier, Partial<TierInfo>>>;
  models?: Record<string, LimitEntry>;
  groups?: Record<string, GroupEntry>;
  organizations?: Record<string, OrganizationLimits>;
  projects?: Record<string, ProjectLimits>;
  ramp?: Partial<RampRule>;
  overload_retry_after_ms?: number;
  lease_ttl_ms?: number;
  fine_tuning?: { models?: string[]; tiers?: Partial<Record<Tier, FineTuningLimits>> };
}

/**
 * Merges a config file's `rate_limits` onto the built-in catalog: a model, group, organization or
 * project named in the file replaces the built-in entry of that name; `replace_defaults` drops the built-in
 * models and groups altogether.
 */
export function mergeConfig(base: RateLimitConfig, input: RateLimitConfigInput): RateLimitConfig {
  const out: RateLimitConfig = structuredClone(base);
  if (input.replace_defaults) {
    out.models = {};
    out.groups = {};
  }
  if (input.default_tier) out.default_tier = input.default_tier;
  for (const [tier, info] of Object.entries(input.usage_tiers ?? {}))
    out.usage_tiers[tier as Tier] = { ...out.usage_tiers[tier as Tier], ...info };
  Object.assign(out.models, input.models ?? {});
  for (const [name, group] of Object.entries(input.groups ?? {})) {
    // A model moved into a file-declared group leaves the built-in group it was in.
    for (const g of Object.values(out.groups)) g.models = g.models.filter((m) => !group.models.includes(m));
    out.groups[name] = group;
  }
  Object.assign(out.organizations, input.organizations ?? {});
  Object.assign(out.projects, input.projects ?? {});
  Object.assign(out.ramp, input.ramp ?? {});
  if (input.overload_retry_after_ms !== undefined) out.overload_retry_after_ms = input.overload_retry_after_ms;
  if (input.lease_ttl_ms !== undefined) out.lease_ttl_ms = input.lease_ttl_ms;
  if (input.fine_tuning?.models) out.fine_tuning.models = input.fine_tuning.models;
  Object.assign(out.fine_tuning.tiers, input.fine_tuning?.tiers ?? {});
  return out;
}

/** A model resolved to the entry whose limits it uses and the key those limits are counted under. */
export interface Resolved {
  /** Counter name: the group's name for grouped models (one shared limit), else the model's. */
  limitKey: string;
  entry: LimitEntry;
  /** The entry's name in the catalog (`*` for the fallback). */
  entryName: string;
}

/** Finds the limit entry of a model: its shared-limit group, its own entry, a `prefix*` entry, or `*`. */
export function resolveModel(config: RateLimitConfig, model: string): Resolved {
  for (const [name, group] of Object.entries(config.groups)) {
    if (group.models.includes(model)) return { limitKey: `group:${name}`, entry: group, entryName: name };
  }
  const own = config.models[model];
  if (own) return { limitKey: model, entry: own, entryName: model };
  let best: string | null = null;
  for (const name of Object.keys(config.models)) {
    if (name.length > 1 && name.endsWith('*') && model.startsWith(name.slice(0, -1)) && (!best || name.length > best.length)) best = name;
  }
  if (best) return { limitKey: model, entry: config.models[best], entryName: best };
  return { limitKey: model, entry: config.models['*'] ?? { tiers: {} }, entryName: '*' };
}

/** The tier of an organization: set explicitly, else the highest whose qualification its payments meet, else the default. */
export function tierOf(config: RateLimitConfig, organizationId: string): Tier {
  const org = config.organizations[organizationId];
  if (org?.tier) return org.tier;
  if (org?.paid_usd !== undefined) {
    let tier: Tier = 'free';
    for (const t of TIERS) if (org.paid_usd >= config.usage_tiers[t].qualification_usd) tier = t;
    return tier;
  }
  return config.default_tier;
}

/** The monthly usage limit of an organization, dollars. */
export function usageLimitOf(config: RateLimitConfig, organizationId: string): number {
  return config.organizations[organizationId]?.usage_limit_usd ?? config.usage_tiers[tierOf(config, organizationId)].usage_limit_usd;
}

/** Picks an override by entry name, then by model name, then `*`. */
function overrideFor(table: Record<string, Limits> | undefined, entryName: string, model: string): Limits | undefined {
  if (!table) return undefined;
  return table[entryName] ?? table[model] ?? table['*'];
}

/** The organization's limits for a model (tier limits with the organization's overrides on top). */
export function organizationLimits(config: RateLimitConfig, organizationId: string, model: string, longContext: boolean): Limits {
  const r = resolveModel(config, model);
  const tier = tierOf(config, organizationId);
  const base = longContext && r.entry.long_context ? r.entry.long_context.tiers[tier] : r.entry.tiers[tier];
  const override = overrideFor(config.organizations[organizationId]?.models, r.entryName, model);
  return { ...(base ?? {}), ...(override ?? {}) };
}

/** The project's own limits for a model, or undefined when the project has none. */
export function projectLimits(config: RateLimitConfig, projectId: string, model: string): Limits | undefined {
  const r = resolveModel(config, model);
  return overrideFor(config.projects[projectId]?.models, r.entryName, model);
}

/**
 * Rule 4: the batch queue limit of an organization for a model (input tokens its pending batches may hold),
 * counted under the same key as the model's other limits (a shared-limit group shares one queue).
 * `limit` undefined: not limited (the tokens are still counted).
 */
export function batchQueueLimit(config: RateLimitConfig, organizationId: string, model: string): { limitKey: string; limit?: number } {
  return {
    limitKey: resolveModel(config, model).limitKey,
    limit: organizationLimits(config, organizationId, model, false).batch_queue_tokens,
  };
}
