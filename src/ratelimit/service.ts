import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.js';
import { ApiError } from '../core/errors.js';
import { queueReplyHeaders } from '../core/reply-headers.js';
import {
  METRIC_TEXT,
  WINDOW,
  organizationLimits,
  projectLimits,
  resolveModel,
  tierOf,
  usageLimitOf,
  type Limits,
  type Metric,
  type Price,
  type RateLimitConfig,
  type Tier,
} from './catalog.js';
import { formatDuration } from './duration.js';
import {
  BackendUnavailable,
  type AdmitPlan,
  type BucketSpec,
  type BucketState,
  type Decision,
  type LimiterBackend,
  type RampSpec,
} from './interface.js';
import { monthKey, msToMonthEnd } from './month.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route is admitted by the model limiter in its handler (`admit`): a request refused before that
     * (bad input) is counted by the error handler with `countRefused`, so failed requests count too.
     */
    rateLimit?: 'model';
  }
}

/** The route `config` of a route whose handler admits its requests by model: `{ config: { ...needs(…), ...modelLimited } }`. */
export const modelLimited = { rateLimit: 'model' } as const;

/** Durations as the `x-ratelimit-reset-*` headers write them (`20ms`, `1.5s`, `6m0s`), for other areas' limits. */
export { formatDuration };

/** Who is charged: a platform principal fits (organization and project). */
export interface Payer {
  organizationId: string;
  projectId: string;
}

/** What a model-consuming request asks for. */
export interface AdmitInput {
  model: string;
  /** `max_tokens`, `max_completion_tokens`, `max_output_tokens` … (the largest the request sets). */
  maxTokens?: number | null;
  /** The request's text (messages, instructions, input); only its length is used. */
  inputText?: string | readonly string[];
  /** Or its character count directly. */
  inputChars?: number;
  images?: number;
  audioMinutes?: number;
}

/** What the work actually used, reported when it ends. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  images?: number;
  audioMinutes?: number;
  /** The work failed; without token counts nothing is charged for tokens (requests still count). */
  failed?: boolean;
}

/** A serializable record of an admission, so another process (a run worker) can release it. */
export interface Ticket {
  organizationId: string;
  model: string;
  inputTokens: number;
  buckets: { key: string; hash: string; field: string; limit: number; windowMs: number; metric: Metric; charged: number }[];
  concurrency?: { key: string; leaseId: string };
  price?: Price;
}

export interface Admission {
  /** The `x-ratelimit-*` headers of this request (already queued on the reply when `request` was given). */
  headers: Record<string, string>;
  ticket: Ticket;
  /** Reconciles tokens with actual usage, frees the concurrency slot, adds spend. Safe to call twice. */
  release(usage?: Usage): Promise<void>;
}

/** Published as `ctx.services.ratelimit`. */
export interface RateLimitService {
  /** Admits a model-consuming request or throws the 429/503 ApiError (headers included). */
  admit(request: FastifyRequest | null, payer: Payer, input: AdmitInput): Promise<Admission>;
  /**
   * Counts a request refused before its admission (its body was invalid) against the request counters
   * (RPM, RPD) of the model it names, as a refused admission counts: throws the 429 once they are spent,
   * so a client repeating a bad request is limited like any other. Nothing is counted while the backend
   * is unreachable (the request is refused anyway).
   */
  countRefused(request: FastifyRequest | null, payer: Payer, model: string): Promise<void>;
  /** Releases an admission from its ticket (e.g. in the worker that finished a run). */
  release(ticket: Ticket, usage?: Usage): Promise<void>;
  /** Sets `x-ratelimit-*` headers on a reply. */
  setHeaders(reply: FastifyReply, headers: Record<string, string>): void;
  /** The organization's fine-tuning limits (GET /v1/fine_tuning/model_limits). */
  fineTuningLimits(organizationId: string): { tier: Tier; models: string[]; limits: RateLimitConfig['fine_tuning']['tiers'][Tier] };
  config(): RateLimitConfig;
  setConfig(config: RateLimitConfig): void;
  /**
   * Adds to the organization's monthly spend (rule 7) the cost of work done without an admission (the
   * lines of a batch, held to the batch queue of rule 4 instead), at the model's price.
   */
  charge(organizationId: string, model: string, usage: Usage): Promise<void>;
  /** This month's spend of an organization, dollars. */
  spend(organizationId: string): Promise<number>;
  /**
   * Refuses new work of an organization whose spend has reached its monthly usage limit (rule 7) with the
   * 429 `insufficient_quota` a request gets then: for work admitted without a request of its own (a batch).
   */
  checkQuota(organizationId: string): Promise<void>;
  /** Forgets every counter (admin reset); a 503 while the backend is unreachable. */
  reset(): Promise<void>;
  backend: LimiterBackend;
}

