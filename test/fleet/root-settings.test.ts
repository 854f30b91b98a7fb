import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../process.js';
import { startInstances, until, type Instance } from './instances.js';

/**
 * The config's root settings (the admin key, trust_proxy, vendor) applied through A are in force on B: two
 * real processes on one PostgreSQL database, neither given an admin key by the environment (the key a
 * first start generated is the store's, and both run it).
 */
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;

describe.runIf(databaseUrl)('root settings on two instances', () => {
  let fleet: Awaited<ReturnType<typeof startInstances>>;
  let a: Instance;
  let b: Instance;
  let adminKey: string;
  let key: string;

  beforeAll(async () => {
    ensureBuilt();
    fleet = await startInstances('fleet_root', { env: () => ({ STANDIN_ADMIN_KEY: '' }) });
    [a, b] = fleet.instances;
    const c = new pg.Client({ connectionString: fleet.databaseUrl });
    await c.connect();
    adminKey = (await c.query(`select value from settings where key = 'admin_key'`)).rows[0].value;
    await c.end();
    const created = await a.call('POST', '/admin/v1/projects/proj_demo/api_keys', { name: 'fleet' }, adminKey);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    key = created.body.value;
  }, 120_000);
  afterAll(async () => {
    await fleet?.close();
  });

  /** A request to B from 127.0.0.1 that names 203.0.113.9 as the client. */
  const forwarded = () =>
    fetch(`${b.base}/v1/models`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': '203.0.113.9' } }).then((r) => r.status);

  it('trust_proxy, vendor and a new admin key applied on A are in force on B', async () => {
    const allowed = await a.call('PUT', '/admin/v1/projects/proj_demo/ip_allowlist', { cidrs: ['203.0.113.0/24'] }, adminKey);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    // B judges its peer (127.0.0.1) until it believes the balancer; its host page has the default vendor.
    await until(async () => (await forwarded()) === 403);
    expect(await (await fetch(`${b.base}/apps`)).text()).toContain('data-vendor="vendor"');

    const newKey = 'sk-admin-fleet-rotated-0000000000000000';
    const applied = await a.call('POST', '/admin/v1/config', { trust_proxy: ['127.0.0.1'], vendor: 'acme', admin_key: newKey }, adminKey);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);

    await until(async () => (await forwarded()) === 200);
    await until(async () => (await (await fetch(`${b.base}/apps`)).text()).includes('data-vendor="acme"'));
    await until(async () => (await b.call('GET', '/admin/v1/clock', undefined, newKey)).status === 200);
    expect((await b.call('GET', '/admin/v1/clock', undefined, adminKey)).status).toBe(401);
    expect((await a.call('GET', '/admin/v1/clock', undefined, adminKey)).status).toBe(401);
  });

  it('a bad trust_proxy is refused with 400 and changes nothing on either instance', async () => {
    const admin = 'sk-admin-fleet-rotated-0000000000000000';
    const refused = await a.call('POST', '/admin/v1/config', { trust_proxy: ['not-an-address'] }, admin);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('not an IP address or CIDR');
    await new Promise((r) => setTimeout(r, 500));
    expect(await forwarded()).toBe(200);
  });
});
