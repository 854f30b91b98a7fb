import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../../test/helpers.js';

/** The `models` config section through the control plane, and the model endpoints. */
let s: TestStandin;
beforeAll(async () => {
  s = await startTestStandin();
});
afterAll(() => s?.close());

describe('models module', () => {
  it('applies a models section; refuses a bad one with a 400 naming the problem', async () => {
    const ok = await s.req('POST', '/admin/v1/config', {
      key: 'admin',
      body: { models: { 'local-*': { provider: 'upstream', base_url: 'http://127.0.0.1:11434/v1', list: ['local-llama'] } } },
    });
    expect(ok.status).toBe(200);
    const model = await s.req('GET', '/v1/models/local-llama', { key: 'platform' });
    expect(model.body).toEqual({ id: 'local-llama', object: 'model', created: 1700000000, owned_by: 'upstream' });
    const list = await s.req('GET', '/v1/models', { key: 'platform' });
    expect(list.body.data.map((m: any) => m.id)).toContain('local-llama');

    const missing = await s.req('POST', '/admin/v1/config', { key: 'admin', body: { models: { x: { provider: 'upstream' } } } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("an upstream needs 'base_url'");
    const unknown = await s.req('POST', '/admin/v1/config', { key: 'admin', body: { models: { x: { provider: 'magic' } } } });
    expect(unknown.status).toBe(400);
  });

  it('DELETE: a served model is not deletable (403), a name no provider serves is not found (404)', async () => {
    const served = await s.req('DELETE', '/v1/models/gpt-4o', { key: 'platform' });
    expect(served.status).toBe(403);
    expect(served.body.error.code).toBe('model_not_deletable');
    const unknown = await s.req('DELETE', `/v1/models/${'x'.repeat(300)}`, { key: 'platform' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('model_not_found');
    expect((await s.req('DELETE', '/v1/models/gpt-4o')).status).toBe(401);
  });

  it('needs a key; an empty name is no model', async () => {
    expect((await s.req('GET', '/v1/models')).status).toBe(401);
    const none = await s.req('GET', `/v1/models/${'x'.repeat(300)}`, { key: 'platform' });
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('model_not_found');
  });
});
