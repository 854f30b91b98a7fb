import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutbound } from '../../core/outbound.js';
import { rpcReply, startHostileServer, startTestMcpServer, type TestMcpServer } from '../../../test/responses/mcp-server.js';
import { McpFailure, McpSession } from './mcp-client.js';

const loopback = createOutbound({ allowLoopback: true });
const guarded = createOutbound({});
const fast = { connectMs: 500, listMs: 500, callMs: 500 };

describe('the MCP client of the Responses API', () => {
  let server: TestMcpServer;
  beforeAll(async () => {
    server = await startTestMcpServer();
  });
  afterAll(async () => {
    await server.close();
    await loopback.close();
    await guarded.close();
  });

  it('lists a real server’s tools and calls them with the request’s headers and bearer token', async () => {
    const session = await McpSession.open({
      url: server.url,
      headers: { Authorization: 'Bearer tok-1', 'X-Team': 'blue' },
      outbound: loopback,
    });
    try {
      const tools = await session.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['add', 'echo', 'fail', 'whoami']);
      const echo = tools.find((t) => t.name === 'echo')!;
      expect(echo).toMatchObject({ description: 'Echoes a text back', annotations: { readOnlyHint: true } });
      expect(echo.input_schema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
      expect(await session.call('echo', { text: 'hi' })).toEqual({ output: 'echo: hi' });
      expect(await session.call('whoami', {})).toEqual({ output: 'Bearer tok-1' });
      expect(await session.call('fail', {})).toEqual({
        error: { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: 'the tool broke' }] },
      });
    } finally {
      await session.close();
    }
    expect(server.headers.every((h) => h['x-team'] === 'blue')).toBe(true);
  });

  it('reaches only what the outbound guard allows: loopback refused unless allowed, metadata never', async () => {
    await expect(McpSession.open({ url: server.url, headers: {}, outbound: guarded, limits: fast })).rejects.toThrow(
      /refusing to connect to 127\.0\.0\.1 \(127\.0\.0\.1\): loopback address/,
    );
    await expect(McpSession.open({ url: 'http://169.254.169.254/mcp', headers: {}, outbound: loopback, limits: fast })).rejects.toThrow(
      /cloud metadata address/,
    );
  });

  it('does not follow a redirect to another origin (a forbidden address among them)', async () => {
    const h = await startHostileServer(
      (_rpc, res) => void res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
      false,
    );
    try {
      const err = await McpSession.open({ url: h.url, headers: {}, outbound: loopback, limits: fast }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpFailure);
      expect((err as Error).message).toMatch(/Redirect to http:\/\/169\.254\.169\.254\/latest\/meta-data\/ not followed/);
    } finally {
      await h.close();
    }
  });

  it('gives up on a server that hangs: on connect, on the list, on a call', async () => {
    const h = await startHostileServer((rpc, res) => {
      if (rpc.method === 'tools/list') rpcReply(res, rpc.id, { tools: [{ name: 'slow', inputSchema: { type: 'object' } }] });
      // tools/call: never answered
    });
    const silent = await startHostileServer(() => {}, false);
    try {
      const started = performance.now();
      await expect(McpSession.open({ url: silent.url, headers: {}, outbound: loopback, limits: fast })).rejects.toThrow(/timed out/i);
      const session = await McpSession.open({ url: h.url, headers: {}, outbound: loopback, limits: fast });
      expect((await session.listTools()).map((t) => t.name)).toEqual(['slow']);
      expect(await session.call('slow', {})).toEqual({
        error: { type: 'mcp_protocol_error', code: -32001, message: expect.stringMatching(/timed out/i) },
      });
      await session.close();
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await h.close();
      await silent.close();
    }
    const hangList = await startHostileServer(() => {});
    try {
      const session = await McpSession.open({ url: hangList.url, headers: {}, outbound: loopback, limits: fast });
      await expect(session.listTools()).rejects.toThrow(/timed out/i);
      await session.close();
    } finally {
      await hangList.close();
    }
  });

  it('refuses a list too long or too large, and an output too large', async () => {
    const many = Array.from({ length: 2_000 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
    const h = await startHostileServer((rpc, res) => {
      if (rpc.method === 'tools/list') rpcReply(res, rpc.id, { tools: many });
      else rpcReply(res, rpc.id, { content: [{ type: 'text', text: 'x'.repeat(300_000) }] });
    });
    const huge = await startHostileServer((rpc, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":{"tools":[{"name":"a","description":"`);
      const block = 'y'.repeat(64 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < 64 && res.write(block)) sent++;
        if (sent < 64) res.once('drain', pump);
        else res.end('"}]}}');
      };
      pump();
    });
    try {
      const limits = { ...fast, maxTools: 500, maxResponseBytes: 1024 * 1024, maxOutputChars: 100_000 };
      const session = await McpSession.open({ url: h.url, headers: {}, outbound: loopback, limits });
      await expect(session.listTools()).rejects.toThrow('the server lists more than 500 tools');
      expect(await session.call('t1', {})).toEqual({
        error: { type: 'mcp_protocol_error', code: -32603, message: "the tool's output is larger than 100000 characters" },
      });
      await session.close();
      const big = await McpSession.open({ url: huge.url, headers: {}, outbound: loopback, limits });
      await expect(big.listTools()).rejects.toThrow(`the MCP server's answer is larger than ${1024 * 1024} bytes`);
      await big.close();
    } finally {
      await h.close();
      await huge.close();
    }
  });

  it('refuses a server that lies about its tools, and reports a broken answer readably', async () => {
    let answer: unknown = { tools: [{ name: 42 }] };
    const h = await startHostileServer((rpc, res) => {
      if (answer === 'garbage') res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc": "2.0", "id": ');
      else rpcReply(res, rpc.id, answer);
    });
    try {
      const session = await McpSession.open({ url: h.url, headers: {}, outbound: loopback, limits: fast });
      await expect(session.listTools()).rejects.toBeInstanceOf(McpFailure);
      answer = {
        tools: [
          { name: 'a', inputSchema: { type: 'object' } },
          { name: 'a', inputSchema: { type: 'object' } },
        ],
      };
      await expect(session.listTools()).rejects.toThrow("the server lists the tool 'a' twice");
      answer = { tools: [{ name: 'a', inputSchema: 'anything' }] };
      await expect(session.listTools()).rejects.toThrow("the server lists the tool 'a' with an inputSchema that is not an object");
      answer = 'garbage';
      await expect(session.listTools()).rejects.toBeInstanceOf(McpFailure);
      await session.close();
    } finally {
      await h.close();
    }
  });
});
