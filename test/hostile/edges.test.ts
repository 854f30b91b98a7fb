import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { needs } from '../../src/core/auth.js';
import type { Module } from '../../src/core/module.js';
import { modules } from '../../src/server/modules.js';
import { countRows, dialects, startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';
import { until } from '../fleet/instances.js';

type Reply = { statusCode: number; json(): any; body: string };

/** The platform's envelope, and no framework code or wording in it. */
function envelope(r: Reply, status?: number) {
  if (status !== undefined) expect(r.statusCode, r.body).toBe(status);
  expect(r.statusCode, r.body).toBeGreaterThanOrEqual(400);
  expect(r.statusCode, r.body).toBeLessThan(500);
  const body = r.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(r.body).not.toMatch(/FST_|reach \w+ limit/);
  return body.error;
}

/** A raw multipart body: the parts as written (so a test can put a NUL or a duplicate where a client library would not). */
function rawForm(parts: string[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = 'edgeboundary';
  const body = parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('') + `--${boundary}--\r\n`;
  return {
    payload: Buffer.from(body, 'latin1'),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${TEST_KEYS.platform}` },
  };
}
const field = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`;
const file = (filename: string, data = 'hello') =>
  `Content-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${data}`;

describe.each(dialects())('the edges hold (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(async () => s?.close());

  const upload = (parts: string[]) => s.app.inject({ method: 'POST', url: '/v1/files', ...rawForm(parts) });

  it('refuses a NUL in an upload’s file name, field values and field names with a 400 naming the field', async () => {
    const before = await countRows(s, 'files');
    let e = envelope(await upload([field('purpose', 'assistants'), file('a\0b.txt')]), 400);
    expect(e).toMatchObject({ param: 'file', code: 'invalid_value' });
    expect(e.message).toMatch(/NUL/);
    e = envelope(await upload([file('a.txt'), field('purpose', 'assistants'), field('expires_after[anchor]', 'created_at\0')]), 400);
    expect(e.param).toBe('expires_after[anchor]');
    e = envelope(await upload([field('purp\0ose', 'assistants'), file('a.txt')]), 400);
    expect(e.message).toMatch(/NUL/);
    expect(await countRows(s, 'files')).toBe(before);
    // A clean name is kept as sent.
    const ok = await upload([field('purpose', 'assistants'), file('a b.txt')]);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().filename).toBe('a b.txt');
  });

  it('refuses NUL alike on both stores wherever client text reaches the store outside a JSON body', async () => {
    const form = (body: string) =>
      s.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: body,
      });
    // The token endpoint's form (RFC 6749 §5.2 shape there), a value and a name.
    for (const body of [
      'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=a%00b&subject_token_type=x',
      'grant_type=x&na%00me=1&na%00me=2',
      'grant_type=a%00b',
    ]) {
      const r = await form(body);
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json().error).toMatch(/^(invalid_request|unsupported_grant_type)$/);
    }
    // The app host's upload names its file in a percent-encoded header.
    const up = await s.app.inject({
      method: 'POST',
      url: '/apps/api/files',
      headers: {
        'content-type': 'application/octet-stream',
        'x-file-name': 'a%00b.txt',
        host: 'localhost',
        'x-admin-key': TEST_KEYS.admin,
      },
      payload: Buffer.from('hello'),
    });
    expect(envelope(up, 400).param).toBe('x-file-name');
    // Query strings and path parameters (the front door).
    expect(envelope(await s.app.inject({ method: 'GET', url: '/v1/files?purpose=a%00', headers: rawForm([]).headers }), 400).param).toBe(
      'purpose',
    );
    expect((await s.app.inject({ method: 'GET', url: '/v1/files/file-a%00b', headers: rawForm([]).headers })).statusCode).toBe(404);
  });

  it('refuses a field sent twice, naming it, whichever value comes last', async () => {
    for (const parts of [
      [field('purpose', 'assistants'), field('purpose', 'batch'), file('a.txt')],
      [file('a.txt'), field('purpose', 'assistants'), field('purpose', 'assistants')],
    ]) {
      const e = envelope(await upload(parts), 400);
      expect(e).toMatchObject({ param: 'purpose', code: 'duplicate_parameter' });
    }
  });

  it('answers every multipart limit in the envelope with Standin’s codes', async () => {
    // 10,000 fields: refused at the second `purpose` (a duplicate), never a framework code.
    let e = envelope(await upload(Array.from({ length: 10_000 }, () => field('purpose', 'assistants'))), 400);
    expect(e.code).toBe('duplicate_parameter');
    // Distinct unknown names past the fields limit.
    e = envelope(await upload(Array.from({ length: 20 }, (_, i) => field(`f${i}`, 'x'))), 400);
    expect(e.code).toMatch(/unknown_parameter|too_many_fields/);
    // More parts than the limit, each of them a field the route knows: the parts (or fields) limit.
    const many = Array.from({ length: 12 }, (_, i) => field(i % 2 ? 'expires_after[seconds]' : 'expires_after[anchor]', 'x'));
    e = envelope(await upload(many), 400);
    expect(e.code).toMatch(/duplicate_parameter|too_many_fields|too_many_parts/);
    // Three files.
    e = envelope(await upload([file('a.txt'), file('b.txt'), file('c.txt'), field('purpose', 'assistants')]), 400);
    expect(e.param).toBe('file');
    // A field value over the field size: refused, not silently cut.
    e = envelope(await upload([field('purpose', 'a'.repeat(5000)), file('a.txt')]), 400);
    expect(e).toMatchObject({ param: 'purpose', code: 'string_too_long' });
    // A field name over busboy's name size.
    e = envelope(await upload([field('p'.repeat(300), 'x'), file('a.txt')]), 400);
    expect(e.code).toBe('unknown_parameter');
    // A body cut short, and one without a boundary.
    const cut = rawForm([field('purpose', 'assistants')]);
    e = envelope(await s.app.inject({ method: 'POST', url: '/v1/files', headers: cut.headers, payload: cut.payload.subarray(0, 40) }), 400);
    expect(e.code).toBe('invalid_multipart');
    e = envelope(
      await s.app.inject({
        method: 'POST',
        url: '/v1/files',
        headers: { ...cut.headers, 'content-type': 'multipart/form-data' },
        payload: cut.payload,
      }),
      400,
    );
    expect(e.code).toBe('invalid_multipart');
  });
});

