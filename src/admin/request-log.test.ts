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

describe('the request log keeps copies in places written over', () => {
  const entry = (id: string, reqHeaders: Record<string, unknown>) => ({
    id,
    url: '/v1/chat/completions?x=1',
    model: 'gpt-4o',
    reqHeaders,
    reqBody: undefined,
    resHeaders: { 'content-type': 'application/json' },
    resBody: '{"ok":true}',
    method: 'GET',
    status: 200,
    duration: 150,
    at: 1_700_000_000,
    credential_id: 'key_1',
    project_id: 'proj_demo',
    route: '/v1/x',
  });

  it('holds nothing of the request it was given, and forgets the oldest when full', () => {
    const log = new RequestLog(2);
    const headers: Record<string, unknown> = { host: 'a', authorization: 'Bearer sk-test' };
    log.add(entry('req_1', headers));
    headers.host = 'changed';
    headers['x-later'] = '1';
    expect(log.get('req_1')?.request.headers).toEqual({ host: 'a', authorization: '[redacted]' });
    expect(log.get('req_1')).toMatchObject({ id: 'req_1', duration_ms: 1.5, path: '/v1/chat/completions?x=1', model: 'gpt-4o' });

    log.add(entry('req_2', {}));
    log.add(entry('req_3', {}));
    expect(log.size).toBe(2);
    expect(log.get('req_1')).toBeUndefined();
    expect(log.recent().map((r) => r.id)).toEqual(['req_3', 'req_2']);
    expect(log.query({ after: 'req_2' }).map((r) => r.id)).toEqual(['req_3']);
  });
});