/**
 * What the limiter does while its backend cannot decide (Redis unreachable): `closed` refuses with the
 * platform's 503 (retry after a second), `open` admits uncounted (no `x-ratelimit-*` headers).
 */
export type OutagePolicy = 'open' | 'closed';
export const OUTAGE_POLICIES: readonly OutagePolicy[] = ['closed', 'open'];

/** The 503 of a request the limiter cannot decide (fail closed): the platform's overload answer, retried by SDKs. */
export function backendDownError(): ApiError {
  return new ApiError('service_unavailable_error', 'The service is temporarily unable to check rate limits. You can retry your request.', {
    code: 'server_is_overloaded',
    headers: retryHeaders(1_000),
  });
}

/** The monthly usage limit's refusal (rule 7): not cured by retrying, so the SDKs are told not to. */
function quotaError(headers: Record<string, string>): ApiError {
  return new ApiError('insufficient_quota', 'You exceeded your current quota, please check your plan and billing details.', {
    status: 429,
    code: 'insufficient_quota',
    headers: { ...headers, 'x-should-retry': 'false' },
  });
}

/** Characters per token of the estimate (rule 3 counts an estimate from the character count). */
export const CHARS_PER_TOKEN = 4;
/** The largest Retry-After Standin sends: what the openai SDK honours. */
export const MAX_RETRY_AFTER_MS = 60_000;

const TOKEN_METRICS = new Set<Metric>(['tpm', 'tpd']);

/** What a bucket counts: 0 requests, 1 tokens, 2 images, 3 audio minutes. */
type CostKind = 0 | 1 | 2 | 3;
const COST_KIND: Record<Metric, CostKind> = { rpm: 0, rpd: 0, tpm: 1, tpd: 1, ipm: 2, audio_mpm: 3 };

interface BucketTemplate {
  key: string;
  hash: string;
  field: string;
  metric: Metric;
  limit: number;
  windowMs: number;
  scope: 'organization' | 'project';
  kind: CostKind;
}

/** Everything about (organization, project, model, long context) that does not change per request. */
interface Template {
  buckets: BucketTemplate[];
  /** The same buckets as the backend takes them (reused by every request). */
  specs: BucketSpec[];
  /** Indexes into buckets for the three header trios (-1: absent). */
  requestsAt: number;
  tokensAt: number;
  projectTokensAt: number;
  concurrency?: { key: string; max: number };
  quota: { limit: number };
  ramp?: Omit<RampSpec, 'tokens'>;
  price?: Price;
  /** Input tokens above which the long-context limits apply (when the model has them). */
  longContextAbove?: number;
  /** Indexes of the request counters (RPM, RPD): what a request refused before admission takes. */
  requestBuckets: number[];
}

const requestsHeaders = ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'] as const;
const tokensHeaders = ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'] as const;
const projectHeaders = [
  'x-ratelimit-limit-project-tokens',
  'x-ratelimit-remaining-project-tokens',
  'x-ratelimit-reset-project-tokens',
] as const;

/** `Retry-After` (whole seconds, rounded up) and `retry-after-ms`, both capped at 60 s. */
export function retryHeaders(ms: number): Record<string, string> {
  const capped = Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.ceil(ms)));
  return { 'retry-after': String(Math.ceil(capped / 1000)), 'retry-after-ms': String(capped) };
}

