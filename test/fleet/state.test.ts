import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../process.js';
import { startInstances, until, type Instance } from './instances.js';

/**
 * Every change reaches every instance: two real processes on one PostgreSQL database (and one Redis when
 * the suite has it). A change made through A is in force on B without a restart and without a request
 * through A in between.
 */
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;
const redisUrl = process.env.STANDIN_TEST_REDIS_URL;

describe.runIf(databaseUrl)('two instances on one PostgreSQL database', () => {
  let fleet: Awaited<ReturnType<typeof startInstances>>;
  let a: Instance;
  let b: Instance;
  let key: string;
  const client = (i: Instance, apiKey = key) => new OpenAI({ apiKey, baseURL: `${i.base}/v1`, maxRetries: 0 });

  beforeAll(async () => {
    ensureBuilt();
    fleet = await startInstances('fleet_state', { redisUrl });
    [a, b] = fleet.instances;
    const created = await a.call('POST', '/admin/v1/projects/proj_demo/api_keys', { name: 'fleet' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    key = created.body.value;
  }, 120_000);
  afterAll(async () => {
    await fleet?.close();
  });

  it('a fault added on A fails a request on B, and its count holds across both', async () => {
    // B has answered this path before, so nothing but the change signal can make it fail.
    expect((await b.call('GET', '/v1/models', undefined, key)).status).toBe(200);
    const fault = await a.call('POST', '/admin/v1/faults', { path: '/v1/models', method: 'GET', status: 503, count: 1 });
    expect(fault.status, JSON.stringify(fault.body)).toBe(201);
    let failed = 0;
    await until(async () => {
      const r = await b.call('GET', '/v1/models', undefined, key);
      if (r.status === 503) failed++;
      return failed > 0;
    });
    // Used up on B: neither instance fails another request.
    await until(async () => (await a.call('GET', '/admin/v1/faults')).body.data.length === 0);
    for (const i of [a, b, a, b]) expect((await i.call('GET', '/v1/models', undefined, key)).status).toBe(200);
    expect(failed).toBe(1);
  });

  it('removing a fault on A stops it on B', async () => {
    const fault = await a.call('POST', '/admin/v1/faults', { path: '/v1/models/fleet-gone', status: 500, count: 1000 });
    expect(fault.status).toBe(201);
    await until(async () => (await b.call('GET', '/v1/models/fleet-gone', undefined, key)).status === 500);
    expect((await a.call('DELETE', `/admin/v1/faults/${fault.body.id}`)).status).toBe(200);
    await until(async () => (await b.call('GET', '/v1/models/fleet-gone', undefined, key)).status === 200);
  });

  it('the models config applied on A is the one B serves', async () => {
    const before = await client(b).chat.completions.create({ model: 'fleet-model', messages: [{ role: 'user', content: 'hello' }] });
    expect(before.choices[0].message.content).not.toBe('configured on A');
    const applied = await a.call('POST', '/admin/v1/config', {
      models: { 'fleet-model': { provider: 'builtin', default_reply: 'configured on A', owned_by: 'fleet-team' } },
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    await until(async () => {
      const r = await client(b).chat.completions.create({ model: 'fleet-model', messages: [{ role: 'user', content: 'hello' }] });
      return r.choices[0].message.content === 'configured on A';
    });
    const model = await client(b).models.retrieve('fleet-model');
    expect(model.owned_by).toBe('fleet-team');
  });

  it('a tier and an override set on A are in force on B', async () => {
    const model = `fleet-limited-${process.pid}`;
    const applied = await a.call('POST', '/admin/v1/config', {
      organizations: [
        {
          id: 'org_demo',
          name: 'Demo organization',
          rate_limits: { tier: 'tier_3', models: { [model]: { rpm: 2, rpd: 2 } } },
        },
      ],
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    await until(async () => {
      const r = await b.call('GET', '/admin/v1/rate_limits/organizations/org_demo');
      return r.body.tier === 'tier_3' && r.body.overrides[model]?.rpm === 2;
    });
    // The override is enforced on B: two requests, then 429.
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push(
        await client(b)
          .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 })
          .then(
            () => 200,
            (err: { status?: number }) => err.status ?? 0,
          ),
      );
    }
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('a key deleted on A is refused by B within a second', async () => {
    const made = await a.call('POST', '/admin/v1/projects/proj_demo/api_keys', { name: 'to-revoke' });
    const doomed: string = made.body.value;
    // B has just resolved (and remembers) the key.
    expect((await b.call('GET', '/v1/models', undefined, doomed)).status).toBe(200);
    expect((await b.call('GET', '/v1/models', undefined, doomed)).status).toBe(200);
    const deleted = await a.call('DELETE', `/admin/v1/projects/proj_demo/api_keys/${made.body.id}`);
    expect(deleted.status).toBe(200);
    // A refuses at once: the instance that revoked it forgets it before it answers.
    expect((await a.call('GET', '/v1/models', undefined, doomed)).status).toBe(401);
    const took = await until(async () => (await b.call('GET', '/v1/models', undefined, doomed)).status === 401, 1_000);
    expect(took).toBeLessThan(1_000);
    await expect(client(b, doomed).models.list()).rejects.toMatchObject({ status: 401 });
  });

  it('a key re-declared with fewer permissions on A narrows it on B', async () => {
    const value = `sk-proj-fleet-narrowed-${process.pid}-000000`;
    const made = await a.call('POST', '/admin/v1/projects/proj_demo/api_keys', { name: 'narrow', value });
    expect(made.status).toBe(201);
    expect((await b.call('GET', '/v1/models', undefined, value)).status).toBe(200);
    const narrowed = await a.call('POST', '/admin/v1/projects/proj_demo/api_keys', {
      name: 'narrow',
      value,
      permissions: { threads: 'write' },
    });
    expect(narrowed.status).toBe(201);
    await until(async () => (await b.call('GET', '/v1/models', undefined, value)).status === 403, 1_000);
  });
});
