import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../process.js';
import { startInstances, until, type Instance } from './instances.js';

/**
 * A fault's count is exact behind a balancer: two real processes on one PostgreSQL database, requests sent
 * to one and then the other (the finding: `count: 2` failed B, A and B, each after the last one finished),
 * and all at once.
 */
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;

describe.runIf(databaseUrl)('fault counts across two processes', () => {
  let fleet: Awaited<ReturnType<typeof startInstances>>;
  let a: Instance;
  let b: Instance;
  let key: string;
  const path = '/v1/models/fault-count';
  const hit = async (i: Instance) => (await i.call('GET', path, undefined, key)).status;

  beforeAll(async () => {
    ensureBuilt();
    fleet = await startInstances('fleet_faults');
    [a, b] = fleet.instances;
    key = (await a.call('POST', '/admin/v1/projects/proj_demo/api_keys', { name: 'fleet' })).body.value;
  }, 120_000);
  afterAll(async () => {
    await fleet?.close();
  });

  /** Adds a fault on A and uses one of its count on B, so both are known to hold it. */
  async function faultOnBoth(count: number): Promise<string> {
    const added = await a.call('POST', '/admin/v1/faults', { path, method: 'GET', status: 503, count: count + 1 });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    await until(async () => (await hit(b)) === 503);
    return added.body.id;
  }

  it('requests one after the other, alternating instances, fail exactly count', async () => {
    const id = await faultOnBoth(2);
    const statuses: number[] = [];
    for (const i of [a, b, a, b]) statuses.push(await hit(i));
    expect(statuses).toEqual([503, 503, 200, 200]);
    expect((await a.call('GET', `/admin/v1/faults/${id}`)).status).toBe(404);
  });

  it('requests all at once on both instances fail exactly count', async () => {
    await faultOnBoth(5);
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, n) => hit(n % 2 ? a : b)));
    expect(statuses.filter((s) => s === 503)).toHaveLength(5);
    expect(statuses.filter((s) => s === 200)).toHaveLength(25);
  });
});
