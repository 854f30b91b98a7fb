import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dialects } from '../helpers.js';
import { startChatServer, type ChatServer } from '../assistants/chat-server.js';
import { startEnv, type Env } from '../assistants/setup.js';

// A client's first call loads its modules and the routes' validators: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

/** An input with what JSON escapes (quotes, backslashes, newlines, tabs) and characters beyond ASCII. */
const PATCH = '*** Begin Patch\n*** Update File: "a.txt"\n-old\\path\n+new\tvalue é 😀\n*** End Patch';
const MODELS = {
  'up-*': { provider: 'upstream', base_url: '', api_key: 'sk-up', timeout: '5s' },
  '*': {
    provider: 'builtin',
    // Small pieces: a streamed input comes in many deltas, escapes cut between them.
    chunk_chars: 3,
    rules: [
      { match: 'patch the file', tool_calls: [{ name: 'apply_patch_text', arguments: PATCH }], after_tool_outputs: 'Applied: {{output}}' },
      {
        match: 'two edits',
        tool_calls: [
          { name: 'apply_patch_text', arguments: 'first' },
          { name: 'apply_patch_text', arguments: 'second' },
        ],
      },
      {
        match: 'mixed',
        tool_calls: [
          { name: 'get_weather', arguments: { city: 'Oslo' } },
          { name: 'sql', arguments: 'SELECT 1' },
        ],
      },
    ],
  },
};
const patchTool: OpenAI.Responses.CustomTool = {
  type: 'custom',
  name: 'apply_patch_text',
  description: 'Applies a patch in the V4A diff format.',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)+/' },
};
const sqlTool: OpenAI.Responses.CustomTool = {
  type: 'custom',
  name: 'sql',
  format: { type: 'grammar', syntax: 'regex', definition: '^SELECT .+$' },
};
const weather: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: true,
};
/** The wire object of what the SDK returns, without the members its helpers add. */
const wire = (v: unknown) =>
  JSON.parse(JSON.stringify(v), (k, value) =>
    ['output_text', 'output_parsed', 'parsed', 'parsed_arguments'].includes(k) ? undefined : value,
  );
type CustomCall = OpenAI.Responses.ResponseCustomToolCall & { id: string; status: string };

/**
 * Issue 36 (the `custom` row of docs/responses.md's tool table): custom tools on /v1/responses through the
 * openai SDK 7 — free-text calls as `custom_tool_call` items, streamed input events, the output passed back
 * on the next turn, tool_choice, parallel_tool_calls, an upstream model given a function of one `input`,
 * and bad tool entries and items refused. Every reply and event is held against the official document.
 */
