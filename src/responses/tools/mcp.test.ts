import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../../../test/helpers.js';
import { rpcReply, startHostileServer, startTestMcpServer, type TestMcpServer } from '../../../test/responses/mcp-server.js';
import { checkMcpTool, isAllowed, needsApproval, type McpTool } from './mcp-config.js';
import type { McpItem } from './mcp-items.js';
import { McpTurn, type McpOutput, type McpRequest } from './mcp.js';

/** An output that keeps the items and the events, in order. */
function recorder() {
  const items: McpItem[] = [];
  const events: { type: string; [k: string]: unknown }[] = [];
  const out: McpOutput = {
    add: (item) => {
      events.push({ type: 'response.output_item.added', item: structuredClone(item) });
      return items.push(item) - 1;
    },
    event: (type, data) => events.push({ type, ...data }),
    done: (index, item) => events.push({ type: 'response.output_item.done', output_index: index, item: structuredClone(item) }),
  };
  return { items, events, out };
}

/** A turn opened and each server prepared, as the loop does. */
async function prepare(s: TestStandin, request: McpRequest, out: McpOutput, opts = {}) {
  const turn = await McpTurn.open(s.ctx, 'proj_demo', request, opts);
  const messages = [];
  for (const { tool } of request.tools) messages.push(...(await turn.prepare(tool, out)));
  return { turn, messages };
}

describe('the mcp tool’s rules', () => {
  const t = (name: string, readOnlyHint?: boolean) => ({ name, annotations: readOnlyHint === undefined ? null : { readOnlyHint } });

  it('allowed_tools: a list of names, or a filter by names and read-only hint', () => {
    expect(isAllowed({}, t('a'))).toBe(true);
    expect(isAllowed({ allowed_tools: ['a'] }, t('a'))).toBe(true);
    expect(isAllowed({ allowed_tools: ['a'] }, t('b'))).toBe(false);
    expect(isAllowed({ allowed_tools: { tool_names: [] } }, t('a'))).toBe(false);
    expect(isAllowed({ allowed_tools: { read_only: true } }, t('a', true))).toBe(true);
    expect(isAllowed({ allowed_tools: { read_only: true } }, t('a'))).toBe(false);
    expect(isAllowed({ allowed_tools: { tool_names: ['a'], read_only: true } }, t('a', false))).toBe(false);
  });

  it('require_approval: always by default, never, and per tool', () => {
    expect(needsApproval({}, t('a'))).toBe(true);
    expect(needsApproval({ require_approval: 'never' }, t('a'))).toBe(false);
    expect(needsApproval({ require_approval: 'always' }, t('a'))).toBe(true);
    const never = { require_approval: { never: { tool_names: ['a'] } } };
    expect([needsApproval(never, t('a')), needsApproval(never, t('b'))]).toEqual([false, true]);
    const always = { require_approval: { always: { tool_names: ['a'] } } };
    expect([needsApproval(always, t('a')), needsApproval(always, t('b'))]).toEqual([true, false]);
    const both = { require_approval: { always: { read_only: false }, never: { tool_names: ['a', 'b'] } } };
    expect([needsApproval(both, t('a', false)), needsApproval(both, t('b', true)), needsApproval(both, t('c', true))]).toEqual([
      true,
      false,
      true,
    ]);
  });

  it('refuses hosted connectors, tunnels, URLs that are not http, credentials in the URL, and transport headers', () => {
    const base = { type: 'mcp' as const, server_label: 'x', server_url: 'http://127.0.0.1/mcp' };
    expect(() => checkMcpTool({ type: 'mcp', server_label: 'x', connector_id: 'connector_gmail' }, 'tools[0]')).toThrow(
      /'tools\[0\]\.connector_id' 'connector_gmail' names one of the platform's hosted connectors/,
    );
    expect(() => checkMcpTool({ type: 'mcp', server_label: 'x' }, 'tools[0]')).toThrow(
      /Missing required parameter: 'tools\[0\]\.server_url'/,
    );
    expect(() => checkMcpTool({ ...base, server_url: 'file:///etc/passwd' }, 'tools[1]')).toThrow(/must be an http or https URL/);
    expect(() => checkMcpTool({ ...base, server_url: 'http://u:p@example.com/' }, 'tools[1]')).toThrow(/must not hold credentials/);
    expect(() => checkMcpTool({ ...base, headers: { 'Mcp-Session-Id': 'x' } }, 'tools[1]')).toThrow(/set by the MCP transport/);
    expect(() => checkMcpTool({ ...base, headers: { 'bad header': 'x' } }, 'tools[1]')).toThrow(/not a valid HTTP header name/);
    expect(() => checkMcpTool({ ...base, headers: { 'X-A': 'a\r\nb' } }, 'tools[1]')).toThrow(/characters a header value cannot/);
    expect(() => checkMcpTool({ ...base, authorization: 't', headers: { authorization: 'Bearer u' } }, 'tools[1]')).toThrow(/cannot both/);
    expect(() => checkMcpTool({ ...base, headers: { 'X-A': 'a' }, authorization: 't' }, 'tools[1]')).not.toThrow();
  });
});

