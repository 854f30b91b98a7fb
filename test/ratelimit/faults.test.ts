import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
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
      // Both copies follow the store's count before the next request.
      await until(() => [a, b].every((x) => (local(x)[0]?.remaining ?? 0) === left), 5_000, `both instances see ${left} left`);
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

  it('refuses a type that does not answer the fault status, naming the field', async () => {
    const r = await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/', status: 503, type: 'rate_limit_error' } });
    expect([r.status, r.body.error.param]).toEqual([400, 'type']);
    const unknown = await a.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/', type: 'teapot_error' } });
    expect([unknown.status, unknown.body.error.param]).toEqual([400, 'type']);
  });
});
