import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { modules } from '../../src/server/modules.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { probeModule } from '../ratelimit/probe.js';
import { startReceiver } from '../webhooks/receiver.js';
import { parse, value } from './scrape.js';

const all = [...modules, probeModule];
const P = '/admin/v1/projects/proj_demo';

describe.each(dialects())('/admin/v1/metrics (%s)', (dialect) => {
  let s: TestStandin | undefined;
  let rx: Awaited<ReturnType<typeof startReceiver>> | undefined;
  afterEach(async () => {
    await s?.close();
    await rx?.close();
    s = rx = undefined;
  });

  const scrape = async (url: string) => {
    const res = await fetch(`${url}/admin/v1/metrics`, { headers: { authorization: `Bearer ${s!.keys.admin}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parse(await res.text());
  };

  it('counts real traffic by route template and status, rate-limit decisions and the job queue', async () => {
    s = await startTestStandin({ dialect, modules: all });
    await applyConfig(s.ctx, all, {
      rate_limits: { replace_defaults: true, ramp: { enabled: false }, models: { m: { tiers: { tier_1: { rpm: 1 } } } } },
    });
    const url = await s.listen();
    const client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });

    const model = (await client.models.list()).data[0].id;
    await client.models.retrieve(model);
    await client.post('/probe', { body: { model: 'm' } });
    await expect(client.post('/probe', { body: { model: 'm' } })).rejects.toMatchObject({ status: 429 });
    expect((await fetch(`${url}/v1/no/such/thing-${model}`)).status).toBe(401);
    expect((await fetch(`${url}/admin/v1/metrics`)).status).toBe(401);

    // A webhook delivery waits in the queue (workers are off) until drained.
    rx = await startReceiver();
    const ep = await s.req('POST', `${P}/webhook_endpoints`, {
      key: 'admin',
      body: { name: 'rx', url: rx.url, event_types: ['batch.completed'] },
    });
    expect(ep.status).toBe(201);
    expect((await s.req('POST', `${P}/events`, { key: 'admin', body: { type: 'batch.completed' } })).status).toBe(201);

    // A job scheduled for later waits in the queue but is no backlog: nothing is due.
    await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.later', {}, { runAt: s.ctx.clock.now() + 3_600_000 });
    // Two jobs of a kind no worker takes, due 90 s and 30 s ago (and one not yet due): the backlog is 2,
    // and its age is the older one's wait.
    const now = s.ctx.clock.now();
    for (const ago of [30_000, 90_000, -60_000]) await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.stuck', {}, { runAt: now - ago });

    let m = await scrape(url);
    const count = 'standin_http_request_duration_seconds_count';
    expect(value(m, count, { method: 'GET', route: '/v1/models', status: '200' })).toBe(1);
    expect(value(m, count, { method: 'GET', route: '/v1/models/:model', status: '200' })).toBe(1);
    expect(value(m, count, { method: 'POST', route: '/v1/probe', status: '200' })).toBe(1);
    expect(value(m, count, { method: 'POST', route: '/v1/probe', status: '429' })).toBe(1);
    expect(value(m, count, { method: 'GET', route: '(unmatched)', status: '401' })).toBe(1);
    expect(value(m, 'standin_http_request_duration_seconds_bucket', { route: '/v1/probe', status: '200', le: '+Inf' })).toBe(1);
    // Labels are templates: no raw URL (an id, an unknown path) becomes a label value.
    expect(m.some((x) => Object.values(x.labels).some((v) => v.includes(model)))).toBe(false);
    expect(value(m, 'standin_rate_limit_decisions_total', { route: '/v1/probe', decision: 'admitted' })).toBe(1);
    expect(value(m, 'standin_rate_limit_decisions_total', { route: '/v1/probe', decision: 'limited' })).toBe(1);
    // The event waits to be fanned out to its endpoints' deliveries.
    expect(value(m, 'standin_jobs', { kind: 'event.fanout', state: 'waiting' })).toBe(1);
    expect(value(m, 'standin_jobs', { kind: 'event.fanout', state: 'running' })).toBe(0);
    expect(value(m, 'standin_jobs_backlog', { kind: 'event.fanout' })).toBe(1);
    expect(value(m, 'standin_jobs_oldest_due_age_seconds', { kind: 'event.fanout' })).toBeGreaterThanOrEqual(0);
    expect(value(m, 'standin_jobs_oldest_due_age_seconds', { kind: 'event.fanout' })).toBeLessThan(60);
    expect(value(m, 'standin_jobs', { kind: 'test.stuck', state: 'waiting' })).toBe(3);
    expect(value(m, 'standin_jobs_backlog', { kind: 'test.stuck' })).toBe(2);
    const age = value(m, 'standin_jobs_oldest_due_age_seconds', { kind: 'test.stuck' })!;
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(90 + 60);
    expect(value(m, 'standin_jobs', { kind: 'test.later', state: 'waiting' })).toBe(1);
    expect(value(m, 'standin_jobs_backlog', { kind: 'test.later' })).toBe(0);
    expect(value(m, 'standin_jobs_oldest_due_age_seconds', { kind: 'test.later' })).toBe(0);
    expect(value(m, 'standin_event_loop_lag_p99_seconds', {})).toBeGreaterThanOrEqual(0);
    if (dialect === 'postgres') expect(value(m, 'standin_store_pool_connections', { state: 'total' })).toBeGreaterThan(0);

    await s.ctx.jobs.drain();
    expect(rx.received).toHaveLength(1);
    m = await scrape(url);
    expect(m.some((x) => x.name === 'standin_jobs' && ['event.fanout', 'webhook.deliver'].includes(x.labels.kind))).toBe(false);
    // The first scrape is counted too, under its template.
    expect(value(m, count, { method: 'GET', route: '/admin/v1/metrics', status: '200' })).toBe(1);
  });

  it('is not served with --no-metrics', async () => {
    s = await startTestStandin({ dialect, settings: { metrics: false } });
    expect((await s.req('GET', '/admin/v1/metrics', { key: 'admin' })).status).toBe(404);
  });
});
