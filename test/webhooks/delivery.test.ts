import OpenAI from 'openai';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { startReceiver } from './receiver.js';

const openai = new OpenAI({ apiKey: 'sk-unused' });
/** The real time, as a receiver's clock reads it (Unix seconds). */
const realSeconds = () => Math.floor(Date.now() / 1000);
const P = '/admin/v1/projects/proj_demo';

describe.each(dialects())('webhook deliveries (%s)', (dialect) => {
  let s: TestStandin;
  let rx: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { webhookTimeoutMs: 1000 } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await s?.close();
  });
  afterEach(async () => {
    rx.set(() => ({ status: 200, body: 'ok' }));
    rx.received.length = 0;
    for (const e of (await s.req('GET', `${P}/webhook_endpoints`, { key: 'admin' })).body.data)
      await s.req('DELETE', `${P}/webhook_endpoints/${e.id}`, { key: 'admin' });
  });

  const createEndpoint = async (event_types: string[], extra: Record<string, unknown> = {}) => {
    const r = await s.req('POST', `${P}/webhook_endpoints`, {
      key: 'admin',
      body: { name: 'receiver', url: rx.url, event_types, ...extra },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body as { id: string; secret: string };
  };
  const trigger = async (type: string, data?: unknown) => {
    const r = await s.req('POST', `${P}/events`, { key: 'admin', body: { type, ...(data ? { data } : {}) } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body as { id: string; type: string; created_at: number; data: any };
  };
  const deliveriesOf = async (endpointId: string) =>
    (await s.req('GET', `${P}/webhook_endpoints/${endpointId}/deliveries`, { key: 'admin' })).body.data;
  const delivery = async (id: string) => (await s.req('GET', `${P}/webhook_deliveries/${id}`, { key: 'admin' })).body;
  /** Moves the Standin clock to the next pending delivery attempt; false when none is pending. */
  const advanceToNextAttempt = async () => {
    const row = await s.ctx.store.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.min('run_at').as('next'))
      .where('kind', '=', 'webhook.deliver')
      .executeTakeFirst();
    if (row?.next == null) return false;
    s.ctx.clock.advance(Math.max(0, Number(row.next) - s.ctx.clock.now()));
    return true;
  };
  const hdr = (i: number) => {
    const h = rx.received[i].headers;
    return {
      'webhook-id': h['webhook-id'] as string,
      'webhook-timestamp': h['webhook-timestamp'] as string,
      'webhook-signature': h['webhook-signature'] as string,
    };
  };

  it('manages endpoints: secret shown once, deprecated type refused, unsafe URLs refused', async () => {
    const ep = await createEndpoint(['batch.completed']);
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(ep.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    const got = await s.req('GET', `${P}/webhook_endpoints/${ep.id}`, { key: 'admin' });
    expect(got.body.secret).toBeUndefined();
    expect(got.body).toMatchObject({ status: 'enabled', event_types: ['batch.completed'], secret_hint: `whsec_…${ep.secret.slice(-4)}` });

    const dep = await s.req('POST', `${P}/webhook_endpoints`, {
      key: 'admin',
      body: { name: 'x', url: rx.url, event_types: ['live.call.incoming'] },
    });
    expect(dep.status).toBe(400);
    expect(dep.body.error).toMatchObject({ param: 'event_types[0]', code: 'deprecated_event_type' });
    const meta = await s.req('POST', `${P}/webhook_endpoints`, {
      key: 'admin',
      body: { name: 'x', url: 'http://169.254.169.254/latest', event_types: ['batch.failed'] },
    });
    expect(meta.status).toBe(400);
    expect(meta.body.error.param).toBe('url');
    const extra = await s.req('POST', `${P}/webhook_endpoints`, {
      key: 'admin',
      body: { name: 'x', url: rx.url, event_types: ['batch.failed'], colour: 'red' },
    });
    expect(extra.status).toBe(400);
    const badType = await s.req('POST', `${P}/webhook_endpoints`, {
      key: 'admin',
      body: { name: 'x', url: rx.url, event_types: ['batch.done'] },
    });
    expect(badType.body.error.param).toBe('event_types[0]');
    expect((await s.req('GET', `${P}/webhook_endpoints`)).status).toBe(401);
    expect((await s.req('GET', `${P}/webhook_endpoints`, { key: 'platform' })).status).toBe(401);
  });

  it('delivers the envelope signed per Standard Webhooks, verified by standardwebhooks and openai.webhooks.unwrap', async () => {
    const ep = await createEndpoint(['batch.completed', 'response.completed']);
    // webhook-timestamp is the real time of the attempt (docs/webhooks.md), whatever the Standin clock says.
    const before = realSeconds();
    const event = await trigger('batch.completed');
    await trigger('batch.failed'); // not subscribed
    await s.ctx.jobs.drain();
    const after = realSeconds();
    expect(rx.received).toHaveLength(1);
    const r = rx.received[0];
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['user-agent']).toMatch(/Standin/);
    expect(r.headers['webhook-id']).toBe(event.id);
    expect(Number(r.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before);
    expect(Number(r.headers['webhook-timestamp'])).toBeLessThanOrEqual(after);
    expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const body = JSON.parse(r.body);
    expect(body).toEqual({
      id: event.id,
      object: 'event',
      type: 'batch.completed',
      created_at: expect.any(Number),
      data: { id: expect.stringMatching(/^batch_/) },
    });
    expect(new Webhook(ep.secret).verify(r.body, hdr(0))).toEqual(body);
    const unwrapped = await openai.webhooks.unwrap(r.body, hdr(0), ep.secret);
    expect(unwrapped).toMatchObject({ id: event.id, type: 'batch.completed' });
    // A tampered body fails both.
    expect(() => new Webhook(ep.secret).verify(r.body.replace('batch_', 'batcx_'), hdr(0))).toThrow();
    await expect(openai.webhooks.unwrap(r.body.replace('batch_', 'batcx_'), hdr(0), ep.secret)).rejects.toThrow();

    const [d] = await deliveriesOf(ep.id);
    expect(d).toMatchObject({ status: 'succeeded', attempt_count: 1, last_status_code: 200, event_id: event.id });
    const full = await delivery(d.id);
    expect(full.attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 200, ok: true, response_excerpt: 'ok', duration_ms: expect.any(Number) }),
    ]);
  });

  it('signs with both secrets during a rotation, then only with the new one', async () => {
    const ep = await createEndpoint(['eval.run.succeeded']);
    const rotated = await s.req('POST', `${P}/webhook_endpoints/${ep.id}/rotate_secret`, {
      key: 'admin',
      body: { grace_period_seconds: 60 },
    });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(ep.secret);
    expect(rotated.body.previous_secret_expires_at - s.ctx.clock.nowSeconds()).toBeGreaterThanOrEqual(59);
    expect(rotated.body.previous_secret_expires_at - s.ctx.clock.nowSeconds()).toBeLessThanOrEqual(60);
    await trigger('eval.run.succeeded');
    await s.ctx.jobs.drain();
    expect(hdr(0)['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [ep.secret, fresh]) {
      expect(new Webhook(secret).verify(rx.received[0].body, hdr(0))).toMatchObject({ type: 'eval.run.succeeded' });
      await expect(openai.webhooks.unwrap(rx.received[0].body, hdr(0), secret)).resolves.toMatchObject({ type: 'eval.run.succeeded' });
    }
    s.ctx.clock.advance(61_000);
    await trigger('eval.run.succeeded');
    await s.ctx.jobs.drain();
    expect(hdr(1)['webhook-signature'].split(' ')).toHaveLength(1);
    expect(new Webhook(fresh).verify(rx.received[1].body, hdr(1))).toMatchObject({ type: 'eval.run.succeeded' });
    expect(() => new Webhook(ep.secret).verify(rx.received[1].body, hdr(1))).toThrow();
    await expect(openai.webhooks.unwrap(rx.received[1].body, hdr(1), ep.secret)).rejects.toThrow();
  });

  it('a verifying receiver answers 400 to a secret it does not know; Standin records the failure and retries', async () => {
    const ep = await createEndpoint(['batch.failed']);
    let secret = ep.secret;
    rx.set((_n, req) => {
      try {
        new Webhook(secret).verify(req.body, req.headers as Record<string, string>);
        return { status: 200, body: 'verified' };
      } catch {
        return { status: 400, body: 'invalid signature' };
      }
    });
    // Rotated with no grace period while the receiver still holds the old secret.
    const rotated = await s.req('POST', `${P}/webhook_endpoints/${ep.id}/rotate_secret`, {
      key: 'admin',
      body: { grace_period_seconds: 0 },
    });
    await trigger('batch.failed');
    await s.ctx.jobs.drain();
    const [d] = await deliveriesOf(ep.id);
    expect(d).toMatchObject({ status: 'pending', last_status_code: 400 });
    expect((await delivery(d.id)).attempts[0]).toMatchObject({ ok: false, status_code: 400, response_excerpt: 'invalid signature' });
    secret = rotated.body.secret;
    await advanceToNextAttempt();
    await s.ctx.jobs.drain();
    expect((await delivery(d.id)).attempts.map((a: any) => a.response_excerpt)).toEqual(['invalid signature', 'verified']);
  });

  it('retries a failing receiver with backoff on the Standin clock: same webhook-id, each attempt signed at its real time, every attempt recorded', async () => {
    const ep = await createEndpoint(['fine_tuning.job.succeeded']);
    const started = realSeconds();
    rx.set((n) => (n <= 3 ? { status: 500, body: `boom ${n}` } : { status: 204 }));
    const event = await trigger('fine_tuning.job.succeeded');
    await s.ctx.jobs.drain();
    expect(rx.received).toHaveLength(1);
    while (rx.received.length < 4) {
      expect(await advanceToNextAttempt()).toBe(true);
      await s.ctx.jobs.drain();
    }
    const [d0] = await deliveriesOf(ep.id);
    const starts = (
      await s.ctx.store.db.selectFrom('webhook_attempts').select('started_at').where('delivery_id', '=', d0.id).orderBy('attempt').execute()
    ).map((a) => Number(a.started_at));
    const gaps = starts.slice(1).map((t, i) => t - starts[i]);
    // 5 s, 10 s, 20 s with ±20 % jitter, on the Standin clock.
    expect(gaps[0]).toBeGreaterThanOrEqual(4_000);
    expect(gaps[0]).toBeLessThan(7_000);
    expect(gaps[2]).toBeGreaterThanOrEqual(16_000);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([event.id]));
    // The Standin clock moved about 35 s between the attempts; their timestamps are the real time of each
    // (moments apart here), and verify with the receivers' default 5-minute tolerance.
    const stamps = rx.received.map((r) => Number(r.headers['webhook-timestamp']));
    expect(stamps).toEqual([...stamps].sort((x, y) => x - y));
    for (const t of stamps) expect(t).toBeGreaterThanOrEqual(started);
    for (const t of stamps) expect(t).toBeLessThanOrEqual(realSeconds());
    for (let i = 0; i < 4; i++)
      await expect(openai.webhooks.unwrap(rx.received[i].body, hdr(i), ep.secret)).resolves.toMatchObject({ id: event.id });
    const [d] = await deliveriesOf(ep.id);
    expect(d).toMatchObject({ status: 'succeeded', attempt_count: 4, last_status_code: 204 });
    const full = await delivery(d.id);
    expect(full.attempts.map((a: any) => [a.status_code, a.ok, a.response_excerpt])).toEqual([
      [500, false, 'boom 1'],
      [500, false, 'boom 2'],
      [500, false, 'boom 3'],
      [204, true, null],
    ]);
    expect(await advanceToNextAttempt()).toBe(false);
  });

  it('counts a 3xx as a failure and never follows it', async () => {
    const ep = await createEndpoint(['batch.expired']);
    rx.set((n) => (n === 1 ? { status: 307, headers: { location: `${rx.url}/elsewhere` } } : { status: 200 }));
    await trigger('batch.expired');
    await s.ctx.jobs.drain();
    expect(rx.received).toHaveLength(1);
    const [d] = await deliveriesOf(ep.id);
    expect(d).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: 307 });
    expect((await delivery(d.id)).attempts[0].error).toMatch(/redirect not followed/);
    await advanceToNextAttempt();
    await s.ctx.jobs.drain();
    expect(rx.received.map((r) => r.headers['webhook-id'])).toHaveLength(2);
    expect((await deliveriesOf(ep.id))[0]).toMatchObject({ status: 'succeeded', attempt_count: 2 });
  });

  it('counts no answer within the timeout as a failure', async () => {
    const ep = await createEndpoint(['batch.cancelled']);
    rx.set((n) => (n === 1 ? { status: 200, delayMs: 2_500 } : { status: 200 }));
    await trigger('batch.cancelled');
    await s.ctx.jobs.drain();
    const [d] = await deliveriesOf(ep.id);
    expect(d).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: null });
    expect((await delivery(d.id)).attempts[0]).toMatchObject({ ok: false, status_code: null, error: 'no answer within 1000 ms' });
    await advanceToNextAttempt();
    await s.ctx.jobs.drain();
    expect((await deliveriesOf(ep.id))[0]).toMatchObject({ status: 'succeeded', attempt_count: 2 });
  });

  it('after the Standin clock moved 72 hours, every attempt still verifies at a standardwebhooks receiver (5-minute tolerance)', async () => {
    const ep = await createEndpoint(['batch.completed']);
    const verdicts: boolean[] = [];
    // A receiver as the docs show it: standardwebhooks with its default tolerance, 400 on a bad signature.
    // Its first answer is a 500 (after verifying), so a retry is signed too.
    rx.set((n, req) => {
      let ok = true;
      try {
        new Webhook(ep.secret).verify(req.body, req.headers as Record<string, string>);
      } catch {
        ok = false;
      }
      verdicts.push(ok);
      return ok ? { status: n === 1 ? 500 : 200, body: 'verified' } : { status: 400, body: 'invalid signature' };
    });
    s.ctx.clock.advance(72 * 3_600_000);
    const event = await trigger('batch.completed');
    await s.ctx.jobs.drain();
    expect(await advanceToNextAttempt()).toBe(true);
    await s.ctx.jobs.drain();
    expect(verdicts).toEqual([true, true]);
    const [d] = await deliveriesOf(ep.id);
    expect(d).toMatchObject({ status: 'succeeded', attempt_count: 2 });
    for (let i = 0; i < 2; i++)
      await expect(openai.webhooks.unwrap(rx.received[i].body, hdr(i), ep.secret)).resolves.toMatchObject({ id: event.id });
    // The Standin clock still dates the event and schedules the retry.
    expect(event.created_at).toBeGreaterThanOrEqual(realSeconds() + 72 * 3600 - 60);
    expect(JSON.parse(rx.received[0].body).created_at).toBe(event.created_at);
    expect(d.created_at).toBeGreaterThanOrEqual(realSeconds() + 72 * 3600 - 60);
  });

  it('gives up after 72 hours of the Standin clock and marks the delivery failed', async () => {
    const ep = await createEndpoint(['eval.run.failed']);
    rx.set(() => ({ status: 503, body: 'down' }));
    const start = s.ctx.clock.now();
    await trigger('eval.run.failed');
    await s.ctx.jobs.drain();
    let guard = 0;
    while (await advanceToNextAttempt()) {
      await s.ctx.jobs.drain();
      if (++guard > 200) throw new Error('retries never ended');
    }
    const [d] = await deliveriesOf(ep.id);
    expect(d.status).toBe('failed');
    expect(d.attempt_count).toBe(rx.received.length);
    expect(d.attempt_count).toBeGreaterThan(60);
    const lastAt = d.last_attempt_at * 1000;
    expect(lastAt - start).toBeGreaterThanOrEqual(72 * 3600_000 - 2_000);
    expect(lastAt - start).toBeLessThanOrEqual(72 * 3600_000 + 2_000);
    // Resend starts a fresh delivery of the same event (same webhook-id).
    rx.set(() => ({ status: 200 }));
    const resent = await s.req('POST', `${P}/webhook_deliveries/${d.id}/resend`, { key: 'admin' });
    expect(resent.status).toBe(201);
    await s.ctx.jobs.drain();
    expect(rx.received.at(-1)!.headers['webhook-id']).toBe(d.event_id);
    expect((await delivery(resent.body.id)).status).toBe('succeeded');
  });

  it('skips disabled endpoints and sends test events of any type to one endpoint', async () => {
    const ep = await createEndpoint(['batch.completed']);
    expect((await s.req('POST', `${P}/webhook_endpoints/${ep.id}/disable`, { key: 'admin' })).body.status).toBe('disabled');
    await trigger('batch.completed');
    await s.ctx.jobs.drain();
    expect(rx.received).toHaveLength(0);
    await s.req('POST', `${P}/webhook_endpoints/${ep.id}/enable`, { key: 'admin' });
    const test = await s.req('POST', `${P}/webhook_endpoints/${ep.id}/test`, { key: 'admin', body: { type: 'live.transport.incoming' } });
    expect(test.status).toBe(201);
    await s.ctx.jobs.drain();
    expect(rx.received).toHaveLength(1);
    const body = JSON.parse(rx.received[0].body);
    expect(body).toMatchObject({ type: 'live.transport.incoming', data: { type: 'sip', session_id: expect.stringMatching(/^live_/) } });
    // Earlier tests moved the Standin clock by days; the signature carries the real time all the same.
    await expect(openai.webhooks.unwrap(rx.received[0].body, hdr(0), ep.secret)).resolves.toMatchObject({ id: test.body.event.id });
  });

  it('carries SIP payloads as the spec says', async () => {
    await createEndpoint(['realtime.call.incoming', 'live.transport.incoming']);
    const sip_headers = [
      { name: 'Via', value: 'SIP/2.0/TLS a' },
      { name: 'Authorization', value: 'Digest secret' },
      { name: 'X-Tag', value: 'one' },
      { name: 'proxy-authorization', value: 'Digest other' },
      { name: 'X-Tag', value: 'two' },
      { name: 'Max-Forwards', value: '63' },
    ];
    await trigger('realtime.call.incoming', { sip_headers, sip_media_security: 'rtp' });
    await trigger('live.transport.incoming', { sip_headers, sip_media_security: 'zrtp' });
    await s.ctx.jobs.drain();
    const [rt, live] = rx.received
      .map((r) => JSON.parse(r.body))
      .sort((a, b) => a.type.localeCompare(b.type))
      .reverse();
    const kept = [sip_headers[0], sip_headers[2], sip_headers[4], sip_headers[5]];
    expect(rt.data).toEqual({ call_id: expect.stringMatching(/^rtc_/), sip_headers: kept, sip_media_security: 'rtp' });
    expect(live.data).toEqual({ session_id: expect.stringMatching(/^live_/), sip_headers: kept, type: 'sip' });
    expect(live.data.session_id).not.toBe(rt.data.call_id);
  });

  it('safety events carry object "event" and ids that GET /v1/safety/… returns', async () => {
    await createEndpoint(['safety.warning_issued', 'safety.alert.created', 'safety.org_alert.created', 'safety.deactivation_issued']);
    const warn = await trigger('safety.warning_issued', { safety_identifier: 'user_42' });
    const alert = await trigger('safety.alert.created');
    const org = await trigger('safety.org_alert.created');
    await s.ctx.jobs.drain();
    expect(rx.received).toHaveLength(3);
    for (const r of rx.received) expect(JSON.parse(r.body).object).toBe('event');
    const c = await s.req('GET', `/v1/safety/cases/${warn.data.id}`, { key: 'platform' });
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ id: warn.data.id, object: 'safety.case', action: 'warning', safety_identifier: 'user_42' });
    expect((await s.req('GET', `/v1/safety/alerts/${alert.data.id}`, { key: 'platform' })).body).toMatchObject({
      object: 'safety.alert',
      scope: 'project',
    });
    expect((await s.req('GET', `/v1/safety/alerts/${org.data.id}`, { key: 'platform' })).body).toMatchObject({
      object: 'safety.alert',
      scope: 'organization',
      project_id: null,
    });
    expect((await s.req('GET', '/v1/safety/cases/safety_case_nope', { key: 'platform' })).status).toBe(404);
    expect((await s.req('GET', `/v1/safety/cases/${warn.data.id}`)).status).toBe(401);
  });

  it('triggers every event type of the spec and refuses unknown ones', async () => {
    const types = (await s.req('GET', '/admin/v1/webhook_event_types', { key: 'admin' })).body.data.map((t: any) => t.type);
    expect(types).toHaveLength(21);
    for (const t of types) {
      const e = await trigger(t);
      expect(e).toMatchObject({ object: 'event', type: t });
      expect(e.id).toMatch(/^evt_/);
    }
    const bad = await s.req('POST', `${P}/events`, { key: 'admin', body: { type: 'batch.exploded' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('type');
    // response.* triggers store a real response behind data.id.
    const resp = await trigger('response.incomplete');
    const got = await s.req('GET', `/v1/responses/${resp.data.id}`, { key: 'platform' });
    expect(got.body).toMatchObject({ object: 'response', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });
});
