import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { startReceiver } from '../../test/webhooks/receiver.js';
import { formatKeep, parseKeep, parseRetentionSetting, resolvePolicy } from './policy.js';
import { sweep } from './service.js';
import type { RetentionRule } from '../core/retention.js';

const rule = (name: string, defaultMs: number | null): RetentionRule => ({
  name,
  description: name,
  tables: [],
  defaultMs,
  purge: async () => 0,
});

describe('retention policy', () => {
  const rules = [rule('a', 1000), rule('b', null), rule('c', 5000)];

  it('reads keep times: off or a duration', () => {
    expect(parseKeep('off')).toBeNull();
    expect(parseKeep('30d')).toBe(30 * 86_400_000);
    expect(parseKeep('1d12h')).toBe(36 * 3_600_000);
    expect(() => parseKeep('forever')).toThrow(/neither 'off' nor a duration/);
    expect(() => parseKeep('')).toThrow();
    expect(formatKeep(36 * 3_600_000)).toBe('36h');
    expect(formatKeep(null)).toBe('off');
  });

  it('--retention names known kinds only', () => {
    expect(parseRetentionSetting('a=2h, b=7d,c=off', rules)).toEqual({ a: 7_200_000, b: 7 * 86_400_000, c: null });
    expect(parseRetentionSetting(undefined, rules)).toEqual({});
    expect(() => parseRetentionSetting('zz=1d', rules)).toThrow("unknown record kind 'zz'; known: a, b, c");
    expect(() => parseRetentionSetting('a', rules)).toThrow('not name=duration');
    expect(() => parseRetentionSetting('a=soon', rules)).toThrow('--retention: a:');
  });

  it('the config file wins over the setting, which wins over the default', () => {
    const policy = resolvePolicy(rules, { a: 1, b: 2 }, { a: 'off' });
    expect([...policy.values()]).toEqual([
      { ms: null, source: 'config' },
      { ms: 2, source: 'setting' },
      { ms: 5000, source: 'default' },
    ]);
  });
});

