import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dialects } from '../helpers.js';
import { filler } from '../vector-stores/fixtures.js';
import { startChatServer, type ChatServer } from '../assistants/chat-server.js';
import { startEnv, TEST_MODELS, until, type Env } from '../assistants/setup.js';

vi.setConfig({ testTimeout: 120_000 });

const FACT = 'The launch code of the Zephyr probe is 7731-ALPHA.';
const QUESTION = 'What is the launch code of the Zephyr probe?';
const MARKER = '【0:0†source】';
/** The wire object of what the SDK returns, without the members its helpers add. */
const wire = (v: unknown) =>
  JSON.parse(JSON.stringify(v), (k, value) => (['output_text', 'output_parsed', 'parsed'].includes(k) ? undefined : value));

/**
 * Issue 36: file_search on /v1/responses through the openai SDK — the same vector stores and engine as
 * runs, the file_search_call item and its events, results with `include`, file citations, filters on
 * file attributes, an upstream model given the function; and an Assistants integration moved over
 * (docs/responses.md, "Moving an Assistants integration with file_search to the Responses API").
 */
describe.each(dialects())('file_search on /v1/responses (%s)', (dialect) => {
  let env: Env;
  let chat: ChatServer;
  let client: OpenAI;
  let factFile: OpenAI.FileObject;
  let otherFile: OpenAI.FileObject;
  let storeId: string;

  const upload = async (text: string, name: string) =>
    client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' });

  beforeAll(async () => {
    chat = await startChatServer();
    env = await startEnv(dialect, {
      'up-*': { provider: 'upstream', base_url: chat.url, api_key: 'sk-up', timeout: '5s' },
      ...TEST_MODELS,
    });
    client = env.client;
    factFile = await upload(`# Zephyr\n\n${filler(6, 2)}\n\n${FACT}\n\n${filler(6, 4)}`, 'zephyr.md');
    otherFile = await upload(`# Kestrel\n\n${filler(6, 3)}\n\nThe launch code of the Kestrel probe is 1234-BETA.\n`, 'kestrel.md');
    const store = await client.vectorStores.create({ name: 'probes' });
    storeId = store.id;
    await client.vectorStores.files.createAndPoll(storeId, { file_id: factFile.id, attributes: { probe: 'zephyr', year: 2024 } });
    await client.vectorStores.files.createAndPoll(storeId, { file_id: otherFile.id, attributes: { probe: 'kestrel', year: 2021 } });
    await until(
      () => client.vectorStores.retrieve(storeId),
      (vs) => vs.status === 'completed',
    );
  });
  afterAll(async () => {
    await env?.s.close();
    await chat?.close();
  });

  it('searches, answers with a file citation, and includes the results when asked', async () => {
    const r = await client.responses.create({
      model: 'gpt-4.1',
      input: QUESTION,
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
      include: ['file_search_call.results'],
    });
    expect(r.status).toBe('completed');
    expect(r.output.map((o) => o.type)).toEqual(['file_search_call', 'message']);
    const call = r.output[0] as OpenAI.Responses.ResponseFileSearchToolCall;
    expect(call).toMatchObject({ type: 'file_search_call', status: 'completed', queries: [QUESTION] });
    expect(call.id).toMatch(/^fs_/);
    expect(call.results![0]).toMatchObject({ file_id: factFile.id, filename: 'zephyr.md', attributes: { probe: 'zephyr', year: 2024 } });
    expect(call.results![0].text).toContain(FACT);
    const text = (r.output[1] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    expect(text.text).toContain('7731-ALPHA');
    expect(text.text).toContain(MARKER);
    expect(text.annotations).toEqual([
      { type: 'file_citation', file_id: factFile.id, filename: 'zephyr.md', index: text.text.indexOf(MARKER) },
    ]);
    expect(r.tools).toEqual([
      {
        type: 'file_search',
        vector_store_ids: [storeId],
        filters: null,
        max_num_results: 10,
        ranking_options: { ranker: 'auto', score_threshold: 0 },
      },
    ]);
    // Two model calls: the usage is theirs together.
    expect(r.usage!.input_tokens).toBeGreaterThan(20);
    // Without `include`, the results are not in the item; a retrieved response is the same object.
    const plain = await client.responses.create({
      model: 'gpt-4.1',
      input: QUESTION,
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
    });
    expect((plain.output[0] as OpenAI.Responses.ResponseFileSearchToolCall).results).toBeNull();
    expect(wire(await client.responses.retrieve(plain.id))).toEqual(wire(plain));
  });

  it('streams the file_search_call events, and the final response equals the one retrieved', async () => {
    const stream = client.responses.stream({
      model: 'gpt-4.1',
      input: QUESTION,
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
      include: ['file_search_call.results'],
    });
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    const final = await stream.finalResponse();
    const searchEvents = types.filter((t) => t.startsWith('response.file_search_call.'));
    expect(searchEvents).toEqual([
      'response.file_search_call.in_progress',
      'response.file_search_call.searching',
      'response.file_search_call.completed',
    ]);
    expect(types.indexOf('response.output_text.annotation.added')).toBeLessThan(types.indexOf('response.output_text.done'));
    expect(types.at(-1)).toBe('response.completed');
    const got = await client.responses.retrieve(final.id);
    expect(wire(got)).toEqual(wire(final));
    expect((final.output[0] as OpenAI.Responses.ResponseFileSearchToolCall).results![0].file_id).toBe(factFile.id);
  });

  it('applies filters on file attributes, max_num_results and ranking_options', async () => {
    const ask = (tool: object) =>
      client.responses.create({
        model: 'gpt-4.1',
        input: 'What is the launch code of the probe?',
        tools: [{ type: 'file_search', vector_store_ids: [storeId], ...tool } as OpenAI.Responses.FileSearchTool],
        include: ['file_search_call.results'],
      });
    const resultsOf = (r: OpenAI.Responses.Response) => (r.output[0] as OpenAI.Responses.ResponseFileSearchToolCall).results!;
    const kestrel = await ask({ filters: { type: 'eq', key: 'probe', value: 'kestrel' } });
    expect(new Set(resultsOf(kestrel).map((x) => x.file_id))).toEqual(new Set([otherFile.id]));
    const compound = await ask({
      filters: {
        type: 'and',
        filters: [
          { type: 'gte', key: 'year', value: 2022 },
          { type: 'in', key: 'probe', value: ['zephyr', 'kestrel'] },
        ],
      },
    });
    expect(new Set(resultsOf(compound).map((x) => x.file_id))).toEqual(new Set([factFile.id]));
    expect(resultsOf(await ask({ max_num_results: 1 }))).toHaveLength(1);
    expect(resultsOf(await ask({ ranking_options: { score_threshold: 1 } }))).toEqual([]);
  });

  it('refuses a wrong file_search tool with a 400 or 404 naming the member', async () => {
    const post = (tool: object, extra: object = {}) =>
      fetch(`${env.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.s.keys.platform}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4.1', input: 'x', tools: [tool], ...extra }),
      });
    const cases: [object, number, RegExp, string][] = [
      [{ type: 'file_search' }, 400, /vector_store_ids/, 'tools[0].vector_store_ids'],
      [{ type: 'file_search', vector_store_ids: ['vs_nope'] }, 404, /vs_nope/, 'tools[0].vector_store_ids[0]'],
      [{ type: 'file_search', vector_store_ids: [storeId], max_num_results: 51 }, 400, /max_num_results/, 'tools[0].max_num_results'],
      [{ type: 'file_search', vector_store_ids: [storeId], filters: { type: 'eq', key: 'a' } }, 400, /value/, 'tools[0].filters.value'],
      [{ type: 'file_search', vector_store_ids: [storeId], filters: { type: 'xor', filters: [] } }, 400, /xor/, 'tools[0].filters.type'],
      [{ type: 'file_search', vector_store_ids: [storeId], frob: 1 }, 400, /frob/, 'tools[0].frob'],
    ];
    for (const [tool, status, message, param] of cases) {
      const r = await post(tool);
      const body = await r.json();
      expect(r.status, JSON.stringify(tool)).toBe(status);
      expect(body.error.message).toMatch(message);
      expect(body.error.param).toBe(param);
    }
    // A deeply nested filter is bounded, not a stack overflow.
    let deep: object = { type: 'eq', key: 'a', value: 1 };
    for (let i = 0; i < 200; i++) deep = { type: 'and', filters: [deep] };
    const nested = await post({ type: 'file_search', vector_store_ids: [storeId], filters: deep });
    expect(nested.status).toBe(400);
    const many = await post({ type: 'file_search', vector_store_ids: Array.from({ length: 17 }, () => storeId) });
    expect(many.status).toBe(400);
    // Two file_search tools: one lists every store.
    const twice = await fetch(`${env.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.s.keys.platform}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4.1',
        input: 'x',
        tools: [
          { type: 'file_search', vector_store_ids: [storeId] },
          { type: 'file_search', vector_store_ids: [storeId] },
        ],
      }),
    });
    expect(twice.status).toBe(400);
    // Another project's client cannot search this project's store: it is not found.
    await expect(
      env.other.responses.create({ model: 'gpt-4.1', input: QUESTION, tools: [{ type: 'file_search', vector_store_ids: [storeId] }] }),
    ).rejects.toMatchObject({ status: 404, param: 'tools[0].vector_store_ids[0]' });
    // A hosted item passed back needs its id.
    await expect(
      client.responses.create({ model: 'gpt-4.1', input: [{ type: 'file_search_call', queries: ['x'], status: 'completed' } as any] }),
    ).rejects.toMatchObject({ status: 400, param: 'input[0].id' });
  });

  it('gives an upstream model file_search as a function and runs its call', async () => {
    const before = chat.requests.length;
    const r = await client.responses.create({
      model: 'up-1',
      input: 'call:file_search Zephyr probe launch code',
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
    });
    const sent = chat.requests.slice(before).map((x) => x.body);
    expect(sent).toHaveLength(2);
    expect(sent[0].tools.map((t: any) => t.function.name)).toEqual(['file_search']);
    expect(sent[0]).not.toHaveProperty('retrieval');
    expect(sent[1].messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_up_1' });
    expect(sent[1].messages.at(-1).content).toContain(FACT);
    const text = (r.output[1] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    expect(text.text).toBe(`Upstream found it${MARKER}.`);
    expect(text.annotations).toEqual([{ type: 'file_citation', file_id: factFile.id, filename: 'zephyr.md', index: 17 }]);
  });

  it("streams an upstream model's file_search call without a function_call item", async () => {
    const stream = client.responses.stream({
      model: 'up-1',
      input: 'call:file_search Zephyr probe launch code',
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
    });
    const added: string[] = [];
    for await (const e of stream) if (e.type === 'response.output_item.added') added.push(e.item.type);
    const final = await stream.finalResponse();
    expect(added).toEqual(['file_search_call', 'message']);
    expect(final.output_text).toBe(`Upstream found it${MARKER}.`);
  });

  it('continues with previous_response_id, and takes its items back as input (the Agents SDK does)', async () => {
    const first = await client.responses.create({
      model: 'gpt-4.1',
      input: QUESTION,
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
    });
    const next = await client.responses.create({ model: 'gpt-4.1', input: 'thanks', previous_response_id: first.id });
    expect(next.status).toBe('completed');
    const passed = await client.responses.create({
      model: 'gpt-4.1',
      input: [{ role: 'user', content: QUESTION }, ...(first.output as any[]), { role: 'user', content: 'thanks' }],
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
    });
    expect(passed.status).toBe('completed');
  });

  it('moves an Assistants integration with file_search to the Responses API on the same store and files', async () => {
    // Before: an assistant with file_search over the store, a thread, a run.
    const assistant = await client.beta.assistants.create({
      model: 'gpt-4.1',
      instructions: 'Answer from the files.',
      tools: [{ type: 'file_search', file_search: { max_num_results: 5 } }],
      tool_resources: { file_search: { vector_store_ids: [storeId] } },
    });
    const run = await client.beta.threads.createAndRunPoll(
      { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: QUESTION }] } },
      { pollIntervalMs: 20 },
    );
    expect(run.status).toBe('completed');
    const [message] = (await client.beta.threads.messages.list(run.thread_id, { run_id: run.id })).data;
    const before = (message.content[0] as OpenAI.Beta.Threads.TextContentBlock).text;
    // After: the guide's one call — the assistant's instructions and tool settings, the store ids from tool_resources.
    const after = await client.responses.create({
      model: assistant.model,
      instructions: assistant.instructions,
      input: QUESTION,
      tools: [{ type: 'file_search', vector_store_ids: assistant.tool_resources!.file_search!.vector_store_ids!, max_num_results: 5 }],
    });
    const text = (after.output.at(-1) as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    // Same engine, same model rules: the same answer, citing the same file.
    expect(text.text).toBe(before.value);
    expect(before.annotations.map((a) => (a as OpenAI.Beta.Threads.FileCitationAnnotation).file_citation.file_id)).toEqual(
      text.annotations.map((a) => (a as OpenAI.Responses.ResponseOutputText.FileCitation).file_id),
    );
    // The follow-up question goes on with previous_response_id, where the thread took another message.
    const follow = await client.responses.create({ model: assistant.model, input: 'thanks', previous_response_id: after.id });
    expect(follow.status).toBe('completed');
  });
});
