import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { rollOf } from '../../src/ratelimit/faults.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

/** Polls `check` until it is true, at most `ms` (the propagation bound the test holds Standin to). */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The shared rate-limit state lives in the store. Faults: two instances on one database (one PostgreSQL schema, or one SQLite file
 * opened twice as two processes would), a fault added on one is honoured by the other, and its count is
 * used up once across both.
 */
describe.each(dialects())('faults and the catalog across instances (%s)', (dialect) => {
  let a: TestStandin;
  let b: TestStandin;
  const url = '/v1/fine_tuning/model_limits';
  const local = (s: TestStandin) => s.ctx.services.faults.local();
  const hit = (s: TestStandin) => s.req('GET', url, { key: 'platform' });

  beforeAll(async () => {
    a = await startTestStandin({ dialect });
    // The second instance opens the first one's store (seeded already).
    const shared = dialect === 'postgres' ? { databaseUrl: a.ctx.settings.databaseUrl } : { data: a.ctx.settings.data };
    b = await startTestStandin({ dialect: 'sqlite', seed: false, settings: shared });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a fault added on one instance fails requests on the other, type and code as asked; the count is shared', async () => {
    const added = await a.req('POST', '/admin/v1/faults', {
      key: 'admin',
      body: { path: url, status: 429, code: 'rate_limit_exceeded', count: 3, retry_after: 1 },
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', remaining: 3 });
    const id = added.body.id;
    // The other instance's store view shows it at once; its edge check follows within a short delay.
    expect((await b.req('GET', `/admin/v1/faults/${id}`, { key: 'admin' })).body.remaining).toBe(3);
    await until(() => local(b).length === 1, 5_000, 'instance b honours the fault');

    const statuses: number[] = [];
    for (const [s, left] of [
      [b, 2],
      [a, 1],
      [b, 0],
    ] as const) {
      const r = await hit(s);
      statuses.push(r.status);
      expect(r.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      expect(r.headers['x-standin-fault']).toBe(id);
      expect(r.headers['retry-after']).toBe('1');
      // The store's count, as both instances show it, follows every request at once.
      for (const x of [a, b]) {
        const shown = await x.req('GET', `/admin/v1/faults/${id}`, { key: 'admin' });
        expect(left ? shown.body.remaining : shown.status).toBe(left || 404);
      }
    }
    expect(statuses).toEqual([429, 429, 429]);
    expect((await a.req('GET', '/admin/v1/faults', { key: 'admin' })).body.data).toEqual([]);
    expect((await hit(a)).status).toBe(200);
    expect((await hit(b)).status).toBe(200);
  });

  it('insufficient_quota can be injected (the SDK is told not to retry); deleting on one instance lifts it on both', async () => {
    const added = (
      await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/', type: 'insufficient_quota', count: 100 } })
    ).body;
    expect(added).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'insufficient_quota' });
    await until(() => local(b).length === 1, 5_000, 'instance b honours the fault');
    const r = await hit(b);
    expect([r.status, r.body.error.type, r.body.error.code, r.headers['x-should-retry']]).toEqual([
      429,
      'insufficient_quota',
      'insufficient_quota',
      'false',
    ]);
    expect((await b.req('DELETE', `/admin/v1/faults/${added.id}`, { key: 'admin' })).status).toBe(200);
    await until(() => local(a).length === 0, 5_000, 'instance a drops the deleted fault');
    expect((await hit(a)).status).toBe(200);
  });

  it('the catalog is shared the same way: a config applied on one instance is in force on the other', async () => {
    const tier = async (s: TestStandin) => (await hit(s)).body.data[0].tier;
    expect(await tier(b)).toBe('tier_1');
    await applyConfig(a.ctx, a.modules, {
      organizations: [{ id: 'org_demo', name: 'Demo organization', rate_limits: { tier: 'tier_3' } }],
    });
    expect(await tier(a)).toBe('tier_3');
    await until(async () => (await tier(b)) === 'tier_3', 5_000, 'instance b follows the catalog');
  });

  it('count is exact across instances: B, A, B one after the other fail 2 of a count of 2 (the finding), without waiting for propagation', async () => {
    const added = (await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: url, status: 503, count: 2 } })).body;
    await until(() => local(b).length === 1, 5_000, 'instance b honours the fault');
    const statuses: number[] = [];
    for (const s of [b, a, b, a]) statuses.push((await hit(s)).status);
    expect(statuses).toEqual([503, 503, 200, 200]);
    expect((await a.req('GET', `/admin/v1/faults/${added.id}`, { key: 'admin' })).status).toBe(404);
  });

  it('count is exact under concurrent requests on both instances', async () => {
    await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: url, status: 429, count: 5 } });
    await until(() => local(b).length === 1, 5_000, 'instance b honours the fault');
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => hit(i % 2 ? a : b)));
    expect(replies.filter((r) => r.status === 429)).toHaveLength(5);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(19);
    expect((await a.req('GET', '/admin/v1/faults', { key: 'admin' })).body.data).toEqual([]);
  });

  it('a request that matches no live fault never touches the store: the check answers synchronously', async () => {
    const added = (await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/responses', status: 500, count: 3 } })).body;
    await until(() => local(b).length === 1, 5_000, 'instance b honours the fault');
    for (const s of [a, b]) {
      expect(s.ctx.services.faults.take('GET', url)).toBeUndefined();
      expect(s.ctx.services.faults.take('GET', '/v1/models')).toBeUndefined();
    }
    expect((await hit(b)).status).toBe(200);
    expect((await a.req('GET', `/admin/v1/faults/${added.id}`, { key: 'admin' })).body.remaining).toBe(3);
    await a.req('DELETE', '/admin/v1/faults', { key: 'admin' });
    await until(() => local(b).length === 0, 5_000, 'instance b drops the fault');
  });

  it('a seeded probability takes the same requests on every run, counted across instances', async () => {
    const body = { path: url, status: 503, count: 100, probability: 0.4, seed: 42 };
    const added = (await a.req('POST', '/admin/v1/faults', { key: 'admin', body })).body;
    expect(added).toMatchObject({ probability: 0.4, seed: 42, latency_ms: 0, remaining: 100 });
    await until(() => local(b).length === 1, 5_000, 'instance b honours the fault');
    const taken: boolean[] = [];
    for (let i = 0; i < 16; i++) taken.push((await hit(i % 2 ? a : b)).status === 503);
    const expected = Array.from({ length: 16 }, (_, i) => rollOf(42, i + 1, 0.4));
    expect(taken).toEqual(expected);
    expect(taken.some(Boolean) && !taken.every(Boolean)).toBe(true);
    const left = (await a.req('GET', `/admin/v1/faults/${added.id}`, { key: 'admin' })).body.remaining;
    expect(left).toBe(100 - expected.filter(Boolean).length);
    await a.req('DELETE', '/admin/v1/faults', { key: 'admin' });
    await until(() => local(b).length === 0, 5_000, 'instance b drops the fault');
  });

  it('latency_ms without a status only delays: the request still succeeds, and the count is used', async () => {
    const added = (await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: url, latency_ms: 300, count: 1 } })).body;
    expect(added).toMatchObject({ status: null, type: null, code: null, latency_ms: 300 });
    await until(() => local(b).length === 1, 5_000, 'instance b honours the fault');
    const started = performance.now();
    const r = await hit(b);
    // A lower bound only: timers never fire before their time.
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect([r.status, r.headers['x-standin-fault']]).toEqual([200, undefined]);
    expect((await a.req('GET', `/admin/v1/faults/${added.id}`, { key: 'admin' })).status).toBe(404);
    const failing = (await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: url, status: 500, latency_ms: 200 } })).body;
    await until(() => local(b).length === 1, 5_000, 'instance b honours the fault');
    const t = performance.now();
    const f = await hit(b);
    expect(performance.now() - t).toBeGreaterThanOrEqual(190);
    expect([f.status, f.headers['x-standin-fault']]).toEqual([500, failing.id]);
  });

  it('refuses a bad probability, latency or seed in the envelope, naming the field', async () => {
    for (const [body, param] of [
      [{ path: '/v1/', status: 429, probability: 1.5 }, 'probability'],
      [{ path: '/v1/', status: 429, probability: 0 }, 'probability'],
      [{ path: '/v1/', status: 429, latency_ms: -1 }, 'latency_ms'],
      [{ path: '/v1/', status: 429, latency_ms: 600_000 }, 'latency_ms'],
      [{ path: '/v1/', status: 429, seed: 3 }, 'seed'],
      [{ path: '/v1/', latency_ms: 100, code: 'slow_down' }, 'code'],
      [{ path: '/v1/' }, 'status'],
    ] as const) {
      const r = await a.req('POST', '/admin/v1/faults', { key: 'admin', body });
      expect([r.status, r.body.error.type], JSON.stringify(body)).toEqual([400, 'invalid_request_error']);
      expect(r.body.error.param ?? r.body.error.message, JSON.stringify(body)).toContain(param);
    }
  });

  it('refuses a type that does not answer the fault status, naming the field', async () => {
    const r = await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/', status: 503, type: 'rate_limit_error' } });
    expect([r.status, r.body.error.param]).toEqual([400, 'type']);
    const unknown = await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/', type: 'teapot_error' } });
    expect([unknown.status, unknown.body.error.param]).toEqual([400, 'type']);
  });
});
