import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A real MCP server on loopback, made with the official SDK's server (Streamable HTTP, stateless: a
 * server per request), for the Responses API's `mcp` tool: `echo` (read-only), `add`, `fail` (an error
 * result) and `whoami` (the Authorization header it was sent). It counts what it is asked.
 */
export interface TestMcpServer {
  url: string;
  calls: { name: string; arguments: unknown }[];
  lists: number;
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

function mcpServer(state: TestMcpServer, req: IncomingMessage): McpServer {
  const server = new McpServer({ name: 'standin-test-tools', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echoes a text back', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    async ({ text }) => {
      state.calls.push({ name: 'echo', arguments: { text } });
      return { content: [{ type: 'text', text: `echo: ${text}` }] };
    },
  );
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => {
    state.calls.push({ name: 'add', arguments: { a, b } });
    return { content: [{ type: 'text', text: String(a + b) }] };
  });
  server.registerTool('fail', { description: 'Always fails', inputSchema: {} }, async () => {
    state.calls.push({ name: 'fail', arguments: {} });
    return { isError: true, content: [{ type: 'text', text: 'the tool broke' }] };
  });
  server.registerTool('whoami', { description: 'The authorization it was sent', inputSchema: {} }, async () => {
    state.calls.push({ name: 'whoami', arguments: {} });
    return { content: [{ type: 'text', text: String(req.headers.authorization ?? 'nobody') }] };
  });
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

const closer = (server: Server) => () =>
  new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  });

/** Starts the test MCP server on a free loopback port. */
export async function startTestMcpServer(): Promise<TestMcpServer> {
  const state: TestMcpServer = { url: '', calls: [], lists: 0, headers: [], close: async () => {} };
  const { server, url } = await listen((req, res) => {
    void (async () => {
      try {
        if (req.method !== 'POST') {
          res.writeHead(405).end();
          return;
        }
        state.headers.push(req.headers);
        const body = await readBody(req);
        if ((body as { method?: string } | undefined)?.method === 'tools/list') state.lists++;
        const mcp = mcpServer(state, req);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => {
          void transport.close();
          void mcp.close();
        });
        await mcp.connect(transport);
        await transport.handleRequest(req, res, body);
      } catch (err) {
        if (!res.headersSent) res.writeHead(500).end(String(err));
      }
    })();
  });
  state.url = url;
  state.close = closer(server);
  return state;
}

/**
 * A hostile "MCP server": each request goes to `handler`, which may lie, hang, flood or redirect.
 * `initialize` is answered properly when `honestInit` is set, so the hostility meets the list or the call.
 */
export async function startHostileServer(
  handler: (rpc: { method?: string; id?: unknown }, res: ServerResponse) => void,
  honestInit = true,
): Promise<{ url: string; close(): Promise<void> }> {
  const { server, url } = await listen((req, res) => {
    void (async () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const rpc = ((await readBody(req).catch(() => undefined)) ?? {}) as { method?: string; id?: unknown };
      if (honestInit && rpc.method === 'initialize') return rpcReply(res, rpc.id, INIT_RESULT);
      if (honestInit && rpc.method === 'notifications/initialized') return void res.writeHead(202).end();
      handler(rpc, res);
    })();
  });
  return { url, close: closer(server) };
}

export const INIT_RESULT = {
  protocolVersion: '2025-06-18',
  capabilities: { tools: {} },
  serverInfo: { name: 'hostile', version: '1.0.0' },
};

/** A JSON-RPC result as a JSON answer. */
export function rpcReply(res: ServerResponse, id: unknown, result: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
}
