import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';

describe.each(dialects())('conversations (%s)', (dialect) => {
  let s: TestStandin;
  const other = 'sk-proj-other-conversations-key-0000';
  const req = (method: string, url: string, body?: unknown, key = 'platform') => s.req(method, url, { key, body });
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    const project = await s.req('POST', '/admin/v1/organizations/org_demo/projects', { key: 'admin', body: { name: 'other-conv' } });
    await s.req('POST', `/admin/v1/projects/${project.body.id}/api_keys`, { key: 'admin', body: { name: 'k', value: other } });
  });
  afterAll(() => s?.close());

  it('creates, retrieves, updates and deletes a conversation; another project sees none of it', async () => {
    const c = await req('POST', '/v1/conversations', {
      metadata: { topic: 'demo' },
      items: [{ type: 'message', role: 'user', content: 'Hello!' }],
    });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body).toEqual({
      id: expect.stringMatching(/^conv_/),
      object: 'conversation',
      metadata: { topic: 'demo' },
      created_at: expect.any(Number),
    });
    expect((await req('GET', `/v1/conversations/${c.body.id}`)).body).toEqual(c.body);
    const updated = await req('POST', `/v1/conversations/${c.body.id}`, { metadata: { topic: 'other' } });
    expect(updated.body.metadata).toEqual({ topic: 'other' });
    expect((await req('GET', `/v1/conversations/${c.body.id}`, undefined, other)).status).toBe(404);
    expect((await req('GET', `/v1/conversations/${c.body.id}/items`, undefined, other)).status).toBe(404);
    expect((await req('POST', `/v1/conversations/${c.body.id}`, { metadata: {} }, other)).status).toBe(404);
    expect((await req('DELETE', `/v1/conversations/${c.body.id}`, undefined, other)).status).toBe(404);
    expect((await req('POST', '/v1/conversations', { items: [], extra: 1 })).status).toBe(400);
    const tooMany = await req('POST', '/v1/conversations', { items: Array.from({ length: 21 }, () => ({ role: 'user', content: 'x' })) });
    expect(tooMany.body.error).toMatchObject({ param: 'items', code: 'array_too_long' });
    expect(await req('DELETE', `/v1/conversations/${c.body.id}`)).toMatchObject({
      status: 200,
      body: { id: c.body.id, object: 'conversation.deleted', deleted: true },
    });
    expect((await req('GET', `/v1/conversations/${c.body.id}`)).status).toBe(404);
  });

  it('adds, lists (paged), retrieves and deletes items', async () => {
    const c = (await req('POST', '/v1/conversations', {})).body;
    const added = await req('POST', `/v1/conversations/${c.id}/items`, {
      items: Array.from({ length: 5 }, (_, i) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `m${i}` }] })),
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body).toMatchObject({ object: 'list', has_more: false, first_id: added.body.data[0].id, last_id: added.body.data[4].id });
    const page = await req('GET', `/v1/conversations/${c.id}/items?limit=2`);
    expect(page.body.data.map((i: any) => i.content[0].text)).toEqual(['m4', 'm3']);
    expect(page.body.has_more).toBe(true);
    const rest = await req('GET', `/v1/conversations/${c.id}/items?limit=10&after=${page.body.last_id}`);
    expect(rest.body.data.map((i: any) => i.content[0].text)).toEqual(['m2', 'm1', 'm0']);
    expect(rest.body.has_more).toBe(false);
    const asc = await req('GET', `/v1/conversations/${c.id}/items?order=asc`);
    expect(asc.body.data.map((i: any) => i.content[0].text)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    const item = added.body.data[2];
    expect((await req('GET', `/v1/conversations/${c.id}/items/${item.id}`)).body).toEqual(item);
    const deleted = await req('DELETE', `/v1/conversations/${c.id}/items/${item.id}`);
    expect(deleted.body).toMatchObject({ id: c.id, object: 'conversation' });
    expect((await req('GET', `/v1/conversations/${c.id}/items/${item.id}`)).status).toBe(404);
    expect((await req('GET', `/v1/conversations/${c.id}/items?after=msg_nothing`)).status).toBe(400);
  });

  it('gives a response the conversation as context and appends its input and output', async () => {
    const c = (await req('POST', '/v1/conversations', { items: [{ role: 'user', content: 'my name is Ada' }] })).body;
    const r = await req('POST', '/v1/responses', { model: 'gpt-4o-mini', input: 'what is my name?', conversation: c.id });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.conversation).toEqual({ id: c.id });
    const items = (await req('GET', `/v1/conversations/${c.id}/items?order=asc`)).body.data;
    expect(items.map((i: any) => [i.role, i.type])).toEqual([
      ['user', 'message'],
      ['user', 'message'],
      ['assistant', 'message'],
    ]);
    expect(items[2]).toEqual(r.body.output[0]);
    // The next turn, with {id}: the model sees all three earlier items before its input.
    const tokens = await req('POST', '/v1/responses/input_tokens', {
      model: 'gpt-4o-mini',
      input: 'and again?',
      conversation: { id: c.id },
    });
    const next = await req('POST', '/v1/responses', { model: 'gpt-4o-mini', input: 'and again?', conversation: { id: c.id } });
    expect(next.body.usage.input_tokens).toBe(tokens.body.input_tokens);
    const alone = await req('POST', '/v1/responses/input_tokens', { model: 'gpt-4o-mini', input: 'and again?' });
    expect(tokens.body.input_tokens).toBeGreaterThan(alone.body.input_tokens);
    expect((await req('GET', `/v1/conversations/${c.id}/items`)).body.data).toHaveLength(5);
    // A conversation item may be referenced by id.
    const ref = await req('POST', '/v1/responses', { model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: items[0].id }] });
    expect(ref.body.output[0].content[0].text).toContain('my name is Ada');
    expect(
      (await req('POST', '/v1/responses', { model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: items[0].id }] }, other)).status,
    ).toBe(404);
    expect((await req('POST', '/v1/responses', { model: 'gpt-4o-mini', input: 'x', conversation: c.id }, other)).status).toBe(404);
    const both = await req('POST', '/v1/responses', {
      model: 'gpt-4o-mini',
      input: 'x',
      conversation: c.id,
      previous_response_id: r.body.id,
    });
    expect(both.status).toBe(400);
    await req('DELETE', `/v1/conversations/${c.id}`);
    const gone = await s.ctx.store.db.selectFrom('conversation_items').select('id').where('conversation_id', '=', c.id).execute();
    expect(gone).toEqual([]);
  });

  it('appends a background response to its conversation when its job ends; a previous response id continues its own turn', async () => {
    const c = (await req('POST', '/v1/conversations', { items: [{ role: 'user', content: 'first' }] })).body;
    const r = await req('POST', '/v1/responses', { model: 'gpt-4o-mini', input: 'in the back', conversation: c.id, background: true });
    expect(r.body.status).toBe('queued');
    expect((await req('GET', `/v1/conversations/${c.id}/items`)).body.data).toHaveLength(1);
    await s.ctx.jobs.drain();
    const done = await req('GET', `/v1/responses/${r.body.id}`);
    expect(done.body).toMatchObject({ status: 'completed', conversation: { id: c.id } });
    const items = (await req('GET', `/v1/conversations/${c.id}/items?order=asc`)).body.data;
    expect(items.map((i: any) => i.content[0].text)).toEqual(['first', 'in the back', done.body.output[0].content[0].text]);
    expect((await req('GET', `/v1/responses/${r.body.id}/input_items`)).body.data).toHaveLength(1);
    // Continued by id, the model sees that response's turn (its input and output), not the conversation.
    const after = await req('POST', '/v1/responses/input_tokens', { model: 'gpt-4o-mini', input: 'next', previous_response_id: r.body.id });
    expect(after.status, JSON.stringify(after.body)).toBe(200);
  });
});
