import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { defaultConfig, mergeConfig, type RateLimitConfigInput } from '../../src/ratelimit/catalog.js';
import type { LimiterBackend } from '../../src/ratelimit/interface.js';
import { createRedisBackend } from '../../src/ratelimit/redis.js';
import { createRateLimiter } from '../../src/ratelimit/service.js';
import { fixedClock } from '../../src/ratelimit/testing.js';

const url = process.env.STANDIN_TEST_REDIS_URL;
const backends: (LimiterBackend & { redis: any })[] = [];
afterAll(async () => {
  for (const b of backends) await b.reset();
  for (const b of backends) await b.close();
});

/** `n` limiters, each on its own Redis connection (as separate instances would be), sharing one key prefix. */
const prefixes = new WeakMap<object, string>();
const keyPrefixOf = (limiter: object) => prefixes.get(limiter)!;

function instances(n: number, input: RateLimitConfigInput) {
  const prefix = `standin-test:${randomUUID()}:`;
  const config = mergeConfig(defaultConfig(), { replace_defaults: true, ramp: { enabled: false }, ...input });
  return Array.from({ length: n }, () => {
    const backend = createRedisBackend(url!, { prefix });
    backends.push(backend);
    const limiter = createRateLimiter({ backend, clock: fixedClock(), config });
    prefixes.set(limiter, prefix);
    return limiter;
  });
}

const payer = { organizationId: 'org_a', projectId: 'proj_a' };
const basic = (limits: Record<string, number>, extra: object = {}): RateLimitConfigInput => ({
  models: { m: { tiers: { tier_1: limits }, ...extra } },
});

async function outcome(p: Promise<unknown>): Promise<'ok' | string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof ApiError) return `${e.status} ${e.code}`;
    throw e;
  }
}

