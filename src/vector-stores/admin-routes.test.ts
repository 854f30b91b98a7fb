import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { uploadFile } from '../../test/vector-stores/upload.js';

/** `/admin/v1/projects/{id}/vector_stores…`: a project's stores with their counts, and each store's files with their errors. */
describe.each(dialects())('vector stores admin routes (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  it('shows a store ingesting, then its counts, usage and the failed file with its error', async () => {
    const good = await uploadFile(s, 'notes.txt', 'Plain notes about the harbour.');
    const bad = await uploadFile(s, 'photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const created = await s.req('POST', '/v1/vector_stores', { key: 'platform', body: { name: 'docs', file_ids: [good, bad] } });
    expect(created.status).toBe(200);
    const list = async () => (await s.req('GET', '/admin/v1/projects/proj_demo/vector_stores', { key: 'admin' })).body;
    expect((await list()).data[0]).toMatchObject({ id: created.body.id, status: 'in_progress', file_counts: { in_progress: 2, total: 2 } });

    await s.ctx.jobs.drain(60_000);
    const done = (await list()).data[0];
    expect(done).toMatchObject({ status: 'completed', file_counts: { completed: 1, failed: 1, in_progress: 0, cancelled: 0, total: 2 } });
    expect(done.usage_bytes).toBeGreaterThan(0);
    expect(done.last_active_at).toBe(created.body.created_at);

    const files = await s.req('GET', `/admin/v1/projects/proj_demo/vector_stores/${created.body.id}/files`, { key: 'admin' });
    const byId = new Map(files.body.data.map((f: { id: string }) => [f.id, f]));
    expect(byId.get(good)).toMatchObject({ status: 'completed', last_error: null });
    expect(byId.get(bad)).toMatchObject({ status: 'failed', last_error: { code: 'unsupported_file' } });
    const failed = await s.req('GET', `/admin/v1/projects/proj_demo/vector_stores/${created.body.id}/files?filter=failed&limit=1`, {
      key: 'admin',
    });
    expect(failed.body.data.map((f: { id: string }) => f.id)).toEqual([bad]);
  });

  it('answers 404 for a store of another project, 401 without the admin key, 400 for a bad filter', async () => {
    const created = await s.req('POST', '/v1/vector_stores', { key: 'platform', body: { name: 'empty' } });
    expect((await s.req('GET', `/admin/v1/projects/proj_other/vector_stores/${created.body.id}/files`, { key: 'admin' })).status).toBe(404);
    expect((await s.req('GET', '/admin/v1/projects/proj_demo/vector_stores', { key: 'platform' })).status).toBe(401);
    const base = `/admin/v1/projects/proj_demo/vector_stores/${created.body.id}/files`;
    expect((await s.req('GET', `${base}?filter=broken`, { key: 'admin' })).status).toBe(400);
  });
});