describe.each(dialects())('custom tools on /v1/responses (%s)', (dialect) => {
  let env: Env;
  let chat: ChatServer;
  let client: OpenAI;
  const post = (body: object) =>
    fetch(`${env.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.s.keys.platform}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    chat = await startChatServer();
    env = await startEnv(dialect, { ...MODELS, 'up-*': { ...MODELS['up-*'], base_url: chat.url } });
    client = new OpenAI({ apiKey: env.s.keys.platform, baseURL: `${env.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await env?.s.close();
    await chat?.close();
  });

  it('calls a custom tool with free text, and answers from its output on the next turn (previous_response_id)', async () => {
    const first = await client.responses.create({ model: 'gpt-4.1', input: 'please patch the file', tools: [patchTool, weather] });
    expect(first.status).toBe('completed');
    expect(first.output).toHaveLength(1);
    const call = first.output[0] as CustomCall;
    expect(call).toMatchObject({ type: 'custom_tool_call', status: 'completed', name: 'apply_patch_text', input: PATCH });
    expect(call.id).toMatch(/^ctc_/);
    expect(call.call_id).toMatch(/^call_/);
    // The tool is echoed as sent.
    expect(first.tools[0]).toEqual(patchTool);
    expect(wire(await client.responses.retrieve(first.id))).toEqual(wire(first));

    const second = await client.responses.create({
      model: 'gpt-4.1',
      previous_response_id: first.id,
      input: [{ type: 'custom_tool_call_output', call_id: call.call_id, output: 'patched 2 lines' }],
      tools: [patchTool, weather],
    });
    expect(second.output_text).toBe('Applied: patched 2 lines');
    const items = await client.responses.inputItems.list(second.id);
    expect(items.data[0]).toMatchObject({ type: 'custom_tool_call_output', call_id: call.call_id, output: 'patched 2 lines' });
    const out = await client.responses.inputItems.list(first.id);
    expect(out.data.map((i) => i.type)).toEqual(['message']);
  });

  it('streams the call as the document says, and the output passed back with the items (store: false)', async () => {
    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'please patch the file', tools: [patchTool], store: false });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const final = await stream.finalResponse();
    const types = events.map((e) => e.type);
    const deltas = events.filter((e) => e.type === 'response.custom_tool_call_input.delta');
    expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(types.slice(-3)).toEqual(['response.custom_tool_call_input.done', 'response.output_item.done', 'response.completed']);
    expect(deltas.length).toBeGreaterThan(5);
    const call = final.output[0] as CustomCall;
    expect(deltas.map((d) => d.delta).join('')).toBe(PATCH);
    expect(events.find((e) => e.type === 'response.custom_tool_call_input.done')).toMatchObject({
      item_id: call.id,
      output_index: 0,
      input: PATCH,
    });
    expect(events.find((e) => e.type === 'response.output_item.added')).toMatchObject({
      item: { type: 'custom_tool_call', status: 'in_progress', input: '', call_id: call.call_id },
    });
    expect(call.input).toBe(PATCH);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));

    // A stateless client sends the turn back whole, with the tool's output (parts read as their text).
    const next = await client.responses.create({
      model: 'gpt-4.1',
      store: false,
      tools: [patchTool],
      input: [
        { role: 'user', content: 'please patch the file' },
        ...(final.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'custom_tool_call_output', call_id: call.call_id, output: [{ type: 'input_text', text: 'done, no conflicts' }] },
      ],
    });
    expect(next.output_text).toBe('Applied: done, no conflicts');
  });

  it('keeps a custom call and its output in a conversation, and runs in the background with its stream kept', async () => {
    const conversation = await client.conversations.create({});
    const first = await client.responses.create({
      model: 'gpt-4.1',
      conversation: conversation.id,
      input: 'please patch the file',
      tools: [patchTool],
    });
    const call = first.output[0] as CustomCall;
    const next = await client.responses.create({
      model: 'gpt-4.1',
      conversation: conversation.id,
      input: [{ type: 'custom_tool_call_output', call_id: call.call_id, output: 'clean' }],
      tools: [patchTool],
    });
    expect(next.output_text).toBe('Applied: clean');
    const items = await client.conversations.items.list(conversation.id, { order: 'asc' });
    expect(items.data.map((i) => i.type)).toEqual(['message', 'custom_tool_call', 'custom_tool_call_output', 'message']);
    expect(items.data[1]).toMatchObject({ id: call.id, input: PATCH });

    const stream = await client.responses.create({
      model: 'gpt-4.1',
      input: 'please patch the file',
      tools: [patchTool],
      background: true,
      stream: true,
    });
    const deltas: string[] = [];
    let id = '';
    for await (const e of stream) {
      if (e.type === 'response.created') id = e.response.id;
      if (e.type === 'response.custom_tool_call_input.delta') deltas.push(e.delta);
    }
    expect(deltas.join('')).toBe(PATCH);
    const done = await client.responses.retrieve(id);
    expect(done.output[0]).toMatchObject({ type: 'custom_tool_call', input: PATCH, status: 'completed' });
  });

  it('honours tool_choice {type: "custom"}, a tool named in the message, and parallel_tool_calls', async () => {
    const forced = await client.responses.create({
      model: 'gpt-4.1',
      input: 'SELECT name FROM users',
      tools: [weather, sqlTool],
      tool_choice: { type: 'custom', name: 'sql' },
    });
    expect(forced.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', name: 'sql', input: 'SELECT name FROM users' })]);
    expect(forced.tool_choice).toEqual({ type: 'custom', name: 'sql' });
    const named = await client.responses.create({ model: 'gpt-4.1', input: 'use sql for this', tools: [sqlTool] });
    expect(named.output[0]).toMatchObject({ type: 'custom_tool_call', name: 'sql', input: 'use sql for this' });

    const both = await client.responses.create({ model: 'gpt-4.1', input: 'two edits please', tools: [patchTool] });
    expect(both.output.map((o) => (o as CustomCall).input)).toEqual(['first', 'second']);
    const one = await client.responses.create({
      model: 'gpt-4.1',
      input: 'two edits please',
      tools: [patchTool],
      parallel_tool_calls: false,
    });
    expect(one.output.map((o) => (o as CustomCall).input)).toEqual(['first']);

    // A function and a custom tool in one turn, streamed: each its own item and events.
    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'mixed', tools: [weather, sqlTool] });
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    const mixed = await stream.finalResponse();
    expect(mixed.output.map((o) => o.type)).toEqual(['function_call', 'custom_tool_call']);
    expect(mixed.output[1]).toMatchObject({ input: 'SELECT 1' });
    expect(types).toContain('response.function_call_arguments.done');
    expect(types).toContain('response.custom_tool_call_input.done');
    // allowed_tools narrows to the custom tool by name.
    const allowed = await client.responses.create({
      model: 'gpt-4.1',
      input: 'mixed',
      tools: [weather, sqlTool],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'custom', name: 'sql' }] },
    });
    expect(allowed.output.map((o) => o.type)).toEqual(['custom_tool_call']);
  });

  it('gives an upstream model a function of one string `input`, and maps its call back', async () => {
    const before = chat.requests.length;
    const r = await client.responses.create({ model: 'up-1', input: 'call:sql SELECT 2', tools: [sqlTool] });
    const sent = chat.requests.slice(before).map((x) => x.body);
    expect(sent).toHaveLength(1);
    expect(sent[0].tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'sql',
          parameters: {
            type: 'object',
            properties: { input: { type: 'string', description: expect.stringContaining('^SELECT .+$') } },
            required: ['input'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect(sent[0]).not.toHaveProperty('custom');
    expect(r.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_up_1', name: 'sql', input: 'SELECT 2' })]);

    const stream = client.responses.stream({
      model: 'up-1',
      input: 'call:sql SELECT 3',
      tools: [sqlTool],
      tool_choice: { type: 'custom', name: 'sql' },
    });
    const deltas: string[] = [];
    for await (const e of stream) if (e.type === 'response.custom_tool_call_input.delta') deltas.push(e.delta);
    expect(deltas.join('')).toBe('SELECT 3');
    expect(chat.requests.at(-1).body.tool_choice).toEqual({ type: 'function', function: { name: 'sql' } });

    // The next turn: the upstream model sees the call as its function's call and the output as the tool message.
    const next = await client.responses.create({
      model: 'up-1',
      previous_response_id: r.id,
      tools: [sqlTool],
      input: [{ type: 'custom_tool_call_output', call_id: 'call_up_1', output: '2' }],
    });
    expect(next.output_text).toBe('Tool said: 2');
    const messages = chat.requests.at(-1).body.messages;
    expect(messages.at(-2).tool_calls[0]).toEqual({
      id: 'call_up_1',
      type: 'function',
      function: { name: 'sql', arguments: '{"input":"SELECT 2"}' },
    });
    expect(messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_up_1', content: '2' });
  });

  it('refuses bad custom tools, choices and items with a 400 naming the member', async () => {
    const cases: [object, string][] = [
      [{ tools: [{ type: 'custom' }] }, 'tools[0].name'],
      [{ tools: [{ type: 'custom', name: 'has space' }] }, 'tools[0].name'],
      [{ tools: [{ type: 'custom', name: 'x', format: { type: 'grammar', syntax: 'pcre', definition: 'a' } }] }, 'tools[0].format'],
      [{ tools: [{ type: 'custom', name: 'x', format: { type: 'grammar', syntax: 'regex' } }] }, 'tools[0].format'],
      [
        { tools: [{ type: 'custom', name: 'x', format: { type: 'grammar', syntax: 'lark', definition: 'a'.repeat(65_537) } }] },
        'tools[0].format',
      ],
      [{ tools: [{ type: 'custom', name: 'x', format: { type: 'json' } }] }, 'tools[0].format'],
      [{ tools: [{ type: 'custom', name: 'x', parameters: {} }] }, 'tools[0].parameters'],
      [{ tools: [{ type: 'custom', name: 'x', description: 'd'.repeat(4097) }] }, 'tools[0].description'],
      [{ tools: [weather, { type: 'custom', name: 'get_weather' }] }, 'tools[1].name'],
      [{ tools: [sqlTool], tool_choice: { type: 'custom', name: 'nope' } }, 'tool_choice'],
      [{ tools: [weather], tool_choice: { type: 'custom', name: 'get_weather' } }, 'tool_choice'],
      [{ tools: [sqlTool], tool_choice: { type: 'custom' } }, 'tool_choice'],
      [{ input: [{ type: 'custom_tool_call_output', output: 'x' }] }, 'input[0].call_id'],
      [{ input: [{ type: 'custom_tool_call_output', call_id: 'c', output: 5 }] }, 'input[0].output'],
      [{ input: [{ type: 'custom_tool_call', call_id: 'c', name: 'sql' }] }, 'input[0].input'],
      [{ input: [{ type: 'custom_tool_call', call_id: 'c', name: 'sql', input: 'x', arguments: '{}' }] }, 'input[0].arguments'],
    ];
    for (const [body, param] of cases) {
      const r = await post({ model: 'gpt-4.1', input: 'hi', ...body });
      const json = (await r.json()) as { error: { type: string; param: string; message: string } };
      expect({ status: r.status, param: json.error.param, type: json.error.type }, JSON.stringify(body).slice(0, 200)).toEqual({
        status: 400,
        param: expect.stringMatching(new RegExp(`^${param.replace(/[.[\]]/g, '\\$&')}`)),
        type: 'invalid_request_error',
      });
    }
    // The SDK raises it as its 400.
    await expect(
      client.responses.create({ model: 'gpt-4.1', input: 'hi', tools: [sqlTool], tool_choice: { type: 'custom', name: 'nope' } }),
    ).rejects.toMatchObject({ status: 400, param: 'tool_choice' });
  });

  it('counts a custom tool in input_tokens as the response counts it', async () => {
    const body = { model: 'gpt-4.1', input: 'hello there', tools: [patchTool, sqlTool] };
    const r = await client.responses.create(body);
    const counted = await client.responses.inputTokens.count(body);
    expect(counted.input_tokens).toBe(r.usage!.input_tokens);
    const bad = await fetch(`${env.url}/v1/responses/input_tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.s.keys.platform}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, tools: [{ type: 'custom', name: 'x', format: { type: 'grammar', syntax: 'lark', definition: 5 } }] }),
    });
    expect(bad.status).toBe(400);
  });

  it('keeps a grammar as data: a regex that backtracks forever is never run', async () => {
    // `(a+)+$` against 'aaa…!' takes exponential time in a backtracking engine; Standin never compiles it.
    const evil: OpenAI.Responses.CustomTool = {
      type: 'custom',
      name: 'evil',
      format: { type: 'grammar', syntax: 'regex', definition: '(a+)+$' },
    };
    const started = Date.now();
    const r = await client.responses.create({
      model: 'gpt-4.1',
      input: `${'a'.repeat(40)}!`,
      tools: [evil],
      tool_choice: { type: 'custom', name: 'evil' },
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.output[0]).toMatchObject({ type: 'custom_tool_call', input: `${'a'.repeat(40)}!` });
    expect(r.tools[0]).toEqual(evil);
  });
});
