import { Agent, hostedMcpTool, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dialects } from '../helpers.js';
import { startEnv, type Env } from '../assistants/setup.js';
import { startTestMcpServer, type TestMcpServer } from '../responses/mcp-server.js';

// A client's first call loads its modules and the routes' validators: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

/**
 * Issue 36: remote MCP servers on /v1/responses: a real MCP server (the official SDK's) on loopback,
 * driven by the built-in model's rules, through the openai SDK (7.59) directly, streamed and not, and
 * the Agents SDK's `hostedMcpTool`, with and without approval.
 */
const MODELS = {
  '*': {
    provider: 'builtin',
    rules: [
      {
        match: 'echo hello',
        tool_calls: [{ name: 'echo', arguments: { text: 'hello' } }],
        after_tool_outputs: 'The server said: {{output}}.',
      },
      {
        match: 'add two and three',
        tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }],
        after_tool_outputs: 'The sum is {{output}}.',
      },
      { match: 'who am i', tool_calls: [{ name: 'whoami', arguments: {} }], after_tool_outputs: 'You are {{output}}.' },
    ],
  },
};

describe.each(dialects())('remote MCP servers (%s)', (dialect) => {
  let env: Env;
  let client: OpenAI;
  let server: TestMcpServer;
  let runner: Runner;
  const run: Runner['run'] = ((agent: Agent<any, any>, input: any, options?: any) => runner.run(agent, input, options)) as Runner['run'];
  const mcp = (extra: Record<string, unknown> = {}) => ({ type: 'mcp' as const, server_label: 'tools', server_url: server.url, ...extra });

  beforeAll(async () => {
    server = await startTestMcpServer();
    env = await startEnv(dialect, MODELS);
    client = new OpenAI({ apiKey: env.s.keys.platform, baseURL: `${env.url}/v1`, maxRetries: 0 });
    runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }) });
    setTracingDisabled(true);
  });
  afterAll(async () => {
    await env?.s.close();
    await server?.close();
  });

  it('lists the tools, calls one and answers with its output; a later turn reuses the list', async () => {
    const lists = server.lists;
    const r = await client.responses.create({
      model: 'gpt-4.1',
      input: 'Please echo hello',
      tools: [mcp({ require_approval: 'never', allowed_tools: ['echo', 'add'] })],
    });
    expect(r.status).toBe('completed');
    expect(r.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    const [list, call] = r.output as any[];
    expect(list).toMatchObject({ server_label: 'tools', error: null });
    expect(list.tools.map((t: { name: string }) => t.name).sort()).toEqual(['add', 'echo', 'fail', 'whoami']);
    expect(call).toMatchObject({
      server_label: 'tools',
      name: 'echo',
      arguments: '{"text":"hello"}',
      output: 'echo: hello',
      error: null,
      status: 'completed',
      approval_request_id: null,
    });
    expect(call.id).toMatch(/^mcp_/);
    expect(r.output_text).toBe('The server said: echo: hello.');
    expect(server.lists).toBe(lists + 1);
    expect(r.tools).toEqual([expect.objectContaining({ type: 'mcp', server_label: 'tools', server_url: server.url })]);

    const next = await client.responses.create({
      model: 'gpt-4.1',
      input: 'Now add two and three',
      previous_response_id: r.id,
      tools: [mcp({ require_approval: 'never' })],
    });
    expect(server.lists).toBe(lists + 1);
    expect(next.output.map((o) => o.type)).toEqual(['mcp_call', 'message']);
    expect(next.output_text).toBe('The sum is 5.');
    // The items round-trip: retrieved and listed as they were returned.
    expect((await client.responses.retrieve(r.id)).output).toEqual(r.output);
    const items = await client.responses.inputItems.list(next.id);
    expect(items.data.map((i) => i.type)).toEqual(['message']);
  });

  it('streams the list and the call as the document’s events', async () => {
    const stream = await client.responses.create({
      model: 'gpt-4.1',
      input: 'Please echo hello',
      tools: [mcp({ require_approval: 'never' })],
      stream: true,
    });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t.includes('mcp'))).toEqual([
      'response.mcp_list_tools.in_progress',
      'response.mcp_list_tools.completed',
      'response.mcp_call.in_progress',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.completed',
    ]);
    const done = events.at(-1);
    expect(done.type).toBe('response.completed');
    expect(done.response.output.map((o: { type: string }) => o.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    const added = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);
    expect(added).toEqual(done.response.output);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const delta = events.find((e) => e.type === 'response.mcp_call_arguments.delta');
    expect(delta).toMatchObject({ item_id: done.response.output[1].id, output_index: 1, delta: '{"text":"hello"}' });
    expect(await client.responses.retrieve(done.response.id)).toMatchObject({ output: done.response.output });
  });

  it('holds a call for approval, then runs it when approved (previous_response_id), or not when declined', async () => {
    const tools = [mcp({ require_approval: { never: { tool_names: ['echo'] } } })];
    const calls = server.calls.length;
    const first = await client.responses.create({ model: 'gpt-4.1', input: 'Please add two and three', tools });
    expect(first.status).toBe('completed');
    expect(first.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
    const request = first.output[1] as any;
    expect(request).toMatchObject({ server_label: 'tools', name: 'add', arguments: '{"a":2,"b":3}' });
    expect(request.id).toMatch(/^mcpr_/);
    expect(server.calls.length).toBe(calls);

    const approved = await client.responses.create({
      model: 'gpt-4.1',
      previous_response_id: first.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      tools,
    });
    expect(approved.output.map((o) => o.type)).toEqual(['mcp_call', 'message']);
    expect(approved.output[0]).toMatchObject({ name: 'add', output: '5', approval_request_id: request.id });
    expect(approved.output_text).toBe('The sum is 5.');
    expect(server.calls.length).toBe(calls + 1);

    const declined = await client.responses.create({
      model: 'gpt-4.1',
      previous_response_id: first.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false, reason: 'not now' }],
      tools,
    });
    expect(declined.output.map((o) => o.type)).toEqual(['message']);
    expect(declined.output_text).toBe('The sum is The user declined this call to add. The reason given: not now.');
    expect(server.calls.length).toBe(calls + 1);
    const inputs = await client.responses.inputItems.list(declined.id);
    expect(inputs.data[0]).toMatchObject({
      type: 'mcp_approval_response',
      approval_request_id: request.id,
      approve: false,
      reason: 'not now',
    });

    await expect(
      client.responses.create({
        model: 'gpt-4.1',
        input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_unknown', approve: true }],
        tools,
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining("No approval request found with id 'mcpr_unknown'") });
  });

  it('runs an approval passed back with the earlier items (stateless), streamed', async () => {
    const tools = [mcp()];
    const first = await client.responses.create({ model: 'gpt-4.1', input: 'Please add two and three', tools, store: false });
    const request = first.output.find((o) => o.type === 'mcp_approval_request')!;
    const lists = server.lists;
    const stream = await client.responses.create({
      model: 'gpt-4.1',
      store: false,
      stream: true,
      tools,
      input: [
        { role: 'user', content: 'Please add two and three' },
        ...(first.output as any[]),
        { type: 'mcp_approval_response', approval_request_id: request.id, approve: true },
      ],
    });
    let final: any;
    const types: string[] = [];
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.completed') final = e.response;
    }
    expect(server.lists).toBe(lists);
    expect(types).toContain('response.mcp_call.completed');
    expect(final.output.map((o: { type: string }) => o.type)).toEqual(['mcp_call', 'message']);
    expect(final.output[1].content[0].text).toBe('The sum is 5.');
  });

  it('sends authorization as a bearer token and headers to the server', async () => {
    const before = server.headers.length;
    const r = await client.responses.create({
      model: 'gpt-4.1',
      input: 'who am i',
      tools: [mcp({ require_approval: 'never', authorization: 'tok-123', headers: { 'X-Team': 'blue' } })],
    });
    expect(r.output_text).toBe('You are Bearer tok-123.');
    // The credentials reach the server only: the response shows neither.
    expect(r.tools[0]).not.toHaveProperty('authorization');
    expect((r.tools[0] as { headers?: unknown }).headers).toEqual({ 'X-Team': '[redacted]' });
    expect(JSON.stringify((await client.responses.retrieve(r.id)).tools)).not.toContain('tok-123');
    expect(server.headers.slice(before).every((h) => h['x-team'] === 'blue')).toBe(true);
  });

  it('answers a server it may not reach with a failed list item, and refuses hosted connectors', async () => {
    const r = await client.responses.create({
      model: 'gpt-4.1',
      input: 'Please echo hello',
      tools: [mcp({ server_label: 'private', server_url: 'http://10.1.2.3/mcp', require_approval: 'never' })],
    });
    expect(r.status).toBe('completed');
    expect(r.output[0]).toMatchObject({
      type: 'mcp_list_tools',
      tools: [],
      error: expect.stringMatching(
        /^Error retrieving tool list from MCP server 'private': refusing to connect to 10\.1\.2\.3 .*private address/,
      ),
    });
    expect(r.output_text).toBe('You said: Please echo hello');
    await expect(
      client.responses.create({
        model: 'gpt-4.1',
        input: 'hi',
        tools: [{ type: 'mcp', server_label: 'gmail', connector_id: 'connector_gmail', authorization: 'x' } as any],
      }),
    ).rejects.toMatchObject({ status: 400, param: 'tools[0].connector_id', message: expect.stringContaining('connector_gmail') });
  });

  it('calls a tool the message names (no rule), and runs MCP in a background response', async () => {
    const r = await client.responses.create({
      model: 'gpt-4.1',
      input: 'Please use whoami now',
      tools: [mcp({ require_approval: 'never' })],
    });
    expect(r.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(r.output[1]).toMatchObject({ name: 'whoami', arguments: '{}', output: 'nobody' });
    expect(r.output_text).toBe('whoami returned: nobody');

    const queued = await client.responses.create({
      model: 'gpt-4.1',
      input: 'Please echo hello',
      background: true,
      tools: [mcp({ require_approval: 'never', authorization: 'bg-token' })],
    });
    expect(queued.status).toBe('queued');
    expect(queued.tools[0]).not.toHaveProperty('authorization');
    let done = queued;
    for (let i = 0; i < 200 && (done.status === 'queued' || done.status === 'in_progress'); i++) {
      await new Promise((res) => setTimeout(res, 50));
      done = await client.responses.retrieve(queued.id);
    }
    expect(done.status).toBe('completed');
    expect(done.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(done.output_text).toBe('The server said: echo: hello.');
  });

  it('runs the Agents SDK’s hostedMcpTool without approval', async () => {
    const agent = new Agent({
      name: 'Echo',
      instructions: 'Use the tools.',
      model: 'gpt-4.1',
      tools: [hostedMcpTool({ serverLabel: 'tools', serverUrl: server.url, requireApproval: 'never' })],
    });
    const result = await run(agent, 'Please echo hello');
    expect(result.finalOutput).toBe('The server said: echo: hello.');
  });

  it('runs the Agents SDK’s hostedMcpTool with approval: an interruption, approved, then the call', async () => {
    const agent = new Agent({
      name: 'Adder',
      instructions: 'Use the tools.',
      model: 'gpt-4.1',
      tools: [hostedMcpTool({ serverLabel: 'tools', serverUrl: server.url, requireApproval: 'always' })],
    });
    const calls = server.calls.length;
    let result = await run(agent, 'Please add two and three');
    expect(result.interruptions).toHaveLength(1);
    expect(server.calls.length).toBe(calls);
    for (const i of result.interruptions) result.state.approve(i);
    result = await run(agent, result.state);
    expect(result.finalOutput).toBe('The sum is 5.');
    expect(server.calls.slice(calls)).toEqual([{ name: 'add', arguments: { a: 2, b: 3 } }]);
  });

  it('runs the Agents SDK’s hostedMcpTool with an onApproval callback', async () => {
    const asked: string[] = [];
    const agent = new Agent({
      name: 'Adder',
      instructions: 'Use the tools.',
      model: 'gpt-4.1',
      tools: [
        hostedMcpTool({
          serverLabel: 'tools',
          serverUrl: server.url,
          requireApproval: 'always',
          onApproval: async (_ctx, item) => {
            asked.push((item.rawItem as { name: string }).name);
            return { approve: true };
          },
        }),
      ],
    });
    const result = await run(agent, 'Please add two and three');
    expect(asked).toEqual(['add']);
    expect(result.finalOutput).toBe('The sum is 5.');
  });
});
