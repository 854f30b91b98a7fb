import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';

/** `/admin/v1/projects/{id}/responses` and `/conversations`: what the dashboard's Responses page reads. */
describe.each(dialects())('responses and conversations admin routes (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  const admin = (path: string) => s.req('GET', `/admin/v1/projects/proj_demo${path}`, { key: 'admin' });
  const create = async (body: Record<string, unknown>) => {
    const r = await s.req('POST', '/v1/responses', { key: 'platform', body: { model: 'gpt-4o-mini', ...body } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };

  it('lists stored responses newest first with status, model, usage and output types; pages and filters by status', async () => {
    const a = await create({ input: 'first' });
    const b = await create({
      input: 'second',
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
      tool_choice: 'required',
    });
    await create({ input: 'not kept', store: false });
    const bg = await create({ input: 'later', background: true });
    const page = await admin('/responses?limit=2');
    expect(page.status).toBe(200);
    expect(page.body.data.map((r: { id: string }) => r.id)).toEqual([bg.id, b.id]);
    expect(page.body).toMatchObject({ has_more: true, first_id: bg.id, last_id: b.id });
    expect(page.body.data[1]).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'gpt-4o-mini',
      output_types: ['function_call'],
    });
    expect(page.body.data[1].usage.total_tokens).toBeGreaterThan(0);
    expect(page.body.data[1]).not.toHaveProperty('output');
    const next = await admin(`/responses?limit=2&after=${b.id}`);
    expect(next.body.data.map((r: { id: string }) => r.id)).toEqual([a.id]);
    expect((await admin('/responses?status=queued')).body.data.map((r: { id: string }) => r.id)).toEqual([bg.id]);
    expect((await admin('/responses?limit=101')).status).toBe(400);
    expect((await admin('/responses?status=done')).status).toBe(400);
  });

  it('opens one response with its input items and the stream kept of a streamed background response', async () => {
    const r = await create({
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is in here' }] }],
      instructions: 'be brief',
    });
    const one = await admin(`/responses/${r.id}`);
    expect(one.body).toEqual(r);
    const items = await admin(`/responses/${r.id}/input_items?order=asc`);
    expect(items.body.data).toMatchObject([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'what is in here' }] }]);
    expect((await admin(`/responses/${r.id}/events`)).body).toEqual({ object: 'list', data: [], has_more: false });

    // The stream follows the job, which this Standin (no workers) runs when drained.
    const following = s.app.inject({
      method: 'POST',
      url: '/v1/responses',
      headers: { authorization: `Bearer ${s.keys.platform}`, 'content-type': 'application/json' },
      payload: { model: 'gpt-4o-mini', input: 'stream it', background: true, stream: true },
    });
    let settled = false;
    void following.finally(() => (settled = true));
    while (!settled) {
      await s.ctx.jobs.drain();
      await new Promise((r) => setTimeout(r, 20));
    }
    const streamed = await following;
    const id = /"id":"(resp_[^"]+)"/.exec(streamed.body)![1];
    const events = await admin(`/responses/${id}/events`);
    const types = events.body.data.map((e: { type: string }) => e.type);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(events.body.data.map((e: { sequence_number: number }) => e.sequence_number)).toEqual(types.map((_: string, i: number) => i));
    const tail = await admin(`/responses/${id}/events?after=2&limit=2`);
    expect(tail.body.data.map((e: { sequence_number: number }) => e.sequence_number)).toEqual([3, 4]);
    expect(tail.body.has_more).toBe(true);
    expect((await admin(`/responses/${id}/events?limit=501`)).status).toBe(400);
  });

  it('lists conversations and their items; paging bounded', async () => {
    const c = await s.req('POST', '/v1/conversations', {
      key: 'platform',
      body: { metadata: { topic: 'boats' }, items: [{ role: 'user', content: 'hello' }] },
    });
    await create({ input: 'and then?', conversation: c.body.id });
    const list = await admin('/conversations?limit=1');
    expect(list.body.data).toEqual([c.body]);
    const items = await admin(`/conversations/${c.body.id}/items?order=asc`);
    expect(items.body.data.map((i: { type: string; role?: string }) => `${i.type}:${i.role}`)).toEqual([
      'message:user',
      'message:user',
      'message:assistant',
    ]);
    expect((await admin('/conversations?limit=0')).status).toBe(400);
    expect((await admin(`/conversations/${c.body.id}/items?limit=101`)).status).toBe(400);
  });

  it("another project's objects are not found; an unknown project lists nothing; the platform key is refused", async () => {
    const r = await create({ input: 'mine' });
    const c = await s.req('POST', '/v1/conversations', { key: 'platform', body: {} });
    const other = (path: string) => s.req('GET', `/admin/v1/projects/proj_other${path}`, { key: 'admin' });
    expect((await other('/responses')).body.data).toEqual([]);
    expect((await other('/conversations')).body.data).toEqual([]);
    expect((await other(`/responses/${r.id}`)).status).toBe(404);
    expect((await other(`/responses/${r.id}/input_items`)).status).toBe(404);
    expect((await other(`/responses/${r.id}/events`)).status).toBe(404);
    expect((await other(`/conversations/${c.body.id}/items`)).status).toBe(404);
    expect((await s.req('GET', '/admin/v1/projects/proj_demo/responses', { key: 'platform' })).status).toBe(401);
    expect((await s.req('GET', `/admin/v1/projects/proj_demo/responses/${'r'.repeat(300)}`, { key: 'admin' })).status).toBe(400);
  });
});
