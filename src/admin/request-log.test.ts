import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../../test/helpers.js';
import { RequestLog } from './request-log.js';

describe('request log: filters, detail, redaction', () => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin();
  });
  afterAll(async () => {
    await s?.close();
  });

  it('records who made a request, its model, headers and bodies, with secrets redacted', async () => {
    const chat = await s.req('POST', '/v1/chat/completions', {
      key: 'platform',
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(chat.status).toBe(200);
    const made = await s.req('POST', '/admin/v1/projects/proj_demo/webhook_endpoints', {
      key: 'admin',
      body: { name: 'x', url: 'https://example.com/hook', event_types: ['batch.completed'] },
    });
    expect(made.body.secret).toMatch(/^whsec_/);

    const list = await s.req('GET', '/admin/v1/requests?path=/v1/chat', { key: 'admin' });
    expect(list.body.data).toHaveLength(1);
    const row = list.body.data[0];
    expect(row).toMatchObject({ method: 'POST', status: 200, project_id: 'proj_demo', model: 'gpt-4o-mini' });
    expect(row.credential_id).toMatch(/^key_/);

    const detail = await s.req('GET', `/admin/v1/requests/${row.id}`, { key: 'admin' });
    expect(detail.body.request.headers.authorization).toBe('[redacted]');
    expect(detail.body.request.body.model).toBe('gpt-4o-mini');
    expect(detail.body.response.headers['x-ratelimit-limit-requests']).toBeDefined();
    expect(detail.body.response.body.id).toBe(chat.body.id);
    expect(JSON.stringify(detail.body)).not.toContain(s.keys.platform);

    const hook = (await s.req('GET', '/admin/v1/requests?path=/webhook_endpoints&status=2xx', { key: 'admin' })).body.data[0];
    const hookDetail = await s.req('GET', `/admin/v1/requests/${hook.id}`, { key: 'admin' });
    expect(hookDetail.body.response.body.secret).toBe('[redacted]');
    expect(JSON.stringify(hookDetail.body)).not.toContain(made.body.secret);
  });

  it('filters by status, class, credential, time and newer-than', async () => {
    await s.req('GET', '/v1/models', { key: null });
    const unauth = (await s.req('GET', '/admin/v1/requests?status=401', { key: 'admin' })).body.data;
    expect(unauth.length).toBeGreaterThan(0);
    expect(unauth.every((r: { status: number }) => r.status === 401)).toBe(true);
    const fours = (await s.req('GET', '/admin/v1/requests?status=4xx', { key: 'admin' })).body.data;
    expect(fours.every((r: { status: number }) => r.status >= 400 && r.status < 500)).toBe(true);
    const admin = (await s.req('GET', '/admin/v1/requests?credential_id=admin', { key: 'admin' })).body.data;
    expect(admin.length).toBeGreaterThan(0);
    expect(admin.every((r: { path: string }) => r.path.startsWith('/admin/v1/'))).toBe(true);
    const now = s.ctx.clock.nowSeconds();
    expect((await s.req('GET', `/admin/v1/requests?since=${now + 100}`, { key: 'admin' })).body.data).toHaveLength(0);
    // Read as the dashboard does, so the read itself stays out of the log.
    const newest = (await s.req('GET', '/admin/v1/requests?limit=1', { key: 'admin', headers: { 'x-standin-dashboard': '1' } })).body
      .data[0];
    await s.req('GET', '/v1/models', { key: 'platform' });
    const newer = (await s.req('GET', `/admin/v1/requests?after=${newest.id}`, { key: 'admin' })).body.data;
    expect(newer.map((r: { path: string }) => r.path)).toEqual(['/v1/models']);
  });

  it('refuses bad filters and answers 404 for a request no longer held', async () => {
    expect((await s.req('GET', '/admin/v1/requests?status=abc', { key: 'admin' })).status).toBe(400);
    expect((await s.req('GET', '/admin/v1/requests?color=red', { key: 'admin' })).status).toBe(400);
    expect((await s.req('GET', '/admin/v1/requests/req_nope', { key: 'admin' })).status).toBe(404);
    expect((await s.req('GET', '/admin/v1/requests', { key: null })).status).toBe(401);
  });

  it("keeps the dashboard's own reads out of the log, but not its writes or any API request", async () => {
    const before = (await s.req('GET', '/admin/v1/requests?limit=1', { key: 'admin', headers: { 'x-standin-dashboard': '1' } })).body
      .data[0].id;
    await s.req('GET', '/admin/v1/clock', { key: 'admin', headers: { 'x-standin-dashboard': '1' } });
    await s.req('GET', '/v1/models', { key: 'platform', headers: { 'x-standin-dashboard': '1' } });
    const newer = (await s.req('GET', `/admin/v1/requests?after=${before}`, { key: 'admin' })).body.data;
    expect(newer.map((r: { path: string }) => r.path)).toEqual(['/v1/models']);
  });
});

