import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../../test/helpers.js';

describe('assistants admin routes: threads, runs, steps, stream events', () => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ settings: { workers: true } });
    await s.listen();
  });
  afterAll(async () => {
    await s?.close();
  });

  it("lists a project's threads, a thread's runs, a run's steps and its stream", async () => {
    const made = await s.req('POST', '/v1/threads/runs', {
      key: 'platform',
      headers: { 'openai-beta': 'assistants=v2' },
      body: { assistant_id: 'asst_demo', thread: { messages: [{ role: 'user', content: 'hello' }] } },
    });
    expect(made.status).toBe(200);
    const { thread_id: threadId, id: runId } = made.body;
    let run = made.body;
    for (let i = 0; i < 100 && !['completed', 'failed'].includes(run.status); i++) {
      await new Promise((r) => setTimeout(r, 50));
      run = (await s.req('GET', `/v1/threads/${threadId}/runs/${runId}`, { key: 'platform', headers: { 'openai-beta': 'assistants=v2' } }))
        .body;
    }
    expect(run.status).toBe('completed');

    const base = '/admin/v1/projects/proj_demo/threads';
    const threads = await s.req('GET', base, { key: 'admin' });
    expect(threads.status).toBe(200);
    expect(threads.body.data.map((t: { id: string }) => t.id)).toContain(threadId);
    const runs = await s.req('GET', `${base}/${threadId}/runs`, { key: 'admin' });
    expect(runs.body.data[0]).toMatchObject({ id: runId, status: 'completed' });
    // The project's recent runs, newest first, without naming the thread.
    await s.req('POST', '/v1/threads/runs', {
      key: 'platform',
      headers: { 'openai-beta': 'assistants=v2' },
      body: { assistant_id: 'asst_demo', thread: { messages: [{ role: 'user', content: 'a later run' }] } },
    });
    const recent = await s.req('GET', '/admin/v1/projects/proj_demo/runs?limit=2', { key: 'admin' });
    expect(recent.status).toBe(200);
    expect(recent.body.data).toHaveLength(2);
    expect(recent.body.data[1]).toMatchObject({ id: runId, thread_id: threadId, model: expect.any(String) });
    expect(recent.body.data[0].id > runId).toBe(true);
    expect((await s.req('GET', '/admin/v1/projects/proj_other/runs', { key: 'admin' })).body.data).toHaveLength(0);
    const steps = await s.req('GET', `${base}/${threadId}/runs/${runId}/steps`, { key: 'admin' });
    expect(steps.body.data[0].step_details.type).toBe('message_creation');
    const events = await s.req('GET', `${base}/${threadId}/runs/${runId}/events`, { key: 'admin' });
    const names = events.body.data.map((e: { event: string }) => e.event);
    expect(names).toContain('thread.run.created');
    expect(names).toContain('thread.run.completed');
    const later = await s.req('GET', `${base}/${threadId}/runs/${runId}/events?after=${events.body.data[0].seq}`, { key: 'admin' });
    expect(later.body.data).toHaveLength(events.body.data.length - 1);
  });

  it('answers 404 for a thread of another project, and 401 without the admin key', async () => {
    const thread = await s.req('POST', '/v1/threads', { key: 'platform', headers: { 'openai-beta': 'assistants=v2' }, body: {} });
    expect((await s.req('GET', `/admin/v1/projects/proj_other/threads/${thread.body.id}/runs`, { key: 'admin' })).status).toBe(404);
    expect((await s.req('GET', '/admin/v1/projects/proj_demo/threads', { key: 'platform' })).status).toBe(401);
    expect((await s.req('GET', '/admin/v1/projects/proj_demo/threads?limit=0', { key: 'admin' })).status).toBe(400);
  });
});