/** Every code Fastify 5 and @fastify/multipart raise on a request with a client status (their errors.js / index.js). */
const FRAMEWORK_CODES = [
  'FST_ERR_NOT_FOUND',
  'FST_ERR_CTP_BODY_TOO_LARGE',
  'FST_ERR_CTP_INVALID_MEDIA_TYPE',
  'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
  'FST_ERR_CTP_EMPTY_JSON_BODY',
  'FST_ERR_CTP_INVALID_JSON_BODY',
  'FST_ERR_CTP_INVALID_TYPE',
  'FST_ERR_BAD_URL',
  'FST_ERR_MAX_PARAM_LENGTH',
  'FST_ERR_INVALID_URL',
  'FST_ERR_HANDLER_TIMEOUT',
  'FST_ERR_ROUTE_MISSING_CONTENT_TYPE',
  'FST_ERR_ROUTE_MISSING_CONTENT',
  'FST_PARTS_LIMIT',
  'FST_FILES_LIMIT',
  'FST_FIELDS_LIMIT',
  'FST_REQ_FILE_TOO_LARGE',
  'FST_PROTO_VIOLATION',
  'FST_INVALID_MULTIPART_CONTENT_TYPE',
  'FST_INVALID_JSON_FIELD_ERROR',
  'FST_MP_PREMATURE_CLOSE',
];

describe('framework codes never reach a client', () => {
  let s: TestStandin;
  // Each code, thrown where a handler's failure would surface, through the real error handler.
  const raising: Module = {
    name: 'edges-raising',
    routes(app) {
      app.get('/v1/__edges/:code', { config: needs('models', 'read') }, async (req) => {
        const code = (req.params as { code: string }).code;
        throw Object.assign(new Error('framework wording'), { code, statusCode: 400 });
      });
    },
  };
  beforeAll(async () => {
    s = await startTestStandin({ modules: [...modules, raising] });
  });
  afterAll(async () => s?.close());

  it('maps every code Fastify and @fastify/multipart raise on a request', async () => {
    for (const code of [...FRAMEWORK_CODES, 'FST_SOMETHING_NEW']) {
      const r = await s.app.inject({
        method: 'GET',
        url: `/v1/__edges/${code}`,
        headers: { authorization: `Bearer ${TEST_KEYS.platform}` },
      });
      // The JSON parser's own description of the fault (a position) is kept; every other wording is Standin's.
      if (!code.includes('JSON_BODY')) expect(r.body).not.toContain('framework wording');
      if (code === 'FST_ERR_HANDLER_TIMEOUT') {
        expect(r.statusCode).toBe(503);
        expect(r.json().error.code).toBe('timeout');
        continue;
      }
      expect(envelope(r).code, code).not.toMatch(/^FST_/);
    }
  });
});

/** Sends `head` and the start of a body, then nothing; resolves once the server closes the connection. */
function stall(url: string, head: string, bodyStart: string): Promise<{ closedAfterMs: number; reply: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(Number(port), hostname, () => socket.write(head + bodyStart));
    let reply = '';
    socket.on('data', (d) => (reply += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ closedAfterMs: performance.now() - started, reply }));
    setTimeout(() => reject(new Error('the server kept a silent upload open for 20 s')), 20_000).unref();
  });
}