describe('an MCP turn', () => {
  let s: TestStandin;
  let server: TestMcpServer;
  beforeAll(async () => {
    s = await startTestStandin();
    server = await startTestMcpServer();
  });
  afterAll(async () => {
    await server?.close();
    await s?.close();
  });
  const tool = (extra: Partial<McpTool> = {}): { tool: McpTool; at: string } => ({
    tool: { type: 'mcp', server_label: 'tools', server_url: server.url, ...extra },
    at: 'tools[0]',
  });

  it('lists the allowed tools once, runs a call that needs no approval, holds one that does', async () => {
    const { items, events, out } = recorder();
    const { turn, messages } = await prepare(
      s,
      {
        tools: [
          tool({ allowed_tools: ['echo', 'add'], require_approval: { never: { tool_names: ['echo'] } }, server_description: 'Test tools' }),
        ],
        input: [],
      },
      out,
    );
    try {
      expect(messages).toEqual([]);
      expect(items).toEqual([expect.objectContaining({ type: 'mcp_list_tools', server_label: 'tools', error: null })]);
      expect((items[0] as { tools: { name: string }[] }).tools.map((x) => x.name).sort()).toEqual(['add', 'echo', 'fail', 'whoami']);
      expect(turn.functions('tools').map((f) => f.function.name)).toEqual(['echo', 'add']);
      expect(turn.functions('tools')[0].function.description).toBe('Echoes a text back\n\n(MCP server tools: Test tools)');
      const ran = await turn.call('tools', 'echo', '{"text":"hi"}', out);
      expect(ran).toMatchObject({ output: 'echo: hi', item: { type: 'mcp_call', status: 'completed', output: 'echo: hi', error: null } });
      const held = await turn.call('tools', 'add', '{"a":1,"b":2}', out);
      expect(held).toMatchObject({ stop: true, item: { type: 'mcp_approval_request', name: 'add', arguments: '{"a":1,"b":2}' } });
      expect(server.calls.filter((c) => c.name === 'add')).toEqual([]);
    } finally {
      await turn.close();
    }
    expect(events.map((e) => e.type)).toEqual([
      'response.output_item.added',
      'response.mcp_list_tools.in_progress',
      'response.mcp_list_tools.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.mcp_call.in_progress',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.output_item.done',
    ]);

    // The next turn passes the items back with the approval: no new list, the call runs.
    const approval = items[2];
    const next = recorder();
    const lists = server.lists;
    const second = await prepare(
      s,
      {
        tools: [tool({ allowed_tools: ['echo', 'add'] })],
        input: [...items, { type: 'mcp_approval_response', id: 'mcpa_1', approval_request_id: approval.id, approve: true, reason: null }],
      },
      next.out,
    );
    await second.turn.close();
    expect(server.lists).toBe(lists);
    expect(next.items).toEqual([
      expect.objectContaining({ type: 'mcp_call', name: 'add', output: '3', status: 'completed', approval_request_id: approval.id }),
    ]);
    expect(second.messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: next.items[0].id, type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }],
      },
      { role: 'tool', tool_call_id: next.items[0].id, content: '3' },
    ]);

    // Declined: nothing runs, and the model reads why.
    const calls = server.calls.length;
    const declined = await prepare(
      s,
      {
        tools: [tool()],
        input: [
          ...items,
          { type: 'mcp_approval_response', id: 'mcpa_2', approval_request_id: approval.id, approve: false, reason: 'too risky' },
        ],
      },
      recorder().out,
    );
    await declined.turn.close();
    expect(server.calls.length).toBe(calls);
    expect(declined.messages[1]).toEqual({
      role: 'tool',
      tool_call_id: approval.id,
      content: 'The user declined this call to add. The reason given: too risky',
    });

    // An answer to no request is refused before anything runs.
    await expect(
      prepare(
        s,
        { tools: [tool()], input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_nope', approve: true }] },
        recorder().out,
      ),
    ).rejects.toThrow("No approval request found with id 'mcpr_nope'.");
  });

  it('a server that cannot be listed gives a failed list item and no tools; a failing tool a failed call', async () => {
    const h = await startHostileServer((_rpc, res) => void res.writeHead(500).end('boom'));
    const { items, events, out } = recorder();
    try {
      const { turn } = await prepare(
        s,
        {
          tools: [
            { tool: { type: 'mcp', server_label: 'broken', server_url: h.url }, at: 'tools[0]' },
            { ...tool({ require_approval: 'never' }), at: 'tools[1]' },
          ],
          input: [],
        },
        out,
      );
      expect(items[0]).toMatchObject({
        type: 'mcp_list_tools',
        server_label: 'broken',
        tools: [],
        error: expect.stringMatching(/^Error retrieving tool list from MCP server 'broken': .*HTTP 500/),
      });
      expect(events.filter((e) => e.type.startsWith('response.mcp_list_tools.')).map((e) => e.type)).toEqual([
        'response.mcp_list_tools.in_progress',
        'response.mcp_list_tools.failed',
        'response.mcp_list_tools.in_progress',
        'response.mcp_list_tools.completed',
      ]);
      expect(
        turn
          .functions('tools')
          .map((f) => f.function.name)
          .sort(),
      ).toEqual(['add', 'echo', 'fail', 'whoami']);
      const failed = await turn.call('tools', 'fail', '{}', out);
      expect(failed).toMatchObject({
        output: 'Error: the tool broke',
        item: { status: 'failed', error: { type: 'mcp_tool_execution_error' } },
      });
      expect(events.at(-2)?.type).toBe('response.mcp_call.failed');
      const bad = await turn.call('tools', 'echo', 'not json', out);
      expect(bad).toMatchObject({
        item: { status: 'failed', error: { type: 'mcp_protocol_error', code: -32602, message: 'the arguments are not a JSON object' } },
      });
      await turn.close();
    } finally {
      await h.close();
    }
  });

  it('answers hostile servers with failed items, each bounded: a redirect elsewhere, a hang, a flood', async () => {
    const redirect = await startHostileServer((_rpc, res) => void res.writeHead(302, { location: 'http://169.254.169.254/' }).end(), false);
    const hostile = await startHostileServer((rpc, res) => {
      if (rpc.method === 'tools/list')
        return rpcReply(res, rpc.id, {
          tools: [
            { name: 'hang', inputSchema: { type: 'object' } },
            { name: 'flood', inputSchema: { type: 'object' } },
          ],
        });
      const name = (rpc as { params?: { name?: string } }).params?.name;
      if (name === 'flood') rpcReply(res, rpc.id, { content: [{ type: 'text', text: 'z'.repeat(2 * 1024 * 1024) }] });
      // `hang`: never answered
    });
    const { items, out } = recorder();
    const started = performance.now();
    try {
      const { turn } = await prepare(
        s,
        {
          tools: [
            { tool: { type: 'mcp', server_label: 'elsewhere', server_url: redirect.url }, at: 'tools[0]' },
            { tool: { type: 'mcp', server_label: 'hostile', server_url: hostile.url, require_approval: 'never' }, at: 'tools[1]' },
          ],
          input: [],
        },
        out,
        // The flood's bound is its size, so its call needs room to read a megabyte on a loaded machine (it timed
        // out at 500 ms in a CI run); the hang's is this time.
        { limits: { connectMs: 1_000, listMs: 1_000, callMs: 2_000, maxResponseBytes: 1024 * 1024 } },
      );
      expect(items[0]).toMatchObject({
        server_label: 'elsewhere',
        error: expect.stringContaining('Redirect to http://169.254.169.254/ not followed'),
      });
      expect(await turn.call('hostile', 'hang', '{}', out)).toMatchObject({
        item: { status: 'failed', error: { type: 'mcp_protocol_error', code: -32001, message: expect.stringMatching(/timed out/i) } },
      });
      expect(await turn.call('hostile', 'flood', '{}', out)).toMatchObject({
        item: {
          status: 'failed',
          error: { type: 'mcp_protocol_error', message: `the MCP server's answer is larger than ${1024 * 1024} bytes` },
        },
      });
      await turn.close();
    } finally {
      await redirect.close();
      await hostile.close();
    }
    expect(performance.now() - started).toBeLessThan(6_000);
  });
});
