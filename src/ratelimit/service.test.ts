import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { defaultConfig, mergeConfig, type RateLimitConfigInput } from './catalog.js';
import { createMemoryBackend } from './memory.js';
import { createRateLimiter } from './service.js';
import { fixedClock } from './testing.js';

const payer = { organizationId: 'org_a', projectId: 'proj_a' };

function setup(input: RateLimitConfigInput) {
  const clock = fixedClock();
  const backend = createMemoryBackend(clock);
  const config = mergeConfig(defaultConfig(), { replace_defaults: true, ramp: { enabled: false }, ...input });
  return { clock, backend, limiter: createRateLimiter({ backend, clock, config }) };
}

const basic = (limits: Record<string, number>, extra: object = {}): RateLimitConfigInput => ({
  models: { m: { tiers: { tier_1: limits }, ...extra } },
});

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('headers (exact under a fixed clock)', () => {
  it('reports requests and tokens after the charge, resets as duration text', async () => {
    const { limiter, clock } = setup(basic({ rpm: 3, tpm: 1000 }));
    const a = await limiter.admit(null, payer, { model: 'm', maxTokens: 100, inputText: 'x'.repeat(40) });
    expect(a.headers).toEqual({
      'x-ratelimit-limit-requests': '3',
      'x-ratelimit-remaining-requests': '2',
      'x-ratelimit-reset-requests': '20s',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '900',
      'x-ratelimit-reset-tokens': '6s',
    });
    clock.advance(10_000);
    const b = await limiter.admit(null, payer, { model: 'm', maxTokens: 15 });
    expect(b.headers['x-ratelimit-remaining-requests']).toBe('1');
    expect(b.headers['x-ratelimit-reset-requests']).toBe('30s');
    // The 100 tokens refilled after 6 s; only the new 15 are in use (15 × 60 ms).
    expect(b.headers['x-ratelimit-remaining-tokens']).toBe('985');
    expect(b.headers['x-ratelimit-reset-tokens']).toBe('900ms');
  });

  it('falls back to the daily metrics when no per-minute one is set', async () => {
    const { limiter } = setup(basic({ rpd: 10_000, tpd: 2_000_000 }));
    const a = await limiter.admit(null, payer, { model: 'm', maxTokens: 1000 });
    expect(a.headers['x-ratelimit-limit-requests']).toBe('10000');
    expect(a.headers['x-ratelimit-reset-requests']).toBe('8.64s');
    expect(a.headers['x-ratelimit-limit-tokens']).toBe('2000000');
    expect(a.headers['x-ratelimit-reset-tokens']).toBe('43.2s');
  });

  it('adds the project-tokens trio only when a project limit applies', async () => {
    const { limiter } = setup({ ...basic({ rpm: 100, tpm: 10_000 }), projects: { proj_a: { models: { m: { tpm: 1_000 } } } } });
    const a = await limiter.admit(null, payer, { model: 'm', maxTokens: 250 });
    expect(a.headers['x-ratelimit-limit-project-tokens']).toBe('1000');
    expect(a.headers['x-ratelimit-remaining-project-tokens']).toBe('750');
    expect(a.headers['x-ratelimit-reset-project-tokens']).toBe('15s');
    expect(a.headers['x-ratelimit-remaining-tokens']).toBe('9750');
    const other = await limiter.admit(null, { organizationId: 'org_a', projectId: 'proj_b' }, { model: 'm', maxTokens: 250 });
    expect(other.headers['x-ratelimit-limit-project-tokens']).toBeUndefined();
    expect(other.headers['x-ratelimit-remaining-tokens']).toBe('9500');
  });
});