const partFiles = (dir: string) => {
  try {
    return readdirSync(join(dir, 'files')).filter((f) => f.endsWith('.part'));
  } catch {
    return [];
  }
};

describe.each(dialects())('uploads time out (%s)', (dialect) => {
  let s: TestStandin;
  let url: string;
  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { bodyIdleTimeoutMs: 1000, bodyTimeoutMs: 4000 } });
    url = await s.listen();
  });
  afterAll(async () => s?.close());

  const uploadHead = (length: number) =>
    `POST /v1/files HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TEST_KEYS.platform}\r\n` +
    `Content-Type: multipart/form-data; boundary=edgeboundary\r\nContent-Length: ${length}\r\n\r\n`;
  const filePart = `--edgeboundary\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;

  it('closes an upload that goes silent, and keeps nothing of it', async () => {
    const files = await countRows(s, 'files');
    const { closedAfterMs } = await stall(url, uploadHead(100_000_000), filePart + 'x'.repeat(200_000));
    expect(closedAfterMs).toBeLessThan(15_000);
    // The refused upload's bytes are removed once its stream fails (a moment after the close).
    await until(
      async () => partFiles(s.ctx.settings.data).length === 0 && (dialect === 'sqlite' || (await countRows(s, 'file_parts')) === 0),
      10_000,
    );
    expect(await countRows(s, 'files')).toBe(files);
  });

  it('closes an upload that trickles past the total bound', async () => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    let reply = '';
    socket.on('data', (d) => (reply += d.toString()));
    const files = await countRows(s, 'files');
    socket.write(uploadHead(100_000_000) + filePart);
    // A byte every 100 ms never trips the idle bound (1 s); the total bound (4 s) cuts it.
    const drip = setInterval(() => socket.writable && socket.write('y'), 100);
    const started = performance.now();
    await new Promise((resolve) => socket.on('close', resolve));
    clearInterval(drip);
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(reply).toBe('');
    await until(
      async () => partFiles(s.ctx.settings.data).length === 0 && (dialect === 'sqlite' || (await countRows(s, 'file_parts')) === 0),
      10_000,
    );
    expect(await countRows(s, 'files')).toBe(files);
  });

  it('answers what Node refuses before routing (a bad request line, huge headers) in the envelope', async () => {
    const { reply } = await stall(url, 'GARBAGE\r\n\r\n', '');
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)).error.code).toBe('invalid_request');
    const big = await stall(url, `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, '');
    expect(big.reply).toMatch(/^HTTP\/1\.1 431 /);
    expect(big.reply).toContain('"code":"headers_too_large"');
  });

  it('closes a JSON body that goes silent too', async () => {
    const head = `POST /v1/assistants HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TEST_KEYS.platform}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n`;
    const { closedAfterMs } = await stall(url, head, '{"model":');
    expect(closedAfterMs).toBeLessThan(15_000);
  });
});

describe.each(dialects())('the request log masks secrets by their shape (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(async () => s?.close());

  const detailOf = async (path: string) => {
    const row = (await s.req('GET', `/admin/v1/requests?path=${encodeURIComponent(path)}&limit=1`, { key: 'admin' })).body.data[0];
    return (await s.req('GET', `/admin/v1/requests/${row.id}`, { key: 'admin' })).body;
  };

  it('inside chat messages, URLs, other headers and replies (a created key shown once)', async () => {
    const apiKey = 'sk-proj-Zq8xLeakedKeyInAChatMessage0001';
    const webhookSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const chat = await s.req('POST', '/v1/chat/completions?trace=sk-proj-InAQueryStringToo000001', {
      key: 'platform',
      headers: { 'x-debug': `Bearer ${apiKey}` },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `my key is ${apiKey} and my secret ${webhookSecret}, thanks` }] },
    });
    expect(chat.status).toBe(200);
    const detail = await detailOf('/v1/chat/completions');
    const text = JSON.stringify(detail);
    for (const secret of [apiKey, webhookSecret, 'sk-proj-InAQueryStringToo000001', TEST_KEYS.platform]) expect(text).not.toContain(secret);
    expect(detail.request.body.messages[0].content).toBe('my key is [redacted] and my secret [redacted], thanks');
    expect(detail.request.headers['x-debug']).toBe('Bearer [redacted]');

    const made = await s.req('POST', '/admin/v1/projects/proj_demo/api_keys', { key: 'admin', body: { name: 'shown once' } });
    expect(made.status).toBe(201);
    const value = made.body.value as string;
    expect(value).toMatch(/^sk-proj-/);
    expect(JSON.stringify(await detailOf('/api_keys'))).not.toContain(value);
  });

  it('the admin key in force, whatever its form', async () => {
    s.ctx.auth.setAdminKey('correct-horse-battery-staple-admin');
    try {
      await s.req('POST', '/v1/assistants', { key: 'platform', body: { model: 'gpt-4o', name: 'correct-horse-battery-staple-admin' } });
      const detail = await s.req('GET', `/admin/v1/requests?path=/v1/assistants&limit=1`, { key: 'correct-horse-battery-staple-admin' });
      const one = await s.req('GET', `/admin/v1/requests/${detail.body.data[0].id}`, { key: 'correct-horse-battery-staple-admin' });
      expect(one.body.request.body.name).toBe('[redacted]');
    } finally {
      s.ctx.auth.setAdminKey(TEST_KEYS.admin);
    }
  });
});

