import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

describe.each(dialects())('core conventions (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(async () => s?.close());

  it('answers /healthz and publishes /openapi.json', async () => {
    expect((await s.req('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const doc = await s.req('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toContain('/ads/v1/ad_groups');
  });

  it('has no child logger per request: the logger is its own child (a request logs with its id itself)', async () => {
    expect(s.app.log.child({ reqId: 'req_x' })).toBe(s.app.log);
    // Any other child is one, with its bindings.
    const area = s.app.log.child({ area: 'ads' });
    expect(area).not.toBe(s.app.log);
    expect((area as unknown as { bindings(): object }).bindings()).toEqual({ area: 'ads' });
    expect((await s.req('GET', '/ads/v1/campaigns', { key: 'ads' })).status).toBe(200);
  });

  it('sets x-request-id on every response and answers unknown URLs with the error envelope', async () => {
    const r = await s.req('GET', '/v1/nope', { key: 'platform' });
    expect(r.status).toBe(404);
    expect(r.headers['x-request-id']).toMatch(/^req_/);
    expect(r.body.error).toMatchObject({ type: 'not_found_error', code: 'unknown_url' });
  });

  it('sets openai-processing-ms on every platform API reply, and only there', async () => {
    const ok = await s.req('GET', '/v1/models', { key: 'platform' });
    expect(ok.status).toBe(200);
    const unknownUrl = await s.req('GET', '/v1/nope', { key: 'platform' });
    const noKey = await s.req('GET', '/v1/nope', { key: null });
    const refused = await s.req('GET', '/v1/models', { key: 'sk-wrong' });
    expect([unknownUrl.status, noKey.status, refused.status]).toEqual([404, 401, 401]);
    for (const r of [ok, unknownUrl, noKey, refused]) expect(r.headers['openai-processing-ms']).toMatch(/^\d+$/);
    const ads = await s.req('GET', '/ads/v1/campaigns', { key: 'ads' });
    expect(ads.status).toBe(200);
    expect(ads.headers['openai-processing-ms']).toBeUndefined();
    expect((await s.req('GET', '/healthz')).headers['openai-processing-ms']).toBeUndefined();
  });
});
