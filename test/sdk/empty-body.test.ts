import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteOptions } from 'fastify';
import type { Module } from '../../src/core/module.js';
import { modules } from '../../src/server/modules.js';
import { dialects, startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';
import { rawRequest, type RawReply } from './raw-http.js';

/**
 * Issue 24: a request whose body is empty is a request without a body, whatever its Content-Type, on
 * every route that may carry one. The routes come from the app itself (a module that listens to
 * onRoute), so a route added later is covered without touching this file.
 */

// Every content type some parser of the app handles, and one none does.
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'multipart/form-data; boundary=----standin',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'text/plain',
];
const FRAMINGS = {
  'Content-Length: 0': { header: 'Content-Length: 0', body: '' },
  'chunked, empty': { header: 'Transfer-Encoding: chunked', body: '0\r\n\r\n' },
  'no length': { header: '', body: '' },
};

interface Seen {
  method: string;
  url: string;
  required: string[] | undefined;
  bodyless: boolean;
}

function spy(seen: Seen[]): Module {
  return {
    name: 'route-spy',
    routes(app) {
      app.addHook('onRoute', (r: RouteOptions) => {
        const body = r.schema?.body as { required?: string[] } | undefined;
        for (const method of [r.method].flat())
          if (!['GET', 'HEAD', 'OPTIONS'].includes(method))
            seen.push({ method, url: r.url, required: body?.required, bodyless: body === undefined });
      });
    },
  };
}

const keyFor = (url: string) =>
  url.startsWith('/v1/')
    ? `Authorization: Bearer ${TEST_KEYS.platform}`
    : url.startsWith('/ads/')
      ? `Authorization: Bearer ${TEST_KEYS.ads}`
      : url.startsWith('/admin/')
        ? `Authorization: Bearer ${TEST_KEYS.admin}`
        : '';

// Ids that name nothing: the routes answer 404 or their body rule, not a path check.
const concrete = (url: string) => url.replace(/:(\w+)/g, (_, name: string) => `${name.replace(/_id$/, '')}_missing`);
// Routes that replace the whole store (a reset, a declarative config: about a second each) go last, as they
// clear the keys the other routes are called with, and meet the JSON variants only.
const WHOLE_STORE = ['/admin/v1/config', '/admin/v1/reset'];
const lastly = (r: Seen) => (WHOLE_STORE.includes(r.url) ? 1 : 0);
const outcome = (r: RawReply) => ({ status: r.status, error: r.status >= 400 ? JSON.parse(r.body || '{}').error?.code : undefined });

describe.each(dialects())('an empty body is no body (%s)', (dialect) => {
  let s: TestStandin;
  let base: string;
  const seen: Seen[] = [];
  beforeAll(async () => {
    s = await startTestStandin({ dialect, modules: [spy(seen), ...modules] });
    base = await s.listen();
    seen.sort((a, b) => lastly(a) - lastly(b));
  });
  afterAll(() => s?.close());

  it('finds the routes that may carry a body', () => {
    // The ones the issue names must be among them; the rest are whatever the app serves.
    const names = seen.map((r) => `${r.method} ${r.url}`);
    for (const route of [
      'DELETE /v1/files/:file_id',
      'POST /v1/threads/:thread_id/runs/:run_id/cancel',
      'POST /v1/batches/:batch_id/cancel',
    ])
      expect(names).toContain(route);
    expect(seen.length).toBeGreaterThan(50);
  });

  it('names the missing member of a required body, whatever the empty variant', async () => {
    const r = await rawRequest(
      base,
      [
        'POST /v1/chat/completions HTTP/1.1',
        'Host: localhost',
        keyFor('/v1/'),
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
      ].join('\r\n'),
      '0\r\n\r\n',
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error).toMatchObject({ code: 'missing_required_parameter', param: 'model' });
  });

  it('still reads a chunked body that is not empty', async () => {
    const json = JSON.stringify({ metadata: { via: 'chunked' } });
    const r = await rawRequest(
      base,
      ['POST /v1/threads HTTP/1.1', 'Host: localhost', keyFor('/v1/'), 'Content-Type: application/json', 'Transfer-Encoding: chunked'].join(
        '\r\n',
      ),
      `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`,
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ object: 'thread', metadata: { via: 'chunked' } });
  });

  // Last: the sweep replaces the store on its way (WHOLE_STORE).
  it('answers every empty variant as it answers no body at all, on every route', async () => {
    const differences: string[] = [];
    for (const route of seen) {
      const url = concrete(route.url);
      const head = (extra: string[]) =>
        [`${route.method} ${url} HTTP/1.1`, `Host: localhost`, keyFor(url), ...extra].filter(Boolean).join('\r\n');
      const reply = await rawRequest(base, head([]));
      const bare = outcome(reply);
      // No body at all is a valid call of a route that takes none or only optional members; a route
      // with required members answers 400 naming what is missing.
      if (route.required?.length && url.startsWith('/v1/')) {
        expect([route.url, bare.status]).toEqual([route.url, 400]);
        expect(JSON.parse(reply.body).error.message).toContain(`'${route.required[0]}'`);
      } else expect([route.url, bare.error]).not.toEqual([route.url, expect.stringMatching(/json|media_type|content/)]);
      const types = WHOLE_STORE.includes(route.url) ? CONTENT_TYPES.slice(0, 1) : CONTENT_TYPES;
      const variants = types.flatMap((type) => Object.entries(FRAMINGS).map(([framing, f]) => ({ type, framing, ...f })));
      const replies = await Promise.all(variants.map((v) => rawRequest(base, head([`Content-Type: ${v.type}`, v.header]), v.body)));
      replies.forEach((reply, i) => {
        const got = outcome(reply);
        if (got.status !== bare.status || got.error !== bare.error)
          differences.push(
            `${route.method} ${route.url} [${variants[i].type}, ${variants[i].framing}]: ${got.status} ${got.error} (no body: ${bare.status} ${bare.error})`,
          );
      });
    }
    expect(differences).toEqual([]);
  });
});
