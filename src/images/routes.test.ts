import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';

/** `POST /v1/images/request_audit` with an API key (workload tokens: test/identity). */
describe.each(dialects())('image audit requests (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  it('records a request of the caller’s project and answers 201 with it', async () => {
    const res = await s.req('POST', '/v1/images/request_audit', {
      key: 'platform',
      body: { reason: 'a generation looked off', image_ids: ['img_1', 'img_2'] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      object: 'image.audit_request',
      status: 'received',
      reason: 'a generation looked off',
      image_ids: ['img_1', 'img_2'],
      project_id: 'proj_demo',
    });
    expect(res.body.id).toMatch(/^imgaudit_/);
    const rows = await s.ctx.store.db.selectFrom('image_audit_requests').selectAll().where('id', '=', res.body.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ organization_id: 'org_demo', project_id: 'proj_demo', image_ids: '["img_1","img_2"]' });
    const bare = await s.req('POST', '/v1/images/request_audit', { key: 'platform', body: { reason: 'no ids' } });
    expect(bare.body.image_ids).toEqual([]);
  });

  it('validates the body and needs a key', async () => {
    const missing = await s.req('POST', '/v1/images/request_audit', { key: 'platform', body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('reason');
    expect((await s.req('POST', '/v1/images/request_audit', { key: 'platform', body: { reason: '' } })).status).toBe(400);
    expect((await s.req('POST', '/v1/images/request_audit', { body: { reason: 'x' } })).status).toBe(401);
  });
});