describe('limits', () => {
  it('refuses on the requests limit with the platform message, Retry-After and headers', async () => {
    const { limiter } = setup(basic({ rpm: 3, tpm: 100_000 }));
    for (let i = 0; i < 3; i++) await limiter.admit(null, payer, { model: 'm', maxTokens: 10 });
    const e = await refusal(limiter.admit(null, payer, { model: 'm', maxTokens: 10 }));
    expect([e.status, e.type, e.code]).toEqual([429, 'rate_limit_error', 'rate_limit_exceeded']);
    expect(e.message).toBe(
      'Rate limit reached for m in organization org_a on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 40s.',
    );
    // The refused request counted too: 20 s for the oldest request, 20 s for this one.
    expect(e.headers['retry-after']).toBe('40');
    expect(e.headers['retry-after-ms']).toBe('40000');
    expect(e.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(e.headers['x-ratelimit-remaining-tokens']).toBe('99970');
  });

  it('a client that keeps retrying waits at most one window after it stops (Retry-After ≤ 60 s)', async () => {
    const { limiter, clock } = setup(basic({ rpm: 3 }));
    for (let i = 0; i < 3; i++) await limiter.admit(null, payer, { model: 'm' });
    let last!: ApiError;
    for (let i = 0; i < 50; i++) last = await refusal(limiter.admit(null, payer, { model: 'm' }));
    expect(last.headers['retry-after-ms']).toBe('60000');
    clock.advance(59_999);
    await refusal(limiter.admit(null, payer, { model: 'm' }));
    clock.advance(60_000);
    await expect(limiter.admit(null, payer, { model: 'm' })).resolves.toBeTruthy();
  });

  it('refuses on whichever metric runs out first, and charges nothing else (all or nothing)', async () => {
    const { limiter, clock } = setup(basic({ rpm: 100, tpm: 1000, tpd: 5000 }));
    await limiter.admit(null, payer, { model: 'm', maxTokens: 900 });
    const e = await refusal(limiter.admit(null, payer, { model: 'm', maxTokens: 200 }));
    expect(e.message).toContain('on tokens per min (TPM): Limit 1000, Used 900, Requested 200. Please try again in 6s.');
    expect(e.headers['retry-after-ms']).toBe('6000');
    // Tokens of the refused request were not charged; its request was.
    expect(e.headers['x-ratelimit-remaining-tokens']).toBe('100');
    expect(e.headers['x-ratelimit-remaining-requests']).toBe('98');
    clock.advance(60_000);
    for (let i = 0; i < 4; i++) {
      await limiter.admit(null, payer, { model: 'm', maxTokens: 1000 });
      clock.advance(60_000);
    }
    const daily = await refusal(limiter.admit(null, payer, { model: 'm', maxTokens: 1000 }));
    expect(daily.message).toContain('tokens per day (TPD): Limit 5000');
    expect(Number(daily.headers['retry-after-ms'])).toBe(60_000); // capped: the real wait is longer
  });

  it('charges the larger of max_tokens and the character estimate, then reconciles with actual usage', async () => {
    const { limiter } = setup(basic({ tpm: 10_000 }));
    const a = await limiter.admit(null, payer, { model: 'm', maxTokens: 10, inputText: ['x'.repeat(2000), 'y'.repeat(2000)] });
    expect(a.headers['x-ratelimit-remaining-tokens']).toBe('9000');
    expect(a.ticket.inputTokens).toBe(1000);
    await a.release({ inputTokens: 700, outputTokens: 50 });
    const b = await limiter.admit(null, payer, { model: 'm', maxTokens: 2000, inputChars: 40 });
    expect(b.headers['x-ratelimit-remaining-tokens']).toBe(String(10_000 - 750 - 2000));
    await b.release({ totalTokens: 2300 });
    await b.release({ totalTokens: 0 }); // a second release changes nothing
    const c = await limiter.admit(null, payer, { model: 'm', maxTokens: 1 });
    expect(c.headers['x-ratelimit-remaining-tokens']).toBe(String(10_000 - 750 - 2300 - 1));
  });

  it('a failed request gives its tokens back but still counts as a request', async () => {
    const { limiter } = setup(basic({ rpm: 10, tpm: 10_000 }));
    const a = await limiter.admit(null, payer, { model: 'm', maxTokens: 5000 });
    await a.release({ failed: true });
    const b = await limiter.admit(null, payer, { model: 'm', maxTokens: 1 });
    expect(b.headers['x-ratelimit-remaining-tokens']).toBe('9999');
    expect(b.headers['x-ratelimit-remaining-requests']).toBe('8');
  });

  it('refuses a request larger than the whole limit without a retry (x-should-retry: false)', async () => {
    const { limiter } = setup(basic({ rpm: 10, tpm: 1000 }));
    const e = await refusal(limiter.admit(null, payer, { model: 'm', maxTokens: 5000 }));
    expect(e.status).toBe(429);
    expect(e.message).toContain('Request too large for m in organization org_a on tokens per min (TPM): Limit 1000, Requested 5000.');
    expect(e.headers['x-should-retry']).toBe('false');
    const ok = await limiter.admit(null, payer, { model: 'm', maxTokens: 1 });
    expect(ok.headers['x-ratelimit-remaining-requests']).toBe('9');
  });

  it('counts images (IPM) and audio minutes per minute', async () => {
    const { limiter } = setup(basic({ ipm: 5, audio_mpm: 10 }));
    await limiter.admit(null, payer, { model: 'm', images: 4, audioMinutes: 2 });
    expect((await refusal(limiter.admit(null, payer, { model: 'm', images: 2 }))).message).toContain(
      'images per min (IPM): Limit 5, Used 4, Requested 2',
    );
    await limiter.admit(null, payer, { model: 'm', images: 1, audioMinutes: 8 });
    expect((await refusal(limiter.admit(null, payer, { model: 'm', audioMinutes: 0.5 }))).message).toContain(
      'audio minutes per min: Limit 10, Used 10',
    );
  });

  it('models of a shared-limit group count against one limit; other models have their own', async () => {
    const { limiter } = setup({
      groups: { fam: { models: ['a', 'b'], tiers: { tier_1: { rpm: 2 } } } },
      models: { '*': { tiers: { tier_1: { rpm: 2 } } } },
    });
    await limiter.admit(null, payer, { model: 'a' });
    await limiter.admit(null, payer, { model: 'b' });
    expect((await refusal(limiter.admit(null, payer, { model: 'a' }))).message).toContain('Rate limit reached for a');
    await limiter.admit(null, payer, { model: 'c' });
    await limiter.admit(null, payer, { model: 'c' });
    await limiter.admit(null, payer, { model: 'd' });
  });

  it('long-context requests count against the separate long-context limits', async () => {
    const { limiter } = setup(
      basic({ rpm: 100, tpm: 1000 }, { long_context: { threshold_tokens: 500, tiers: { tier_1: { rpm: 1, tpm: 100_000 } } } }),
    );
    const long = await limiter.admit(null, payer, { model: 'm', inputChars: 4 * 600 });
    expect(long.headers['x-ratelimit-limit-tokens']).toBe('100000');
    expect(long.headers['x-ratelimit-remaining-tokens']).toBe('99400');
    expect((await refusal(limiter.admit(null, payer, { model: 'm', inputChars: 4 * 600 }))).message).toContain('RPM): Limit 1');
    const short = await limiter.admit(null, payer, { model: 'm', inputChars: 4 * 400 });
    expect(short.headers['x-ratelimit-remaining-tokens']).toBe('600');
  });

  it('organizations are limited apart; the tier and overrides choose their limits', async () => {
    const { limiter } = setup({
      models: { m: { tiers: { free: { rpm: 1 }, tier_1: { rpm: 2 }, tier_3: { rpm: 5 } } } },
      organizations: { org_free: { tier: 'free' }, org_paid: { paid_usd: 120 }, org_o: { models: { m: { rpm: 7 } } } },
    });
    const limitOf = async (org: string) =>
      (await limiter.admit(null, { organizationId: org, projectId: 'proj_x' }, { model: 'm' })).headers['x-ratelimit-limit-requests'];
    expect(await limitOf('org_free')).toBe('1');
    expect(await limitOf('org_paid')).toBe('5');
    expect(await limitOf('org_o')).toBe('7');
    expect(await limitOf('org_default')).toBe('2');
    expect(await limitOf('org_default')).toBe('2');
    await refusal(limiter.admit(null, { organizationId: 'org_default', projectId: 'proj_x' }, { model: 'm' }));
  });

  it('a project limit below the organization limit refuses in the project’s name', async () => {
    const { limiter } = setup({ ...basic({ rpm: 100 }), projects: { proj_a: { models: { '*': { rpm: 1 } } } } });
    await limiter.admit(null, payer, { model: 'm' });
    const e = await refusal(limiter.admit(null, payer, { model: 'm' }));
    expect(e.message).toContain('in project proj_a on requests per min (RPM): Limit 1');
    await limiter.admit(null, { organizationId: 'org_a', projectId: 'proj_b' }, { model: 'm' });
  });
});

describe('concurrency, monthly usage, ramp', () => {
  it('503 server_is_overloaded when the model’s concurrency is used up; release frees a slot', async () => {
    const { limiter } = setup({ ...basic({ rpm: 100 }, { concurrency: 2 }), overload_retry_after_ms: 2_500 });
    const a = await limiter.admit(null, payer, { model: 'm' });
    await limiter.admit(null, { organizationId: 'org_b', projectId: 'proj_b' }, { model: 'm' });
    const e = await refusal(limiter.admit(null, payer, { model: 'm' }));
    expect([e.status, e.type, e.code]).toEqual([503, 'service_unavailable_error', 'server_is_overloaded']);
    expect(e.headers['retry-after']).toBe('3');
    expect(e.headers['retry-after-ms']).toBe('2500');
    await a.release();
    await limiter.admit(null, payer, { model: 'm' });
  });

  it('a slot whose request never reports back frees itself after the lease time', async () => {
    const { limiter, clock } = setup({ ...basic({ rpm: 100 }, { concurrency: 1 }), lease_ttl_ms: 60_000 });
    await limiter.admit(null, payer, { model: 'm' });
    await refusal(limiter.admit(null, payer, { model: 'm' }));
    clock.advance(60_001);
    await limiter.admit(null, payer, { model: 'm' });
  });

  it('the monthly usage limit: 429 insufficient_quota, x-should-retry false, until the next month', async () => {
    const { limiter, clock } = setup({
      ...basic({ rpm: 1000 }, { price: { input_per_million: 1_000_000, output_per_million: 2_000_000 } }),
      organizations: { org_a: { usage_limit_usd: 5 } },
    });
    const a = await limiter.admit(null, payer, { model: 'm' });
    await a.release({ inputTokens: 1, outputTokens: 1 });
    expect(await limiter.spend('org_a')).toBe(3);
    const b = await limiter.admit(null, payer, { model: 'm' });
    await b.release({ inputTokens: 2, outputTokens: 0 });
    const e = await refusal(limiter.admit(null, payer, { model: 'm' }));
    expect([e.status, e.type, e.code]).toEqual([429, 'insufficient_quota', 'insufficient_quota']);
    expect(e.headers['x-should-retry']).toBe('false');
    expect(e.headers['retry-after']).toBeUndefined();
    await limiter.admit(null, { organizationId: 'org_b', projectId: 'proj_b' }, { model: 'm' });
    clock.advance(32 * 86_400_000);
    await limiter.admit(null, payer, { model: 'm' });
  });

  it('the tier’s usage limit applies when the organization has none', async () => {
    const { limiter } = setup({
      ...basic({ rpm: 1000 }, { price: { input_per_million: 50_000_000 } }),
      organizations: { org_a: { tier: 'tier_1' } },
    });
    const a = await limiter.admit(null, payer, { model: 'm' });
    await a.release({ inputTokens: 2 }); // $100: the tier_1 usage limit
    expect((await refusal(limiter.admit(null, payer, { model: 'm' }))).code).toBe('insufficient_quota');
  });

  it('slow_down when input tokens per minute jump far above the threshold and the recent baseline', async () => {
    const { limiter, clock } = setup({
      ...basic({ tpm: 100_000_000 }),
      ramp: { enabled: true, threshold_tpm: 10_000, growth: 0.5, period_ms: 900_000, window_ms: 60_000 },
    });
    // A steady 8,000 TPM for an hour (below the threshold).
    for (let i = 0; i < 60; i++) {
      await limiter.admit(null, payer, { model: 'm', inputChars: 4 * 8_000 });
      clock.advance(60_000);
    }
    // Then a burst: 30,000 tokens at once is far above both 10k and 1.5 × the baseline.
    await limiter.admit(null, payer, { model: 'm', inputChars: 4 * 4_000 });
    const e = await refusal(limiter.admit(null, payer, { model: 'm', inputChars: 4 * 30_000 }));
    expect([e.status, e.type, e.code]).toEqual([429, 'rate_limit_error', 'slow_down']);
    const wait = Number(e.headers['retry-after-ms']);
    expect(wait).toBeGreaterThanOrEqual(1000);
    expect(wait).toBeLessThanOrEqual(60_000);
    expect(e.message).toContain('by at most 50% every 15m0s');
  });
});

describe('requests refused before admission (countRefused)', () => {
  it('take one request of the RPM and RPD counters, no tokens, and meet the 429 once those are spent', async () => {
    const { limiter } = setup(basic({ rpm: 2, rpd: 100, tpm: 1000 }));
    await limiter.countRefused(null, payer, 'm');
    const admitted = await limiter.admit(null, payer, { model: 'm', maxTokens: 10 });
    // The refused request took a request, and not a token.
    expect(admitted.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(admitted.headers['x-ratelimit-remaining-tokens']).toBe('990');
    const e = await refusal(limiter.countRefused(null, payer, 'm'));
    expect(e.status).toBe(429);
    expect(e.code).toBe('rate_limit_exceeded');
    expect(e.message).toMatch(/on requests per min \(RPM\): Limit 2/);
    expect(e.headers['retry-after']).toBeDefined();
  });

  it('count nothing for a model without request limits', async () => {
    const { limiter } = setup(basic({ tpm: 10 }));
    for (let i = 0; i < 5; i++) await limiter.countRefused(null, payer, 'm');
  });
});
