import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { uploadFile } from '../../test/vector-stores/upload.js';

/** `/admin/v1/projects/{id}/files…`: the dashboard's list of a project's files and their downloads. */
describe.each(dialects())('files admin routes (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  it("lists a project's files page by page and downloads one with its name", async () => {
    const a = await uploadFile(s, 'first.txt', 'one');
    const b = await uploadFile(s, 'Straße 2.txt', 'second file');
    const page = await s.req('GET', '/admin/v1/projects/proj_demo/files?limit=1', { key: 'admin' });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.data).toEqual([
      expect.objectContaining({ id: b, filename: 'Straße 2.txt', purpose: 'assistants', bytes: 11, status: 'processed' }),
    ]);
    expect(page.body.has_more).toBe(true);
    const next = await s.req('GET', `/admin/v1/projects/proj_demo/files?limit=1&after=${page.body.last_id}`, { key: 'admin' });
    expect(next.body.data.map((f: { id: string }) => f.id)).toEqual([a]);
    expect(next.body.data[0].created_at).toBeLessThanOrEqual(s.ctx.clock.nowSeconds());

    const content = await s.app.inject({
      method: 'GET',
      url: `/admin/v1/projects/proj_demo/files/${b}/content`,
      headers: { authorization: `Bearer ${s.keys.admin}` },
    });
    expect(content.statusCode).toBe(200);
    expect(content.body).toBe('second file');
    expect(content.headers['content-disposition']).toBe(`attachment; filename="Stra_e 2.txt"; filename*=UTF-8''Stra%C3%9Fe%202.txt`);
  });

  it('answers 404 for a file of another project, 401 without the admin key, 400 for a bad query', async () => {
    const id = await uploadFile(s, 'mine.txt', 'x');
    expect((await s.req('GET', `/admin/v1/projects/proj_other/files/${id}/content`, { key: 'admin' })).status).toBe(404);
    expect((await s.req('GET', '/admin/v1/projects/proj_other/files', { key: 'admin' })).body.data).toEqual([]);
    expect((await s.req('GET', '/admin/v1/projects/proj_demo/files', { key: 'platform' })).status).toBe(401);
    expect((await s.req('GET', `/admin/v1/projects/proj_demo/files/${id}/content`, { key: 'platform' })).status).toBe(401);
    expect((await s.req('GET', '/admin/v1/projects/proj_demo/files?color=red', { key: 'admin' })).status).toBe(400);
  });
});
