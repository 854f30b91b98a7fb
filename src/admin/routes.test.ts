import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';

describe.each(dialects())('control plane /admin/v1 (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(async () => s?.close());

  it('needs the admin key; API keys do not open it', async () => {
    for (const key of [null, 'platform', 'ads', 'sk-admin-wrong-000000000000000000000']) {
      const r = await s.req('GET', '/admin/v1/clock', { key });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('invalid_admin_key');
    }
    expect((await s.req('GET', '/admin/v1/clock', { headers: { 'x-admin-key': s.keys.admin } })).status).toBe(200);
  });

  it('reads and advances the clock; time never moves backwards', async () => {
    const before = (await s.req('GET', '/admin/v1/clock', { key: 'admin' })).body;
    const r = await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '72h' } });
    expect(r.status).toBe(200);
    expect(r.body.offset_ms - before.offset_ms).toBe(72 * 3600 * 1000);
    expect(r.body.now - before.now).toBeGreaterThanOrEqual(72 * 3600);
    const sec = await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { seconds: 30 } });
    expect(sec.body.offset_ms - r.body.offset_ms).toBe(30_000);
    for (const body of [{ seconds: -1 }, { duration: 'soon' }, {}, { seconds: 1, duration: '1s' }]) {
      const bad = await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body });
      expect(bad.status).toBe(400);
    }
    // The clock drives created_at of new objects.
    const g = await s.req('POST', '/ads/v1/ad_groups', {
      key: 'ads',
      body: {
        campaign_id: 'cmp_demo_clicks',
        name: 'Later',
        status: 'active',
        bidding_config: { billing_event_type: 'click', max_bid_micros: 1 },
      },
    });
    expect(g.body.created_at).toBeGreaterThanOrEqual(sec.body.now);
  });

  it('keeps the moved clock across a restart of the store', async () => {
    const saved = await s.ctx.store.db.selectFrom('settings').select('value').where('key', '=', 'clock_offset_ms').executeTakeFirst();
    expect(Number(saved?.value)).toBe(s.ctx.clock.offsetMs());
  });

  it('bounds the clock: no advance takes it past 100 years ahead, and a refused one moves nothing', async () => {
    const before = (await s.req('GET', '/admin/v1/clock', { key: 'admin' })).body.offset_ms;
    for (const body of [{ duration: '400000000h' }, { duration: '99999999999999999999d' }, { seconds: 3.2e9 }]) {
      const r = await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(/100 years/);
    }
    expect((await s.req('GET', '/admin/v1/clock', { key: 'admin' })).body.offset_ms).toBe(before);
  });

  it('records recent requests with secrets redacted, newest first', async () => {
    await s.req('GET', '/ads/v1/campaigns?token=very-secret-value', { key: 'ads' });
    const log = (await s.req('GET', '/admin/v1/requests?limit=5', { key: 'admin' })).body.data;
    const entry = log.find((e: any) => e.path.startsWith('/ads/v1/campaigns'));
    expect(entry).toMatchObject({ method: 'GET', status: 400, path: '/ads/v1/campaigns?token=[redacted]' });
    expect(entry.id).toMatch(/^req_/);
    expect(typeof entry.duration_ms).toBe('number');
    expect(JSON.stringify(log)).not.toContain('very-secret-value');
    expect(JSON.stringify(log)).not.toContain(s.keys.ads);
  });

  it('creates organizations, projects, keys and service accounts; keys are shown once and stored hashed', async () => {
    const org = await s.req('POST', '/admin/v1/organizations', { key: 'admin', body: { name: 'Second org' } });
    expect(org.status).toBe(201);
    const project = await s.req('POST', `/admin/v1/organizations/${org.body.id}/projects`, { key: 'admin', body: { name: 'P' } });
    expect(project.body.organization_id).toBe(org.body.id);
    const sa = await s.req('POST', `/admin/v1/projects/${project.body.id}/service_accounts`, {
      key: 'admin',
      body: { name: 'robot', role: 'reader' },
    });
    expect(sa.body.id).toMatch(/^svc_acct_/);
    const key = await s.req('POST', `/admin/v1/projects/${project.body.id}/api_keys`, {
      key: 'admin',
      body: { name: 'k', permissions: { threads: 'read' } },
    });
    expect(key.body.value).toMatch(/^sk-proj-/);
    const listed = await s.req('GET', `/admin/v1/projects/${project.body.id}/api_keys`, { key: 'admin' });
    expect(listed.body.data[0]).not.toHaveProperty('value');
    expect(listed.body.data[0].redacted_value).toBe(`sk-proj-…${key.body.value.slice(-4)}`);
    const stored = await s.ctx.store.db.selectFrom('api_keys').selectAll().where('id', '=', key.body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(key.body.value);
    expect((await s.req('GET', '/admin/v1/organizations/org_nope', { key: 'admin' })).status).toBe(404);
    expect((await s.req('POST', '/admin/v1/organizations', { key: 'admin', body: { name: 'x', extra: 1 } })).status).toBe(400);
    const full = await s.req('POST', `/admin/v1/projects/${project.body.id}/api_keys`, { key: 'admin', body: { name: 'full' } });
    expect((await s.req('GET', '/v1/models', { key: full.body.value })).status).toBe(200);
    const del = await s.req('DELETE', `/admin/v1/projects/${project.body.id}/api_keys/${full.body.id}`, { key: 'admin' });
    expect(del.body.deleted).toBe(true);
    // Revocation takes effect at once, although resolved keys are remembered briefly.
    expect((await s.req('GET', '/v1/models', { key: full.body.value })).status).toBe(401);
  });

  it('resets all state and restores the demo baseline, keeping the clock and the admin key', async () => {
    const offset = s.ctx.clock.offsetMs();
    const r = await s.req('POST', '/admin/v1/reset', { key: 'admin' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.printed.join('\n')).toMatch(/platform API key .*sk-proj-/);
    expect((await s.req('GET', '/admin/v1/organizations', { key: 'admin' })).body.data.map((o: any) => o.id)).toEqual(['org_demo']);
    expect((await s.req('GET', '/ads/v1/campaigns', { key: 'ads' })).status).toBe(401); // the test key is gone with the state
    expect(s.ctx.clock.offsetMs()).toBe(offset);
    const log = (await s.req('GET', '/admin/v1/requests', { key: 'admin' })).body.data;
    expect(log.some((e: any) => e.path.startsWith('/admin/v1/clock'))).toBe(false);
  });
  it('resets the clock with the state when asked, here and in the store; a restart keeps it', async () => {
    await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '48h' } });
    const r = await s.req('POST', '/admin/v1/reset', { key: 'admin', body: { clock: true } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await s.req('GET', '/admin/v1/clock', { key: 'admin' })).body.offset_ms).toBe(0);
    const saved = await s.ctx.store.db.selectFrom('settings').select('value').where('key', '=', 'clock_offset_ms').executeTakeFirst();
    expect(Number(saved?.value)).toBe(0);
    // A later advance is stored again (saving only ever grows the offset, from the reset value on).
    await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { seconds: 60 } });
    const again = await s.ctx.store.db.selectFrom('settings').select('value').where('key', '=', 'clock_offset_ms').executeTakeFirst();
    expect(Number(again?.value)).toBe(60_000);
  });
});