/**
 * Builds a refusal without a stack trace: refusals are answers, not bugs, and capturing a stack is
 * most of the cost of a refused decision.
 */
function quietly<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** A request larger than a whole limit: no wait would help. */
function tooLarge(b: BucketTemplate, cost: number, payer: Payer, model: string): ApiError {
  const owner = b.scope === 'project' ? `project ${payer.projectId}` : `organization ${payer.organizationId}`;
  return quietly(
    () =>
      new ApiError(
        'rate_limit_error',
        `Request too large for ${model} in ${owner} on ${METRIC_TEXT[b.metric]}: Limit ${b.limit}, Requested ${cost}. The input or output tokens must be reduced in order to run successfully.`,
        { code: 'rate_limit_exceeded', headers: { 'x-should-retry': 'false' } },
      ),
  );
}

const USAGE_NUMBERS = ['inputTokens', 'outputTokens', 'totalTokens', 'images', 'audioMinutes'] as const;

/** Builds the limiter on a backend; `clock` dates the monthly usage counters. */
export function createRateLimiter(opts: {
  backend: LimiterBackend;
  clock: Clock;
  config: RateLimitConfig;
  onOutage?: OutagePolicy;
  log?: { warn(obj: object, msg?: string): void };
}): RateLimitService {
  const { backend, clock } = opts;
  const failOpen = opts.onOutage === 'open';
  let config = opts.config;
  // organization → project → model → [normal, long-context]: nested maps, so no key is built per request.
  let templates = new Map<string, Map<string, Map<string, [Template?, Template?]>>>();
  let cached = 0;

  function template(payer: Payer, model: string, long: boolean): Template {
    let byProject = templates.get(payer.organizationId);
    if (!byProject) templates.set(payer.organizationId, (byProject = new Map()));
    let byModel = byProject.get(payer.projectId);
    if (!byModel) byProject.set(payer.projectId, (byModel = new Map()));
    let pair = byModel.get(model);
    if (!pair) byModel.set(model, (pair = [undefined, undefined]));
    const hit = pair[long ? 1 : 0];
    if (hit) return hit;
    if (++cached > 50_000) {
      templates = new Map();
      cached = 0;
    }
    const t = build(payer, model, long);
    pair[long ? 1 : 0] = t;
    return t;
  }

  function build(payer: Payer, model: string, long: boolean): Template {
    const r = resolveModel(config, model);
    const lk = long && r.entry.long_context ? `${r.limitKey}:long` : r.limitKey;
    const buckets: BucketTemplate[] = [];
    const add = (scope: BucketTemplate['scope'], owner: string, limits: Limits) => {
      for (const [metric, limit] of Object.entries(limits) as [Metric, number][]) {
        // Only the per-request metrics are buckets (`batch_queue_tokens` is rule 4, batch-queue.ts).
        if (!(metric in WINDOW)) continue;
        if (limit === undefined || limit === null || !(limit > 0)) continue;
        buckets.push({
          key: `${owner}:${lk}:${metric}`,
          hash: `${owner}:${lk}`,
          field: metric,
          metric,
          limit,
          windowMs: WINDOW[metric],
          scope,
          kind: COST_KIND[metric],
        });
      }
    };
    add('organization', payer.organizationId, organizationLimits(config, payer.organizationId, model, long));
    const own = projectLimits(config, payer.projectId, model);
    if (own) add('project', payer.projectId, own);
    const find = (scope: BucketTemplate['scope'], ...metrics: Metric[]) => {
      for (const m of metrics) {
        const i = buckets.findIndex((b) => b.scope === scope && b.metric === m);
        if (i >= 0) return i;
      }
      return -1;
    };
    const ramp = config.ramp;
    return {
      buckets,
      specs: buckets.map((b) => ({
        key: b.key,
        hash: b.hash,
        field: b.field,
        limit: b.limit,
        windowMs: b.windowMs,
        chargeOnRefusal: b.metric === 'rpm',
      })),
      requestsAt: find('organization', 'rpm', 'rpd'),
      tokensAt: find('organization', 'tpm', 'tpd'),
      projectTokensAt: find('project', 'tpm', 'tpd'),
      concurrency: r.entry.concurrency ? { key: `conc:${lk}`, max: r.entry.concurrency } : undefined,
      quota: { limit: usageLimitOf(config, payer.organizationId) },
      ramp: ramp.enabled
        ? {
            key: `${payer.organizationId}:${lk}`,
            thresholdPerMin: ramp.threshold_tpm,
            ratio: 1 + ramp.growth,
            windowMs: ramp.window_ms,
            lagMinutes: Math.min(120, Math.max(3, Math.round(ramp.period_ms / 60_000))),
          }
        : undefined,
      price: r.entry.price,
      longContextAbove: r.entry.long_context?.threshold_tokens,
      requestBuckets: buckets.flatMap((b, i) => (b.kind === 0 ? [i] : [])),
    };
  }

  function headersOf(t: Template, states: BucketState[]): Record<string, string> {
    const h: Record<string, string> = {};
    const put = (names: readonly [string, string, string], at: number) => {
      if (at < 0) return;
      h[names[0]] = String(t.buckets[at].limit);
      h[names[1]] = String(states[at].remaining);
      h[names[2]] = formatDuration(states[at].resetMs);
    };
    put(requestsHeaders, t.requestsAt);
    put(tokensHeaders, t.tokensAt);
    put(projectHeaders, t.projectTokensAt);
    return h;
  }

  function refusalError(t: Template, decision: Decision, payer: Payer, model: string, costs: number[]): ApiError {
    const headers = headersOf(t, decision.states);
    const r = decision.refusal!;
    switch (r.kind) {
      case 'quota':
        return quotaError(headers);
      case 'bucket': {
        const b = t.buckets[r.index];
        const owner = b.scope === 'project' ? `project ${payer.projectId}` : `organization ${payer.organizationId}`;
        return new ApiError(
          'rate_limit_error',
          `Rate limit reached for ${model} in ${owner} on ${METRIC_TEXT[b.metric]}: Limit ${b.limit}, Used ${r.used}, Requested ${costs[r.index]}. ` +
            `Please try again in ${formatDuration(r.retryAfterMs)}.`,
          { code: 'rate_limit_exceeded', headers: { ...headers, ...retryHeaders(r.retryAfterMs) } },
        );
      }
      case 'ramp':
        return new ApiError(
          'rate_limit_error',
          `Your request rate for ${model} rose too quickly. Reduce your request rate, then increase it gradually ` +
            `(by at most ${Math.round(config.ramp.growth * 100)}% every ${formatDuration(config.ramp.period_ms)}).`,
          { code: 'slow_down', headers: { ...headers, ...retryHeaders(r.retryAfterMs) } },
        );
      case 'concurrency':
        return new ApiError(
          'service_unavailable_error',
          `The model ${model} is currently overloaded with other requests. You can retry your request.`,
          {
            code: 'server_is_overloaded',
            headers: { ...headers, ...retryHeaders(config.overload_retry_after_ms) },
          },
        );
    }
  }

  // The month's name is recomputed only when the month ends (admit is hot).
  let month = '';
  let monthEndsAt = -Infinity;
  function spendKey(organizationId: string) {
    const now = clock.now();
    if (now >= monthEndsAt || now < monthEndsAt - 32 * 86_400_000) {
      month = monthKey(now);
      monthEndsAt = now + msToMonthEnd(now);
    }
    return `spend:${organizationId}:${month}`;
  }

  /**
   * Usage as counters may take it: each count a finite, non-negative integer (audio minutes finite and
   * non-negative). A counter that took `NaN` would refuse every later request of its organization until a
   * reset; what reports usage (a model's answer) is checked before, and this is the last guard: anything
   * else counts 0, logged.
   */
  function countable(usage: Usage, model: string): Usage {
    let out: Usage | undefined;
    for (const k of USAGE_NUMBERS) {
      const v = usage[k];
      if (v === undefined || (typeof v === 'number' && v >= 0 && (k === 'audioMinutes' ? Number.isFinite(v) : Number.isSafeInteger(v))))
        continue;
      opts.log?.warn({ model, field: k, value: String(v).slice(0, 40) }, `usage ${k} is not a non-negative count; counted as 0`);
      (out ??= { ...usage })[k] = 0;
    }
    return out ?? usage;
  }

  async function release(ticket: Ticket, reported: Usage = {}): Promise<void> {
    const usage = countable(reported, ticket.model);
    const counted = usage.totalTokens !== undefined || usage.inputTokens !== undefined || usage.outputTokens !== undefined;
    const input = usage.inputTokens ?? (counted || usage.failed ? 0 : ticket.inputTokens);
    const output = usage.outputTokens ?? 0;
    const tokens = usage.totalTokens ?? (counted ? input + output : usage.failed ? 0 : undefined);
    const buckets = [];
    for (const b of ticket.buckets) {
      const actual = TOKEN_METRICS.has(b.metric) ? tokens : b.metric === 'ipm' ? usage.images : usage.audioMinutes;
      if (actual === undefined || actual === b.charged) continue;
      buckets.push({ key: b.key, hash: b.hash, field: b.field, limit: b.limit, windowMs: b.windowMs, delta: actual - b.charged });
    }
    const p = ticket.price ?? {};
    const amount =
      (input * (p.input_per_million ?? 0)) / 1e6 +
      (output * (p.output_per_million ?? 0)) / 1e6 +
      (usage.images ?? 0) * (p.per_image ?? 0) +
      (usage.audioMinutes ?? 0) * (p.per_audio_minute ?? 0);
    const now = clock.now();
    await backend.settle({
      buckets,
      concurrency: ticket.concurrency,
      spend: amount > 0 ? { key: spendKey(ticket.organizationId), amount, ttlMs: msToMonthEnd(now) + 86_400_000 } : undefined,
    });
  }

  return {
    backend,
    config: () => config,
    setConfig(next) {
      config = next;
      templates = new Map();
      cached = 0;
    },
    setHeaders(reply, headers) {
      for (const k in headers) reply.header(k, headers[k]);
    },
    async spend(organizationId) {
      try {
        return await backend.spend(spendKey(organizationId));
      } catch (err) {
        throw err instanceof BackendUnavailable ? backendDownError() : err;
      }
    },
    async checkQuota(organizationId) {
      let spent: number;
      try {
        spent = await backend.spend(spendKey(organizationId));
      } catch (err) {
        if (!(err instanceof BackendUnavailable)) throw err;
        if (!failOpen) throw backendDownError();
        return;
      }
      if (spent >= usageLimitOf(config, organizationId)) throw quotaError({});
    },
    async reset() {
      try {
        await backend.reset();
      } catch (err) {
        throw err instanceof BackendUnavailable ? backendDownError() : err;
      }
    },
    fineTuningLimits(organizationId) {
      const tier = tierOf(config, organizationId);
      return { tier, models: config.fine_tuning.models, limits: config.fine_tuning.tiers[tier] };
    },
    release,
    async countRefused(request, payer, model) {
      const t = template(payer, model, false);
      const at = t.requestBuckets;
      if (!at.length) return;
      let decision: Decision;
      try {
        decision = await backend.admit({ buckets: at.map((i) => t.specs[i]), costs: at.map(() => 1) });
      } catch (err) {
        if (err instanceof BackendUnavailable) return;
        throw err;
      }
      // Headers and refusal are read against the template's own indexes.
      const states: BucketState[] = t.buckets.map(() => ({ remaining: 0, resetMs: 0 }));
      at.forEach((i, k) => (states[i] = decision.states[k]));
      if (decision.ok) {
        if (request) queueReplyHeaders(request, headersOf({ ...t, tokensAt: -1, projectTokensAt: -1 }, states));
        return;
      }
      const r = decision.refusal;
      const refusal = r?.kind === 'bucket' ? { ...r, index: at[r.index] } : r;
      const costs = t.buckets.map((b) => (b.kind === 0 ? 1 : 0));
      throw quietly(() => refusalError({ ...t, tokensAt: -1, projectTokensAt: -1 }, { ...decision, states, refusal }, payer, model, costs));
    },
    charge(organizationId, model, usage) {
      const price = resolveModel(config, model).entry.price;
      return release({ organizationId, model, inputTokens: 0, buckets: [], price }, usage);
    },
    async admit(request, payer, input) {
      let chars = input.inputChars ?? 0;
      if (input.inputChars === undefined && input.inputText !== undefined) {
        if (typeof input.inputText === 'string') chars = input.inputText.length;
        else for (const s of input.inputText) chars += s.length;
      }
      const inputTokens = Math.ceil(chars / CHARS_PER_TOKEN);
      const tokens = Math.max(input.maxTokens ?? 0, inputTokens);
      let t = template(payer, input.model, false);
      if (t.longContextAbove !== undefined && inputTokens > t.longContextAbove) t = template(payer, input.model, true);

      const costs: number[] = new Array(t.buckets.length);
      for (let i = 0; i < t.buckets.length; i++) {
        const b = t.buckets[i];
        const cost = b.kind === 0 ? 1 : b.kind === 1 ? tokens : b.kind === 2 ? (input.images ?? 0) : (input.audioMinutes ?? 0);
        if (cost > b.limit) throw tooLarge(b, cost, payer, input.model);
        costs[i] = cost;
      }
      const plan: AdmitPlan = { buckets: t.specs, costs, quota: { key: spendKey(payer.organizationId), limit: t.quota.limit } };
      const r = t.ramp;
      if (r)
        plan.ramp = {
          key: r.key,
          tokens: inputTokens,
          thresholdPerMin: r.thresholdPerMin,
          ratio: r.ratio,
          windowMs: r.windowMs,
          lagMinutes: r.lagMinutes,
        };
      if (t.concurrency)
        plan.concurrency = { key: t.concurrency.key, max: t.concurrency.max, leaseId: randomUUID(), ttlMs: config.lease_ttl_ms };

      let decision: Decision;
      try {
        const pending = backend.admit(plan);
        decision = pending instanceof Promise ? await pending : pending;
      } catch (err) {
        if (!(err instanceof BackendUnavailable)) throw err;
        if (!failOpen) throw backendDownError();
        // Fail open: admitted, counted nowhere, nothing to give back.
        return {
          headers: {},
          ticket: { organizationId: payer.organizationId, model: input.model, inputTokens, buckets: [] },
          release: () => Promise.resolve(),
        };
      }
      if (!decision.ok) throw quietly(() => refusalError(t, decision, payer, input.model, costs));
      const headers = headersOf(t, decision.states);
      if (request) queueReplyHeaders(request, headers);
      const concurrency = plan.concurrency ? { key: plan.concurrency.key, leaseId: plan.concurrency.leaseId } : undefined;
      // Built when asked for (or at release): most callers release in-process and never look at it.
      let ticket: Ticket | undefined;
      const ticketOf = (): Ticket => {
        if (ticket) return ticket;
        ticket = { organizationId: payer.organizationId, model: input.model, inputTokens, buckets: [], concurrency, price: t.price };
        for (let i = 0; i < t.buckets.length; i++) {
          const b = t.buckets[i];
          if (b.kind !== 0)
            ticket.buckets.push({
              key: b.key,
              hash: b.hash,
              field: b.field,
              limit: b.limit,
              windowMs: b.windowMs,
              metric: b.metric,
              charged: costs[i],
            });
        }
        return ticket;
      };
      let released = false;
      return {
        headers,
        get ticket() {
          return ticketOf();
        },
        release(usage) {
          if (released) return Promise.resolve();
          released = true;
          return release(ticketOf(), usage);
        },
      };
    },
  };
}
