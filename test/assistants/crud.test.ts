import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { dialects } from '../helpers.js';
import { startEnv, type Env } from './setup.js';

describe.each(dialects())('threads interface CRUD (%s)', (dialect) => {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv(dialect);
  });
  afterAll(() => env?.s.close());

  it('creates, reads, modifies, lists and deletes assistants', async () => {
    const { client } = env;
    const a = await client.beta.assistants.create({
      model: 'gpt-4o',
      name: 'Math tutor',
      description: 'helps',
      instructions: 'You are a tutor.',
      tools: [
        { type: 'code_interpreter' },
        {
          type: 'file_search',
          file_search: { max_num_results: 50, ranking_options: { score_threshold: 0.5, ranker: 'default_2024_08_21' } },
        },
      ],
      tool_resources: { code_interpreter: { file_ids: ['file-1'] } },
      metadata: { team: 'a' },
      temperature: 0.2,
      top_p: 0.9,
    });
    expect(a).toMatchObject({
      object: 'assistant',
      model: 'gpt-4o',
      name: 'Math tutor',
      metadata: { team: 'a' },
      temperature: 0.2,
      top_p: 0.9,
      response_format: 'auto',
    });
    expect(a.id).toMatch(/^asst_/);
    expect(a.tool_resources).toEqual({ code_interpreter: { file_ids: ['file-1'] } });
    expect(a.tools[1]).toEqual({
      type: 'file_search',
      file_search: { max_num_results: 50, ranking_options: { score_threshold: 0.5, ranker: 'default_2024_08_21' } },
    });
    const defaults = await client.beta.assistants.create({ model: 'gpt-3.5-turbo', tools: [{ type: 'file_search' }] });
    expect(defaults.tools).toEqual([
      { type: 'file_search', file_search: { max_num_results: 5, ranking_options: { ranker: 'auto', score_threshold: 0 } } },
    ]);
    const updated = await client.beta.assistants.update(a.id, {
      name: 'Renamed',
      metadata: { team: 'b' },
      response_format: { type: 'json_object' },
    });
    expect(updated).toMatchObject({
      name: 'Renamed',
      metadata: { team: 'b' },
      response_format: { type: 'json_object' },
      instructions: 'You are a tutor.',
    });
    expect(await client.beta.assistants.retrieve(a.id)).toEqual(updated);
    const page = await client.beta.assistants.list({ limit: 100 });
    expect(page.data.map((x) => x.id)).toContain(a.id);
    expect(await client.beta.assistants.delete(a.id)).toEqual({ id: a.id, object: 'assistant.deleted', deleted: true });
    await expect(client.beta.assistants.retrieve(a.id)).rejects.toMatchObject({
      status: 404,
      error: { message: `No assistant found with id '${a.id}'.` },
    });
  });

  it('refuses invalid fields with the field and the rule', async () => {
    const { client } = env;
    const bad = async (body: any, param: string, re: RegExp) => {
      const err = await client.beta.assistants.create({ model: 'gpt-4o', ...body }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.error.param).toBe(param);
      expect(err.error.message).toMatch(re);
      expect(err.error.type).toBe('invalid_request_error');
    };
    await bad({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata', /at most 16 properties/);
    await bad({ metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata', /at most 64 characters/);
    await bad({ metadata: { k: 'v'.repeat(513) } }, 'metadata.k', /maximum length 512/);
    await bad(
      { tools: [{ type: 'file_search', file_search: { max_num_results: 51 } }] },
      'tools[0].file_search.max_num_results',
      /between 1 and 50/,
    );
    await bad(
      { tools: [{ type: 'file_search', file_search: { max_num_results: 0 } }] },
      'tools[0].file_search.max_num_results',
      /between 1 and 50/,
    );
    await bad(
      { tools: [{ type: 'file_search', file_search: { ranking_options: { score_threshold: 1.5 } } }] },
      'tools[0].file_search.ranking_options.score_threshold',
      /between 0 and 1/,
    );
    await bad(
      { tools: [{ type: 'file_search', file_search: { ranking_options: { ranker: 'best', score_threshold: 0 } } }] },
      'tools[0].file_search.ranking_options.ranker',
      /Supported values/,
    );
    await bad({ tools: [{ type: 'function', function: { name: 'bad name' } }] }, 'tools[0].function.name', /\^\[a-zA-Z0-9_-\]\+\$/);
    await bad({ tools: [{ type: 'function', function: { name: 'x'.repeat(65) } }] }, 'tools[0].function.name', /at most 64/);
    await bad({ tools: [{ type: 'function' }] }, 'tools[0].function', /Missing required parameter/);
    await bad({ tools: [{ type: 'browser' }] }, 'tools[0].type', /Supported values are: 'code_interpreter', 'file_search', 'function'/);
    await bad({ tools: Array.from({ length: 129 }, () => ({ type: 'code_interpreter' })) }, 'tools', /maximum length 128/);
    await bad(
      { tool_resources: { code_interpreter: { file_ids: Array.from({ length: 21 }, (_, i) => `file-${i}`) } } },
      'tool_resources.code_interpreter.file_ids',
      /maximum length 20/,
    );
    await bad(
      { tool_resources: { file_search: { vector_store_ids: ['vs_1', 'vs_2'] } } },
      'tool_resources.file_search.vector_store_ids',
      /maximum length 1/,
    );
    await bad(
      { response_format: { type: 'json_schema', json_schema: { name: 'has space' } } },
      'response_format.json_schema.name',
      /pattern/,
    );
    await bad(
      { response_format: { type: 'json_schema', json_schema: { name: 'n'.repeat(65) } } },
      'response_format.json_schema.name',
      /at most 64/,
    );
    await bad({ response_format: { type: 'json_schema', json_schema: {} } }, 'response_format.json_schema.name', /Missing required/);
    await bad(
      { response_format: { type: 'json_schema', json_schema: { name: 'ok', strict: 'yes' } } },
      'response_format.json_schema.strict',
      /boolean/,
    );
    await bad({ response_format: 'text' }, 'response_format', /Supported values are: 'auto'/);
    await bad(
      { tools: [{ type: 'file_search' }], response_format: { type: 'json_schema', json_schema: { name: 'ok' } } },
      'response_format',
      /must be of type `function`/,
    );
    await bad({ temperature: 2.5 }, 'temperature', /at most 2/);
    await bad({ top_p: -1 }, 'top_p', /at least 0/);
    await bad({ name: 'n'.repeat(257) }, 'name', /at most 256/);
    await bad({ unknown_field: 1 }, 'unknown_field', /Unrecognized request argument/);
    const missing = await env.client.beta.assistants.create({} as any).catch((e) => e);
    expect(missing.status).toBe(400);
    expect(missing.error.param).toBe('model');
  });

  it('creates threads with initial messages and content blocks, and checks image urls', async () => {
    const { client } = env;
    const file = await client.files.create({ file: await toFile(Buffer.from('notes'), 'a.txt'), purpose: 'assistants' });
    const store = await client.vectorStores.create({ name: 'thread store' });
    const t = await client.beta.threads.create({
      messages: [
        { role: 'user', content: 'hello', metadata: { n: '1' }, attachments: [{ file_id: file.id, tools: [{ type: 'file_search' }] }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.PNG', detail: 'low' } },
            { type: 'image_file', image_file: { file_id: 'file-img' } },
          ],
        },
        { role: 'assistant', content: 'earlier answer' },
      ],
      metadata: { kind: 'demo' },
      tool_resources: { file_search: { vector_store_ids: [store.id] } },
    });
    expect(t).toMatchObject({
      object: 'thread',
      metadata: { kind: 'demo' },
      tool_resources: { file_search: { vector_store_ids: [store.id] } },
    });
    const msgs = await client.beta.threads.messages.list(t.id, { order: 'asc' });
    expect(msgs.data.map((m) => m.role)).toEqual(['user', 'user', 'assistant']);
    expect(msgs.data[0]).toMatchObject({
      object: 'thread.message',
      thread_id: t.id,
      run_id: null,
      assistant_id: null,
      status: 'completed',
      metadata: { n: '1' },
      attachments: [{ file_id: file.id, tools: [{ type: 'file_search' }] }],
      content: [{ type: 'text', text: { value: 'hello', annotations: [] } }],
    });
    expect(msgs.data[1].content).toEqual([
      { type: 'text', text: { value: 'look', annotations: [] } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.PNG', detail: 'low' } },
      { type: 'image_file', image_file: { file_id: 'file-img', detail: 'auto' } },
    ]);
    const badImage = await client.beta.threads.messages
      .create(t.id, { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.bmp' } }] })
      .catch((e) => e);
    expect(badImage.status).toBe(400);
    expect(badImage.error.param).toBe('content[0].image_url.url');
    const badDetail = await client.beta.threads.messages
      .create(t.id, { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.io/a.jpg', detail: 'max' as any } }] })
      .catch((e) => e);
    expect(badDetail.error.param).toBe('content[0].image_url.detail');
    const badRole = await client.beta.threads.messages.create(t.id, { role: 'system' as any, content: 'x' }).catch((e) => e);
    expect(badRole.error.param).toBe('role');
    const empty = await client.beta.threads.messages.create(t.id, { role: 'user', content: [] }).catch((e) => e);
    expect(empty.error.param).toBe('content');
    const badAttachment = await client.beta.threads.messages
      .create(t.id, { role: 'user', content: 'x', attachments: [{ file_id: 'f', tools: [{ type: 'function' as any }] }] })
      .catch((e) => e);
    expect(badAttachment.error.param).toBe('attachments[0].tools[0].type');
    const badThreadMsg = await client.beta.threads.create({ messages: [{ role: 'user', content: 5 as any }] }).catch((e) => e);
    expect(badThreadMsg.error.param).toBe('messages[0].content');

    const modified = await client.beta.threads.update(t.id, { metadata: { kind: 'changed' } });
    expect(modified.metadata).toEqual({ kind: 'changed' });
    expect(await client.beta.threads.retrieve(t.id)).toEqual(modified);
    expect(await client.beta.threads.delete(t.id)).toEqual({ id: t.id, object: 'thread.deleted', deleted: true });
    await expect(client.beta.threads.retrieve(t.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.threads.messages.list(t.id)).rejects.toMatchObject({ status: 404 });
  });

  it('pages messages with limit, order, after, before and auto-paging', async () => {
    const { client } = env;
    const t = await client.beta.threads.create();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await client.beta.threads.messages.create(t.id, { role: 'user', content: `m${i}` })).id);
    const first = await client.beta.threads.messages.list(t.id, { limit: 3 });
    expect(first.data.map((m) => m.id)).toEqual(ids.slice().reverse().slice(0, 3));
    expect(first.has_more).toBe(true);
    const next = await first.getNextPage();
    expect(next.data.map((m) => m.id)).toEqual(ids.slice().reverse().slice(3, 6));
    const asc = await client.beta.threads.messages.list(t.id, { order: 'asc', after: ids[1], limit: 2 });
    expect(asc.data.map((m) => m.id)).toEqual([ids[2], ids[3]]);
    const before = await client.beta.threads.messages.list(t.id, { order: 'asc', before: ids[4], limit: 2 });
    expect(before.data.map((m) => m.id)).toEqual([ids[2], ids[3]]);
    const all: string[] = [];
    for await (const m of client.beta.threads.messages.list(t.id, { limit: 2, order: 'asc' })) all.push(m.id);
    expect(all).toEqual(ids);
    const defaults = await env.s.req('GET', `/v1/threads/${t.id}/messages`, { key: 'platform' });
    expect(defaults.body).toMatchObject({ object: 'list', first_id: ids[6], last_id: ids[0], has_more: false });
    const tooMany = await env.s.req('GET', `/v1/threads/${t.id}/messages?limit=101`, { key: 'platform' });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.param).toBe('limit');
    const zero = await env.s.req('GET', `/v1/threads/${t.id}/messages?limit=0`, { key: 'platform' });
    expect(zero.status).toBe(400);
    const badOrder = await env.s.req('GET', `/v1/threads/${t.id}/messages?order=up`, { key: 'platform' });
    expect(badOrder.status).toBe(400);

    const m = await client.beta.threads.messages.update(ids[0], { thread_id: t.id, metadata: { seen: 'yes' } });
    expect(m.metadata).toEqual({ seen: 'yes' });
    expect((await client.beta.threads.messages.retrieve(ids[0], { thread_id: t.id })).metadata).toEqual({ seen: 'yes' });
    expect(await client.beta.threads.messages.delete(ids[0], { thread_id: t.id })).toEqual({
      id: ids[0],
      object: 'thread.message.deleted',
      deleted: true,
    });
    await expect(client.beta.threads.messages.retrieve(ids[0], { thread_id: t.id })).rejects.toMatchObject({
      status: 404,
      error: { message: `No message found with id '${ids[0]}'.` },
    });
  });

  it('keeps each project to its own objects (404 elsewhere) and asks for a key', async () => {
    const { client, other } = env;
    const a = await client.beta.assistants.create({ model: 'gpt-4o' });
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'mine' }] });
    await expect(other.beta.assistants.retrieve(a.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.beta.threads.retrieve(t.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.beta.threads.messages.list(t.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.beta.threads.messages.create(t.id, { role: 'user', content: 'x' })).rejects.toMatchObject({ status: 404 });
    await expect(other.beta.threads.runs.create(t.id, { assistant_id: a.id })).rejects.toMatchObject({ status: 404 });
    expect((await other.beta.assistants.list()).data.map((x) => x.id)).not.toContain(a.id);
    const noKey = await env.s.req('GET', '/v1/assistants');
    expect(noKey.status).toBe(401);
    const unknownThread = await env.s.req('GET', '/v1/threads/thread_nope/runs/run_nope', { key: 'platform' });
    expect(unknownThread.status).toBe(404);
    expect(unknownThread.body.error.message).toBe("No thread found with id 'thread_nope'.");
  });

  it('lists and retrieves models', async () => {
    const list = await env.client.models.list();
    expect(list.data.map((m) => m.id)).toContain('gpt-4o');
    expect(await env.client.models.retrieve('my-local-model')).toMatchObject({
      id: 'my-local-model',
      object: 'model',
      owned_by: 'standin',
    });
  });
});
