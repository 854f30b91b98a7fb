import { describe, expect, it } from 'vitest';
import { DetailBytes, type RequestDetail } from './request-detail.js';

const detail = (over: Partial<RequestDetail> = {}): RequestDetail => ({
  id: 'req_0123456789abcdef00000001',
  url: '/v1/chat/completions?x=1',
  model: 'gpt-4o',
  reqHeaders: { host: '127.0.0.1:8080', authorization: 'Bearer sk-test', 'content-length': '27' },
  reqBody: '{"model":"gpt-4o","n":1}',
  resHeaders: { 'content-type': 'application/json', 'content-length': 12, 'set-cookie': ['a=1', 'b=2'] },
  resBody: '{"ok":true}',
  ...over,
});

describe('a request log place as bytes', () => {
  it('reads back what was written: id, URL, model, headers as texts (a list joined), bodies as text', () => {
    const d = new DetailBytes();
    d.write(detail());
    expect(d.head()).toEqual({ id: 'req_0123456789abcdef00000001', url: '/v1/chat/completions?x=1', model: 'gpt-4o' });
    expect(d.read()).toEqual({
      reqHeaders: { host: '127.0.0.1:8080', authorization: 'Bearer sk-test', 'content-length': '27' },
      reqBody: '{"model":"gpt-4o","n":1}',
      resHeaders: { 'content-type': 'application/json', 'content-length': '12', 'set-cookie': 'a=1, b=2' },
      resBody: '{"ok":true}',
    });
    expect(d.replyHeader('content-length')).toBe('12');
    expect(d.replyHeader('host')).toBeUndefined();
  });

  it('keeps absent parts absent, a parsed body as JSON, and any text whole (non-ASCII, surrogate pairs)', () => {
    const d = new DetailBytes();
    d.write(detail({ model: null, reqBody: undefined, resBody: null, reqHeaders: {}, resHeaders: { skipped: undefined } }));
    expect(d.head().model).toBeNull();
    expect(d.read()).toEqual({ reqHeaders: {}, reqBody: undefined, resHeaders: {}, resBody: null });

    const text = 'Grüße, 東京, 🚀 and \u0000';
    d.write(detail({ url: `/v1/x?q=${text}`, reqBody: { text }, resBody: text, reqHeaders: { 'x-latin1': 'caf\u00e9' } }));
    expect(d.head().url).toBe(`/v1/x?q=${text}`);
    expect(d.read()).toMatchObject({ reqBody: JSON.stringify({ text }), resBody: text, reqHeaders: { 'x-latin1': 'caf\u00e9' } });
  });

  it('grows for a large request and is written over whole by the next one', () => {
    const d = new DetailBytes();
    const big = 'x'.repeat(8192);
    d.write(detail({ reqBody: big, resBody: big, reqHeaders: { cookie: 'c'.repeat(16_000) } }));
    expect(d.read()).toMatchObject({ reqBody: big, resBody: big });
    d.write(detail());
    expect(d.read()).toEqual(
      expect.objectContaining({
        reqBody: '{"model":"gpt-4o","n":1}',
        reqHeaders: expect.not.objectContaining({ cookie: expect.anything() }),
      }),
    );
  });

  it('holds a character that falls across the end of its buffer, a lone surrogate, and thousands of headers', () => {
    const d = new DetailBytes();
    // Each record's texts come to about 2,048 bytes, a character of 2, 3 or 4 bytes at the end.
    for (const last of ['é', '東', '🚀']) {
      for (let pad = 1780; pad < 1880; pad++) {
        const resBody = 'x'.repeat(pad) + last;
        d.write(detail({ resBody }));
        expect(d.read().resBody).toBe(resBody);
      }
    }
    d.write(detail({ resBody: 'a\ud800b', url: '/v1/x?q=\udc00' }));
    expect(d.read().resBody).toBe('a\ufffdb');
    expect(d.head()).toMatchObject({ url: '/v1/x?q=\ufffd', model: 'gpt-4o' });

    const many = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`x-h${i}`, `v${i}`]));
    d.write(detail({ reqHeaders: many }));
    expect(d.read().reqHeaders).toEqual(many);
    expect(d.replyHeader('content-length')).toBe('12');
    d.write(detail());
    expect(d.read().reqHeaders).toEqual({ host: '127.0.0.1:8080', authorization: 'Bearer sk-test', 'content-length': '27' });
    expect(d.replyHeader('content-type')).toBe('application/json');
  });

  it('tells its request by id without confusing a prefix, a longer id or a non-ASCII one', () => {
    const d = new DetailBytes();
    d.write(detail({ id: 'req_1' }));
    expect(d.isRequest('req_1')).toBe(true);
    expect(d.isRequest('req_')).toBe(false);
    expect(d.isRequest('req_12')).toBe(false);
    expect(d.isRequest('req_2')).toBe(false);
    d.write(detail({ id: 'req_é' }));
    expect(d.isRequest('req_é')).toBe(true);
    expect(d.isRequest('req_Ã©')).toBe(false);
  });
});