describe("request log: a reply's headers", () => {
  it('keeps what reply.getHeaders() answers, over a real connection and an injected one, with headers set on the raw response too', async () => {
    const { default: Fastify } = await import('fastify');
    const { sentHeadersOf } = await import('./request-log.js');
    const app = Fastify();
    const kept: { sent: Record<string, unknown>; copy: Record<string, unknown> }[] = [];
    app.addHook('onResponse', (_request, reply, done) => {
      kept.push({ sent: { ...sentHeadersOf(reply) }, copy: reply.getHeaders() });
      done();
    });
    app.get('/plain', async (_request, reply) => reply.header('x-one', '1').send({ ok: true }));
    app.get('/raw', async (_request, reply) => {
      reply.raw.setHeader('connection', 'close');
      return reply.header('x-two', '2').send({ ok: true });
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      expect((await fetch(`${address}/plain`)).status).toBe(200);
      expect((await fetch(`${address}/raw`)).status).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/plain' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
    expect(kept).toHaveLength(3);
    for (const { sent, copy } of kept) expect(sent).toEqual({ ...copy });
    expect(kept[0].sent).toMatchObject({ 'x-one': '1', 'content-type': 'application/json; charset=utf-8' });
    expect(kept[1].sent).toMatchObject({ 'x-two': '2', connection: 'close' });
  });
});

describe('request log: the byte ring', () => {
  const entry = (i: number, body = '') => ({
    id: `req-${i}`,
    method: 'POST',
    url: `/v1/things/${i}?q=é`,
    status: 200 + (i % 3),
    duration: i * 100 + 25,
    at: 1_700_000_000 + i,
    credential_id: i % 2 ? `key_${i}` : null,
    project_id: i % 2 ? 'proj_demo' : null,
    model: i % 4 ? null : 'gpt-4o',
    route: '/v1/things/{id}',
    reqHeaders: { 'content-type': 'application/json', 'x-multi': ['a', 'b'], 'x-empty': '' },
    reqBody: i % 2 ? { n: i, text: `ünïcode ${body}` } : undefined,
    resHeaders: { 'content-length': 17, 'x-ratelimit-remaining-requests': String(1000 - i) },
    resBody: i % 3 ? `{"id":"thing_${i}","body":"${body}"}` : null,
  });

  it('reads back every field of what it was given, newest first, up to its capacity', () => {
    const log = new RequestLog(5);
    for (let i = 1; i <= 7; i++) log.add(entry(i));
    expect(log.size).toBe(5);
    expect(log.recent().map((r) => r.id)).toEqual(['req-7', 'req-6', 'req-5', 'req-4', 'req-3']);
    expect(log.query({ after: 'req-5' }).map((r) => r.id)).toEqual(['req-7', 'req-6']);
    const seven = log.get('req-7')!;
    expect(seven).toMatchObject({
      method: 'POST',
      path: '/v1/things/7?q=é',
      status: 201,
      duration_ms: 7.25,
      at: 1_700_000_007,
      credential_id: 'key_7',
      project_id: 'proj_demo',
      model: null,
      route: '/v1/things/{id}',
    });
    expect(seven.request).toEqual({
      headers: { 'content-type': 'application/json', 'x-multi': 'a, b', 'x-empty': '' },
      body: { n: 7, text: 'ünïcode ' },
    });
    expect(seven.response).toEqual({
      headers: { 'content-length': '17', 'x-ratelimit-remaining-requests': '993' },
      body: { id: 'thing_7', body: '' },
    });
    const four = log.get('req-4')!;
    expect(four).toMatchObject({ credential_id: null, project_id: null, model: 'gpt-4o', request: { body: null } });
    expect(log.get('req-2')).toBeUndefined();
    const seen: string[] = [];
    log.each(1_700_000_005, (r, header) => seen.push(`${r.id} ${header('x-ratelimit-remaining-requests')} ${header('nope')}`));
    expect(seen).toEqual(['req-7 993 undefined', 'req-6 994 undefined', 'req-5 995 undefined']);
    log.clear();
    expect(log.size).toBe(0);
    log.add(entry(8));
    expect(log.recent().map((r) => r.id)).toEqual(['req-8']);
  });

  it('lets its oldest requests go first when their bytes are needed, across its wrap, never a newer one', () => {
    // 100 requests would take 800 KB: the ring has its least, 1 MB.
    const log = new RequestLog(100);
    const big = 'x'.repeat(12000);
    // Records of up to 24 KB (bodies both ways): fewer than 100 fit.
    for (let i = 1; i <= 400; i++) {
      log.add(entry(i, big));
      const ids = log.recent(1000).map((r) => Number(r.id.slice(4)));
      // Always the newest ones, in order, with no gap.
      expect(ids[0]).toBe(i);
      expect(ids).toEqual(ids.map((_, k) => i - k));
    }
    expect(log.size).toBeGreaterThan(20);
    expect(log.size).toBeLessThan(100);
    const kept = log.recent(1000);
    for (const r of kept) {
      const d = log.get(r.id)!;
      const n = Number(r.id.slice(4));
      expect(d.path).toBe(`/v1/things/${n}?q=é`);
      if (n % 2) expect((d.request.body as { n: number }).n).toBe(n);
      if (n % 3) expect((d.response.body as { body: string }).body).toBe(big);
    }
  });
});

describe('request log: its size', () => {
  it('keeps none at 0, and no more than its most', () => {
    const none = new RequestLog(0);
    none.add({
      id: 'req-1',
      method: 'GET',
      url: '/',
      status: 200,
      duration: 1,
      at: 1,
      credential_id: null,
      project_id: null,
      model: null,
      route: null,
      reqHeaders: {},
      reqBody: undefined,
      resHeaders: {},
      resBody: null,
    });
    expect(none.size).toBe(0);
    expect(none.recent()).toEqual([]);
    expect(() => new RequestLog(10 ** 9)).not.toThrow();
  });
});