describe.each(dialects())('retention sweep (%s)', (dialect) => {
  let s: TestStandin;
  let ok: Awaited<ReturnType<typeof startReceiver>>;
  let failing: Awaited<ReturnType<typeof startReceiver>>;
  const P = '/admin/v1/projects/proj_demo';
  const count = (table: 'webhook_deliveries' | 'webhook_attempts' | 'events' | 'run_events' | 'workload_exchanges') => countRows(s, table);

  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { webhookTimeoutMs: 1000 } });
    ok = await startReceiver();
    failing = await startReceiver(() => ({ status: 500, body: 'no' }));
  });
  afterAll(async () => {
    await ok?.close();
    await failing?.close();
    await s?.close();
  });

  it('shows each kind with its default, and takes the config file section', async () => {
    const view = await s.req('GET', '/admin/v1/retention', { key: 'admin' });
    expect(view.status).toBe(200);
    const byName = Object.fromEntries(view.body.rules.map((r: { name: string }) => [r.name, r]));
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining([
        'webhook_deliveries',
        'webhook_events',
        'run_events',
        'workload_tokens',
        'workload_exchanges',
        'image_audit_requests',
      ]),
    );
    expect(byName.webhook_deliveries).toMatchObject({ keep: '30d', source: 'default' });
    const bad = await s.req('POST', '/admin/v1/config', { key: 'admin', body: { retention: { nonsense: '1d' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("unknown record kind 'nonsense'");
    const badValue = await s.req('POST', '/admin/v1/config', { key: 'admin', body: { retention: { run_events: 'forever' } } });
    expect(badValue.status).toBe(400);
    const good = await s.req('POST', '/admin/v1/config', {
      key: 'admin',
      body: { retention: { webhook_deliveries: '2d', webhook_events: '2d' } },
    });
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    const after = await s.req('GET', '/admin/v1/retention', { key: 'admin' });
    expect(after.body.rules.find((r: { name: string }) => r.name === 'webhook_deliveries')).toMatchObject({ keep: '2d', source: 'config' });
    expect((await s.req('GET', '/admin/v1/retention', { key: null })).status).toBe(401);
  });

  it('deletes ended deliveries, their attempts and events, and keeps a pending delivery and its event', async () => {
    const make = async (url: string) =>
      (await s.req('POST', `${P}/webhook_endpoints`, { key: 'admin', body: { name: 'r', url, event_types: ['batch.completed'] } })).body;
    await make(ok.url);
    await make(failing.url);
    const first = await s.req('POST', `${P}/events`, { key: 'admin', body: { type: 'batch.completed' } });
    expect(first.status).toBe(201);
    await s.ctx.jobs.drain();
    expect(ok.received).toHaveLength(1);
    // One delivery succeeded; the other failed its first attempt and waits for its retry (pending).
    expect(await count('webhook_deliveries')).toBe(2);
    const attempts = await count('webhook_attempts');
    expect(attempts).toBe(2);

    // Past every keep time, without running the retry: the pending delivery is still pending in the store.
    s.ctx.clock.advance(5 * 86_400_000);
    const report = await sweep(s.ctx);
    const line = (name: string) => report.rules.find((r) => r.name === name)!;
    expect(line('webhook_deliveries')).toEqual({ name: 'webhook_deliveries', keep: '2d', deleted: 1 });
    expect(line('webhook_events').deleted).toBe(0);
    const left = await s.ctx.store.db.selectFrom('webhook_deliveries').select(['status', 'event_id']).execute();
    expect(left).toEqual([{ status: 'pending', event_id: first.body.id }]);
    expect(await count('webhook_attempts')).toBe(1);

    // Once the window is over the delivery fails; two days later it goes, then its event.
    await s.ctx.jobs.drain();
    s.ctx.clock.advance(3 * 86_400_000);
    await s.ctx.jobs.drain();
    const later = await sweep(s.ctx);
    expect(later.rules.find((r) => r.name === 'webhook_deliveries')!.deleted).toBe(1);
    expect(later.rules.find((r) => r.name === 'webhook_events')!.deleted).toBe(1);
    expect(await count('webhook_deliveries')).toBe(0);
    expect(await count('webhook_attempts')).toBe(0);
    expect(await count('events')).toBe(0);
    // The last sweep is kept for the admin view (any instance shows it).
    const view = await s.req('GET', '/admin/v1/retention', { key: 'admin' });
    expect(view.body.last_sweep).toMatchObject({ object: 'retention.sweep', at: later.at });
  });

  it("keeps an active run's events and deletes an ended run's", async () => {
    const run = async (text: string) => {
      const r = await s.req('POST', '/v1/threads/runs', {
        key: 'platform',
        headers: { 'openai-beta': 'assistants=v2' },
        body: { assistant_id: 'asst_demo', thread: { messages: [{ role: 'user', content: text }] } },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.id as string;
    };
    // A model that calls the demo assistant's get_weather tool when asked about the weather.
    const models = {
      '*': { provider: 'builtin', rules: [{ match: 'weather', tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] }] },
    };
    expect((await s.req('POST', '/admin/v1/config', { key: 'admin', body: { models } })).status).toBe(200);
    const done = await run('hello');
    await s.ctx.jobs.drain();
    // The run waits for tool outputs (requires_action: active).
    const waiting = await run('what is the weather in Paris?');
    await s.ctx.jobs.drain();
    const status = async (id: string) =>
      (await s.ctx.store.db.selectFrom('thread_runs').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
    expect(await status(done)).toBe('completed');
    expect(await status(waiting)).toBe('requires_action');
    const eventsOf = async (id: string) =>
      (await s.ctx.store.db.selectFrom('run_events').select('seq').where('run_id', '=', id).execute()).length;
    expect(await eventsOf(done)).toBeGreaterThan(0);
    const waitingEvents = await eventsOf(waiting);
    expect(waitingEvents).toBeGreaterThan(0);

    // Two days on (the default keep is one), before the expiry job has looked at the waiting run.
    s.ctx.clock.advance(2 * 86_400_000);
    const report = await sweep(s.ctx);
    expect(report.rules.find((r) => r.name === 'run_events')!.deleted).toBeGreaterThan(0);
    expect(await eventsOf(done)).toBe(0);
    expect(await eventsOf(waiting)).toBe(waitingEvents);
  });

  it('deletes in batches of 1000 rows, one transaction each, and says when its budget ran out', async () => {
    const refused = () =>
      s.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/json' },
        payload: {
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
          subject_token: 'not-a-jwt',
          identity_provider_id: 'idp_missing',
          service_account_id: 'svc_acct_missing',
        },
      });
    const before = await count('workload_exchanges');
    for (let i = 0; i < 1200; i += 100) {
      const answers = await Promise.all(Array.from({ length: 100 }, refused));
      expect(answers.every((a) => a.statusCode >= 400 && a.statusCode < 500)).toBe(true);
    }
    expect(await count('workload_exchanges')).toBe(before + 1200);
    s.ctx.clock.advance(31 * 86_400_000);
    // No time budget: it stops after the first full batch.
    const partial = await sweep(s.ctx, 0);
    expect(partial.more).toBe(true);
    expect(partial.rules.find((r) => r.name === 'workload_exchanges')!.deleted).toBe(1000);
    const rest = await sweep(s.ctx);
    expect(rest.more).toBe(false);
    expect(rest.rules.find((r) => r.name === 'workload_exchanges')!.deleted).toBe(before + 200);
    expect(await count('workload_exchanges')).toBe(0);
  });
});
