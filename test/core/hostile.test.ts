import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

/**
 * Input no client should send reaches every route the same way: the JSON parser, the front door and the
 * router refuse it in the envelope, on both stores alike (hardening: nesting, NUL, bad URLs, leniencies).
 */
describe.each(dialects())('hostile input answers in the envelope (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(async () => s?.close());

  const raw = (method: string, url: string, payload?: string, headers: Record<string, string> = {}, key = s.keys.platform) =>
    s.app.inject({
      method: method as 'POST',
      url,
      payload,
      headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
    });
  const envelope = (r: { statusCode: number; json(): any }) => {
    expect(r.statusCode).toBeGreaterThanOrEqual(400);
    expect(r.statusCode).toBeLessThan(500);
    const body = r.json();
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    return body.error;
  };

  it('refuses JSON nested deeper than 64 levels, wherever it nests', async () => {
    const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    for (const [url, body] of [
      ['/v1/assistants', `{"model":"gpt-4o","response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${deep(4500)}}}}`],
      ['/v1/assistants', `{"model":"gpt-4o","tools":[{"type":"function","function":{"name":"f","parameters":${deep(4500)}}}]}`],
      ['/v1/responses', `{"model":"gpt-4o","input":"hi","text":{"format":{"type":"json_schema","name":"x","schema":${deep(4500)}}}}`],
    ] as const) {
      const e = envelope(await raw('POST', url, body));
      expect(e.code).toBe('nesting_too_deep');
    }
    const ads = await raw(
      'POST',
      '/ads/v1/ad_groups',
      `{"campaign_id":"cmp_demo_clicks","name":${'['.repeat(100)}${']'.repeat(100)}}`,
      {},
      s.keys.ads,
    );
    expect(envelope(ads).code).toBe('nesting_too_deep');
  });

  it('refuses NUL in body strings and keys with a 400 naming the field, on both stores', async () => {
    const e = envelope(
      await raw(
        'POST',
        '/ads/v1/ad_groups',
        JSON.stringify({ campaign_id: 'cmp_demo_clicks', name: 'a\u0000b', status: 'active' }),
        {},
        s.keys.ads,
      ),
    );
    expect(e).toMatchObject({ type: 'invalid_request_error', param: 'name' });
    const k = envelope(await raw('POST', '/v1/threads', JSON.stringify({ metadata: { 'k\u0000': 'v' } })));
    expect(k.param).toBe('metadata');
    const t = envelope(await raw('POST', '/v1/threads', JSON.stringify({ messages: [{ role: 'user', content: 'x\u0000' }] })));
    expect(t.param).toBe('messages[0].content');
  });

  it('answers a NUL in a path id with 404 and in a query parameter with 400, after authentication', async () => {
    expect(envelope(await raw('GET', '/ads/v1/ad_groups/adgrp_%00', undefined, {}, s.keys.ads)).type).toBe('not_found_error');
    expect(envelope(await raw('GET', '/v1/threads/thread_%00x')).type).toBe('not_found_error');
    expect(envelope(await raw('GET', '/ads/v1/ad_groups?campaign_id=cmp_%00', undefined, {}, s.keys.ads)).param).toBe('campaign_id');
    expect(envelope(await raw('GET', '/v1/assistants?after=asst_%00')).param).toBe('after');
    expect(envelope(await raw('GET', '/v1/threads/thread_%00x', undefined, {}, 'sk-proj-wrong')).type).toBe('authentication_error');
  });

  it('answers bad percent-encoding and over-long ids in the envelope, after authentication', async () => {
    expect(envelope(await raw('GET', '/v1/threads/%zz')).code).toBe('invalid_url');
    expect(envelope(await raw('GET', `/v1/threads/thread_${'x'.repeat(600)}`)).code).toBe('invalid_url');
    expect(envelope(await raw('GET', `/ads/v1/ad_groups/${'x'.repeat(600)}`, undefined, {}, s.keys.ads)).code).toBe('invalid_url');
    expect(envelope(await raw('GET', '/v1/threads/%zz', undefined, {}, 'sk-proj-wrong')).type).toBe('authentication_error');
    const admin = await raw('GET', '/admin/v1/%zz', undefined, {}, s.keys.admin);
    expect(envelope(admin).code).toBe('invalid_url');
  });

  it('refuses what it does not understand: a UTF-16 charset, hex numbers in the query, bodies on action endpoints', async () => {
    const utf16 = await raw('POST', '/v1/threads', '{}', { 'content-type': 'application/json; charset=utf-16' });
    expect(utf16.statusCode).toBe(415);
    expect(envelope(await raw('GET', '/v1/assistants?limit=0x10')).param).toBe('limit');
    expect(envelope(await raw('GET', '/v1/assistants?limit=1e1')).param).toBe('limit');
    expect((await raw('GET', '/v1/assistants?limit=10')).statusCode).toBe(200);
    const thread = (await raw('POST', '/v1/threads', '{}')).json();
    const bad = envelope(await raw('DELETE', `/v1/threads/${thread.id}`, '{"foo":1}'));
    expect(bad).toMatchObject({ code: 'unknown_parameter', param: 'foo' });
    expect((await raw('DELETE', `/v1/threads/${thread.id}`)).statusCode).toBe(200);
    expect(envelope(await raw('POST', '/admin/v1/reset', '{"foo":1}', {}, s.keys.admin)).param).toBe('foo');
  });

  it('accepts a UTF-8 BOM and an explicit utf-8 charset (RFC 8259 §8.1)', async () => {
    const bom = await raw('POST', '/v1/threads', '\ufeff{"metadata":{"a":"b"}}');
    expect(bom.statusCode).toBe(200);
    const utf8 = await raw('POST', '/v1/threads', '{}', { 'content-type': 'application/json; charset=UTF-8' });
    expect(utf8.statusCode).toBe(200);
  });
});