describe.each(dialects())('rate limits count requests refused as invalid (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    // The in-process counters: a shared Redis keeps other runs' counts of the demo organization for a minute.
    s = await startTestStandin({ dialect });
    // Every model: 5 requests a minute, so the model routes reach their limit in a few requests.
    await applyConfig(s.ctx, modules, {
      rate_limits: { replace_defaults: true, ramp: { enabled: false }, models: { '*': { tiers: { tier_1: { rpm: 5, tpm: 1_000_000 } } } } },
    });
  });
  afterAll(async () => s?.close());

  const post = (url: string, payload: string, method = 'POST') =>
    s.app.inject({
      method: method as 'POST',
      url,
      payload,
      headers: { authorization: `Bearer ${TEST_KEYS.platform}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
    });
  /** Sends `send` until the first 429; the statuses before it. */
  const untilLimited = async (send: () => Promise<Reply>, most: number) => {
    const before: number[] = [];
    for (let i = 0; i < most; i++) {
      const r = await send();
      if (r.statusCode === 429) {
        const e = envelope(r, 429);
        expect(e.type).toBe('rate_limit_error');
        return before;
      }
      before.push(r.statusCode);
    }
    throw new Error(`no 429 in ${most} requests: ${[...new Set(before)].join(', ')}`);
  };

  it('rule 5: 300 invalid writes to a vector store’s files and file batches, then 429, on every route of the class', async () => {
    const store = async () => (await s.req('POST', '/v1/vector_stores', { key: 'platform', body: { name: 'edges' } })).body.id as string;
    const routes: [string, (id: string) => string, string][] = [
      ['POST', (id) => `/v1/vector_stores/${id}/file_batches`, '{"file_ids":[]}'],
      ['POST', (id) => `/v1/vector_stores/${id}/files`, '{"file_id":5}'],
      ['POST', (id) => `/v1/vector_stores/${id}/files/file-nope`, '{"attributes":"x"}'],
      ['DELETE', (id) => `/v1/vector_stores/${id}/files/file-nope`, ''],
      ['POST', (id) => `/v1/vector_stores/${id}/file_batches/vsfb_nope/cancel`, '{"extra":1}'],
      // A body that is not even JSON counts too: the window is taken before the body is read.
      ['POST', (id) => `/v1/vector_stores/${id}/file_batches`, '{"file_ids":'],
    ];
    for (const [method, url, body] of routes) {
      const id = await store();
      // The window refills one request per 200 ms while the test sends, so a few more may pass than 300.
      const before = await untilLimited(() => post(url(id), body, method), 600);
      expect(before.length, url(id)).toBeGreaterThanOrEqual(300);
      expect(
        before.every((st) => st >= 400 && st < 500 && st !== 429),
        url(id),
      ).toBe(true);
    }
  });

  it('model routes: a bad request counts against the model it names (or the default, naming none), then 429', async () => {
    const routes: [string, string][] = [
      ['/v1/chat/completions', '{"model":"edge-chat","messages":"not a list"}'],
      ['/v1/responses', '{"model":"edge-responses","input":5}'],
      ['/v1/embeddings', '{"model":"edge-embeddings","input":[]}'],
      ['/v1/threads/runs', '{"model":"edge-runs","assistant_id":5}'],
      ['/v1/threads/thread_nope/runs', '{"model":"edge-thread-runs","assistant_id":5}'],
      ['/v1/chat/completions', '{"messages":'],
    ];
    for (const [url, body] of routes) {
      const before = await untilLimited(() => post(url, body), 20);
      expect(before.length, url).toBe(5);
      expect(
        before.every((st) => st >= 400 && st < 500),
        url,
      ).toBe(true);
    }
    // A valid request for a model whose window the bad ones spent is refused as well.
    const valid = await s.req('POST', '/v1/chat/completions', {
      key: 'platform',
      body: { model: 'edge-chat', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(valid.status).toBe(429);
  });
});