describe.runIf(url)('Redis backend', () => {
  it('two instances never exceed a limit together (400 concurrent attempts at 100 per day)', async () => {
    const [a, b] = instances(2, basic({ rpd: 100, tpd: 1_000_000 }));
    const attempts = Array.from({ length: 400 }, (_, i) => outcome((i % 2 ? a : b).admit(null, payer, { model: 'm', maxTokens: 10 })));
    const results = await Promise.all(attempts);
    expect(results.filter((r) => r === 'ok').length).toBe(100);
    expect(new Set(results.filter((r) => r !== 'ok'))).toEqual(new Set(['429 rate_limit_exceeded']));
  });

  it('all or nothing across metrics: the tokens of refused requests are never charged', async () => {
    const [a, b] = instances(2, basic({ rpd: 1_000, tpd: 10_000 }));
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => outcome((i % 2 ? a : b).admit(null, payer, { model: 'm', maxTokens: 1_000 }))),
    );
    expect(results.filter((r) => r === 'ok').length).toBe(10);
    const next = await outcome(a.admit(null, payer, { model: 'm', maxTokens: 1 }));
    expect(next).toBe('429 rate_limit_exceeded');
    // Only admitted requests hold requests and tokens of the daily limits (refusals count toward RPM only).
    const free = await a.admit(null, payer, { model: 'm', maxTokens: 0 });
    expect(free.headers['x-ratelimit-remaining-requests']).toBe(String(1_000 - 11));
    expect(free.headers['x-ratelimit-remaining-tokens']).toBe('0');
  });

  it('reports the same headers as the in-process backend (Redis time: resets within a few ms)', async () => {
    const [a] = instances(1, basic({ rpm: 3, tpm: 1000 }));
    const h = (await a.admit(null, payer, { model: 'm', maxTokens: 100, inputText: 'x'.repeat(40) })).headers;
    expect(h['x-ratelimit-limit-requests']).toBe('3');
    expect(h['x-ratelimit-remaining-requests']).toBe('2');
    expect(h['x-ratelimit-reset-requests']).toBe('20s');
    expect(h['x-ratelimit-limit-tokens']).toBe('1000');
    expect(h['x-ratelimit-remaining-tokens']).toBe('900');
    expect(h['x-ratelimit-reset-tokens']).toBe('6s');
    await a.admit(null, payer, { model: 'm' });
    await a.admit(null, payer, { model: 'm' });
    const e = (await a.admit(null, payer, { model: 'm' }).catch((err) => err)) as ApiError;
    expect(e.code).toBe('rate_limit_exceeded');
    expect(e.message).toContain('on requests per min (RPM): Limit 3, Used 3, Requested 1.');
    const wait = Number(e.headers['retry-after-ms']);
    expect(wait).toBeGreaterThan(35_000);
    expect(wait).toBeLessThanOrEqual(40_000);
  });

  it('reconciles tokens, shares concurrency slots and the monthly usage across instances', async () => {
    const [a, b] = instances(2, {
      ...basic({ tpd: 10_000 }, { concurrency: 1, price: { input_per_million: 1_000_000 } }),
      organizations: { org_a: { usage_limit_usd: 3 } },
    });
    const first = await a.admit(null, payer, { model: 'm', maxTokens: 5_000 });
    expect(await outcome(b.admit(null, payer, { model: 'm' }))).toBe('503 server_is_overloaded');
    await first.release({ inputTokens: 2, outputTokens: 0 });
    const second = await b.admit(null, payer, { model: 'm', maxTokens: 1 });
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe(String(10_000 - 2 - 1));
    await second.release({ inputTokens: 1 });
    expect(await a.spend('org_a')).toBe(3);
    const e = (await b.admit(null, payer, { model: 'm' }).catch((err) => err)) as ApiError;
    expect([e.status, e.code, e.headers['x-should-retry']]).toEqual([429, 'insufficient_quota', 'false']);
  });

  it('the script reads the ramp baseline from the minute slots of one period ago', async () => {
    const [a] = instances(1, {
      ...basic({ tpm: 100_000_000 }),
      ramp: { enabled: true, threshold_tpm: 10_000, growth: 0.5, period_ms: 900_000, window_ms: 60_000 },
    });
    const redis = backends.at(-1)!.redis;
    // 20,000 input tokens per minute (100,000 per 5-minute slot) from 10 to 20 minutes ago, in a ring of 6 slots.
    const [sec, micro] = (await redis.time()).map(Number);
    const m = Math.floor(((sec - 1_700_000_000) * 1000 + micro / 1000) / 60_000);
    const state: Record<string, number> = {};
    for (let q = 10; q <= 20; q++) {
      const u = Math.floor((m - q) / 5);
      state[`u${u % 6}`] = u;
      state[`s${u % 6}`] = 100_000;
    }
    // The state key holds a MessagePack map (see redis.ts).
    await redis.eval(
      "redis.call('SET', KEYS[1], cmsgpack.pack(cjson.decode(ARGV[1])), 'PX', 600000)",
      1,
      `${keyPrefixOf(a)}org_a:m`,
      JSON.stringify(state),
    );
    // Ceiling 1.5 × 20,000 = 30,000 for org_a; an organization without history has the threshold, 10,000.
    await a.admit(null, payer, { model: 'm', inputChars: 4 * 25_000 });
    expect(await a.admit(null, payer, { model: 'm', inputChars: 4 * 6_000 }).catch((e: ApiError) => e.code)).toBe('slow_down');
    expect(
      await a
        .admit(null, { organizationId: 'org_b', projectId: 'proj_b' }, { model: 'm', inputChars: 4 * 25_000 })
        .catch((e: ApiError) => e.code),
    ).toBe('slow_down');
  });

  it('the ramp detector runs in the script as well', async () => {
    const [a, b] = instances(2, {
      ...basic({ tpm: 100_000_000 }),
      ramp: { enabled: true, threshold_tpm: 10_000, growth: 0.5, period_ms: 900_000, window_ms: 60_000 },
    });
    await a.admit(null, payer, { model: 'm', inputChars: 4 * 9_000 });
    const e = (await b.admit(null, payer, { model: 'm', inputChars: 4 * 3_000 }).catch((err) => err)) as ApiError;
    expect([e.status, e.code]).toEqual([429, 'slow_down']);
    const wait = Number(e.headers['retry-after-ms']);
    expect(wait).toBeGreaterThan(10_000);
    expect(wait).toBeLessThanOrEqual(12_000);
  });
});
