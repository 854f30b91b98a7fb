import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { modules } from '../../src/server/modules.js';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { probeModule } from './probe.js';

const all = [...modules, probeModule];
let standin: TestStandin | undefined;
afterEach(async () => {
  await standin?.close();
  standin = undefined;
});

async function start(rateLimits: object, extra: object = {}) {
  standin = await startTestStandin({ modules: all });
  await applyConfig(standin.ctx, all, { rate_limits: { replace_defaults: true, ramp: { enabled: false }, ...rateLimits }, ...extra });
  return standin;
}

/** An openai SDK client on a listening Standin that records the status of every attempt. */
async function sdk(s: TestStandin, maxRetries = 2) {
  const url = await s.listen();
  const statuses: number[] = [];
  const waits: (string | null)[] = [];
  const client = new OpenAI({
    apiKey: s.keys.platform,
    baseURL: `${url}/v1`,
    maxRetries,
    fetch: async (input: any, init?: any) => {
      const res = await fetch(input, init);
      statuses.push(res.status);
      waits.push(res.headers.get('retry-after-ms'));
      return res;
    },
  });
  return { client, statuses, waits };
}

const admin = (_s: TestStandin) => ({ key: 'admin' as const });

describe('rate limits over HTTP', () => {
  it('sets the x-ratelimit-* headers on the reply of an admitted request', async () => {
    const s = await start({
      models: { m: { tiers: { tier_1: { rpm: 10, tpm: 10_000 } } } },
      projects: { proj_demo: { models: { m: { tpm: 5_000 } } } },
    });
    const res = await s.req('POST', '/v1/probe', { key: 'platform', body: { model: 'm', max_tokens: 1_000 } });
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-limit-requests']).toBe('10');
    expect(res.headers['x-ratelimit-remaining-requests']).toBe('9');
    expect(res.headers['x-ratelimit-limit-tokens']).toBe('10000');
    expect(res.headers['x-ratelimit-remaining-tokens']).toBe('9000');
    expect(res.headers['x-ratelimit-limit-project-tokens']).toBe('5000');
    expect(res.headers['x-ratelimit-remaining-project-tokens']).toBe('4000');
    expect(res.headers['x-ratelimit-reset-project-tokens']).toMatch(/^(\d+ms|1[12](\.\d+)?s)$/);
  });

  it('the openai SDK meets a 429 with retry-after-ms, waits, retries and succeeds', async () => {
    const s = await start({ models: { m: { tiers: { tier_1: { rpm: 100, tpm: 60_000 } } } } });
    const { client, statuses, waits } = await sdk(s);
    await client.post('/probe', { body: { model: 'm', max_tokens: 60_000 } });
    const { data, response } = await client.post('/probe', { body: { model: 'm', max_tokens: 3_000 } }).withResponse();
    expect(data).toEqual({ object: 'probe', ok: true });
    expect(statuses).toEqual([200, 429, 200]);
    // The 429 said how long: 3,000 tokens at 1 ms each, less what refilled meanwhile.
    expect(Number(waits[1])).toBeGreaterThan(0);
    expect(Number(waits[1])).toBeLessThanOrEqual(3_000);
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('60000');
  });

  it('the 429 body and headers are the platform’s', async () => {
    const s = await start({ models: { m: { tiers: { tier_1: { rpm: 1 } } } } });
    await s.req('POST', '/v1/probe', { key: 'platform', body: { model: 'm' } });
    const res = await s.req('POST', '/v1/probe', { key: 'platform', body: { model: 'm' } });
    expect(res.status).toBe(429);
    expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
    expect(res.body.error.message).toMatch(
      /^Rate limit reached for m in organization org_demo on requests per min \(RPM\): Limit 1, Used 1, Requested 1\. Please try again in (1m\d+(\.\d+)?s|60s)\.$/,
    );
    expect(res.headers['retry-after']).toBe('60');
    expect(res.headers['retry-after-ms']).toBe('60000');
    expect(res.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('the in-process limiter runs on Standin’s clock: advancing it refills the buckets', async () => {
    const s = await start({ models: { m: { tiers: { tier_1: { rpd: 1 } } } } });
    expect((await s.req('POST', '/v1/probe', { key: 'platform', body: { model: 'm' } })).status).toBe(200);
    expect((await s.req('POST', '/v1/probe', { key: 'platform', body: { model: 'm' } })).status).toBe(429);
    expect((await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '1d' } })).status).toBe(200);
    const res = await s.req('POST', '/v1/probe', { key: 'platform', body: { model: 'm' } });
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-reset-requests']).toBe('24h0m0s');
  });

  it('the monthly usage limit: the SDK does not retry (x-should-retry: false)', async () => {
    const s = await start({
      models: { m: { tiers: { tier_1: { rpm: 100 } }, price: { input_per_million: 1_000_000 } } },
      organizations: { org_demo: { usage_limit_usd: 1 } },
    });
    const { client, statuses } = await sdk(s);
    await client.post('/probe', { body: { model: 'm', usage: { inputTokens: 1, outputTokens: 0 } } });
    const err: any = await client.post('/probe', { body: { model: 'm' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe('insufficient_quota');
    expect(err.type).toBe('insufficient_quota');
    expect(statuses).toEqual([200, 429]);
    const view = await s.req('GET', '/admin/v1/rate_limits/organizations/org_demo', { key: 'admin' });
    expect(view.body).toMatchObject({ tier: 'tier_1', usage_limit_usd: 1, usage_this_month_usd: 1 });
  });

  it('per-organization and per-project sections of the config file', async () => {
    const s = await start(
      { models: { m: { tiers: { tier_1: { rpm: 10 }, tier_4: { rpm: 40 } } } } },
      {
        organizations: [
          {
            id: 'org_demo',
            name: 'Demo',
            rate_limits: { tier: 'tier_4' },
            projects: [{ id: 'proj_demo', name: 'Demo', rate_limits: { models: { m: { tpm: 777 } } } }],
          },
        ],
      },
    );
    const res = await s.req('POST', '/v1/probe', { key: 'platform', body: { model: 'm' } });
    expect(res.headers['x-ratelimit-limit-requests']).toBe('40');
    expect(res.headers['x-ratelimit-limit-project-tokens']).toBe('777');
    await expect(applyConfig(s.ctx, all, { rate_limits: { default_tier: 'tier_9' } })).rejects.toThrow(/default_tier/);
  });
});

describe('fault injection', () => {
  it('the SDK retries through injected 503s, honouring retry-after-ms', async () => {
    const s = await start({});
    const f = await s.req('POST', '/admin/v1/faults', {
      key: 'admin',
      body: { path: '/v1/probe', method: 'POST', status: 503, count: 2, retry_after: 0.2 },
    });
    expect(f.status).toBe(201);
    expect(f.body).toMatchObject({ object: 'admin.fault', path: '/v1/probe', method: 'POST', status: 503, remaining: 2, retry_after: 0.2 });
    const { client, statuses, waits } = await sdk(s);
    expect(await client.post('/probe', { body: { model: 'm' } })).toEqual({ object: 'probe', ok: true });
    expect(statuses).toEqual([503, 503, 200]);
    expect(waits).toEqual(['200', '200', null]);
    expect((await s.req('GET', '/admin/v1/faults', { key: 'admin' })).body.data).toEqual([]);
  });

  it('the SDK gives up after its retries with the injected 429 slow_down; a glob matches; 500s too', async () => {
    const s = await start({});
    await s.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/*', status: 429, count: 3, retry_after: 0 } });
    const { client, statuses } = await sdk(s);
    const err: any = await client.post('/probe', { body: { model: 'm' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe('slow_down');
    expect(err.headers.get('x-standin-fault')).toMatch(/^fault_/);
    expect(statuses).toEqual([429, 429, 429]);
    await s.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/probe', status: 500, retry_after: 0 } });
    expect(await client.post('/probe', { body: { model: 'm' } })).toEqual({ object: 'probe', ok: true });
    expect(statuses.slice(3)).toEqual([500, 200]);
  });

  it('needs the admin key; lists, shows and deletes faults; refuses bad input', async () => {
    const s = await start({});
    expect((await s.req('POST', '/admin/v1/faults', { body: { path: '/v1/x', status: 503 } })).status).toBe(401);
    expect((await s.req('POST', '/admin/v1/faults', { key: 'platform', body: { path: '/v1/x', status: 503 } })).status).toBe(401);
    const bad = await s.req('POST', '/admin/v1/faults', { ...admin(s), body: { path: '/v1/x', status: 404 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('status');
    expect((await s.req('POST', '/admin/v1/faults', { ...admin(s), body: { path: '/v1/x', status: 503, extra: 1 } })).status).toBe(400);
    const ctl = await s.req('POST', '/admin/v1/faults', { ...admin(s), body: { path: '/admin/v1/clock', status: 503 } });
    expect([ctl.status, ctl.body.error.param]).toEqual([400, 'path']);
    const a = (await s.req('POST', '/admin/v1/faults', { ...admin(s), body: { path: '/v1/x', status: 503, count: 5 } })).body;
    const b = (await s.req('POST', '/admin/v1/faults', { ...admin(s), body: { path: '/v1/y', status: 500 } })).body;
    expect((await s.req('GET', '/admin/v1/faults', admin(s))).body.data.map((f: any) => f.id)).toEqual([a.id, b.id]);
    expect((await s.req('GET', `/admin/v1/faults/${a.id}`, admin(s))).body.remaining).toBe(5);
    expect((await s.req('DELETE', `/admin/v1/faults/${a.id}`, admin(s))).body).toEqual({
      id: a.id,
      object: 'admin.fault.deleted',
      deleted: true,
    });
    expect((await s.req('DELETE', `/admin/v1/faults/${a.id}`, admin(s))).status).toBe(404);
    expect((await s.req('DELETE', '/admin/v1/faults', admin(s))).body.deleted).toBe(1);
    expect((await s.req('GET', '/v1/y', { key: 'platform' })).status).toBe(404);
  });
});

describe('OpenAPI', () => {
  it('documents the rate-limit routes', async () => {
    const s = await start({});
    const doc = await s.req('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    for (const path of ['/v1/fine_tuning/model_limits', '/admin/v1/faults', '/admin/v1/faults/{fault_id}', '/admin/v1/rate_limits'])
      expect(Object.keys(doc.body.paths)).toContain(path);
  });
});

describe('GET /v1/fine_tuning/model_limits', () => {
  it('returns the organization’s fine-tuning limits for its tier', async () => {
    const s = await start({ organizations: { org_demo: { tier: 'tier_2' } } });
    const res = await s.req('GET', '/v1/fine_tuning/model_limits', { key: 'platform' });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.has_more).toBe(false);
    expect(res.body.data[0]).toEqual({
      object: 'fine_tuning.model_limit',
      model: 'gpt-4o-2024-08-06',
      tier: 'tier_2',
      max_active_jobs: 5,
      max_jobs_per_day: 100,
      max_training_tokens_per_day: 20_000_000,
    });
    expect((await s.req('GET', '/v1/fine_tuning/model_limits', {})).status).toBe(401);
  });
});
