import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadFile } from '../../test/vector-stores/upload.js';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';

const line = (id: string, messages: unknown = [{ role: 'user', content: id }]) =>
  JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages } });

/** `/admin/v1/projects/{id}/batches`: a project's batches with counts, progress, timestamps and files. */
describe.each(dialects())('batches admin routes (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  const upload = (text: string) => uploadFile(s, 'in.jsonl', text, 'batch');
  const list = async (query = '') => (await s.req('GET', `/admin/v1/projects/proj_demo/batches${query}`, { key: 'admin' })).body;

  it('lists batches with progress from 0 to 1, their timestamps on the Standin clock and their files', async () => {
    const input = await upload(`${line('a')}\n${line('b')}\n${line('c', 'not a list')}\n`);
    const created = await s.req('POST', '/v1/batches', {
      key: 'platform',
      body: { input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await list()).data[0]).toMatchObject({ id: created.body.id, status: 'validating', progress: 0, input_file_id: input });

    await s.ctx.jobs.drain();
    const done = (await list()).data[0];
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 }, progress: 1 });
    expect(done.error_file_id).toMatch(/^file-/);
    const now = s.ctx.clock.nowSeconds();
    for (const at of ['created_at', 'in_progress_at', 'finalizing_at', 'completed_at']) expect(done[at]).toBeLessThanOrEqual(now);
    expect(done.output_file_id).toMatch(/^file-/);
    // The output is a file of the project, listed beside the input.
    const files = (await s.req('GET', '/admin/v1/projects/proj_demo/files?purpose=batch_output', { key: 'admin' })).body.data;
    expect(files.map((f: { id: string }) => f.id)).toContain(done.output_file_id);
  });

  it('pages with limit and after; 401 without the admin key, 400 for a bad limit', async () => {
    const input = await upload(`${line('x')}\n`);
    const body = { input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' };
    const one = await s.req('POST', '/v1/batches', { key: 'platform', body });
    const two = await s.req('POST', '/v1/batches', { key: 'platform', body });
    const first = await list('?limit=1');
    expect(first.data.map((b: { id: string }) => b.id)).toEqual([two.body.id]);
    expect(first.has_more).toBe(true);
    expect((await list(`?limit=1&after=${first.last_id}`)).data.map((b: { id: string }) => b.id)).toEqual([one.body.id]);
    expect((await s.req('GET', '/admin/v1/projects/proj_other/batches', { key: 'admin' })).body.data).toEqual([]);
    expect((await s.req('GET', '/admin/v1/projects/proj_demo/batches', { key: 'platform' })).status).toBe(401);
    expect((await s.req('GET', '/admin/v1/projects/proj_demo/batches?limit=0', { key: 'admin' })).status).toBe(400);
  });
});
