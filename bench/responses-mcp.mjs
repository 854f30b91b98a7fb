// An MCP call's overhead in a response over the MCP client alone, on the built-in model. Interleaved in
// the same run, one request at a time: (a) the official SDK's client alone against the same loopback
// server (connect, list the tools, call one, close: what a response with an `mcp` tool does at least),
// (b) a response with the `mcp` tool whose rule calls that tool (list, call, answer), (c) a plain
// response (the model alone), and (d)/(e) the same with the list reused (previous_response_id) against
// the client doing connect, call, close. Overhead = b − c − a (and d − c − e): what Standin adds.
// Run: npm run build && node bench/responses-mcp.mjs   (BENCH_MCP_N=200 by default)
import { createServer } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { cpuMs, report, startStandin } from './lib.mjs';

const N = Number(process.env.BENCH_MCP_N ?? 200);
const ADMIN_KEY = 'sk-admin-bench-mcp-0000000000000000000000';
const MODEL = 'gpt-4o-mini';

// The MCP server: the official SDK's, stateless Streamable HTTP with JSON answers, one tool.
const http = createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  const server = new McpServer({ name: 'bench', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes a text', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => void transport.close());
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
});
await new Promise((r) => http.listen(0, '127.0.0.1', r));
const mcpUrl = `http://127.0.0.1:${http.address().port}/mcp`;

const standin = await startStandin({ env: { STANDIN_ADMIN_KEY: ADMIN_KEY } });
const stopAll = async () => {
  await standin.stop();
  http.closeAllConnections();
  http.close();
};
process.on('uncaughtException', async (err) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
const admin = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
const cfg = await fetch(`${standin.url}/admin/v1/config`, {
  method: 'POST',
  headers: admin,
  body: JSON.stringify({
    rate_limits: { organizations: { org_demo: { tier: 'tier_5' } } },
    models: {
      '*': {
        provider: 'builtin',
        rules: [
          { match: 'echo hello', tool_calls: [{ name: 'echo', arguments: { text: 'hello' } }], after_tool_outputs: 'It said {{output}}.' },
        ],
      },
    },
  }),
});
if (cfg.status !== 200) throw new Error(`could not configure: ${cfg.status} ${await cfg.text()}`);

const headers = { authorization: `Bearer ${standin.keys.platform}`, 'content-type': 'application/json' };
const post = async (body) => {
  const res = await fetch(`${standin.url}/v1/responses`, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(json)}`);
  return json;
};
const tools = [{ type: 'mcp', server_label: 'bench', server_url: mcpUrl, require_approval: 'never' }];

async function clientAlone(list) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  if (list) await client.listTools();
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
  await client.close();
  if (r.content[0].text !== 'echo: hello') throw new Error('unexpected tool result');
}
const timed = async (f) => {
  const t0 = performance.now();
  const out = await f();
  return { ms: performance.now() - t0, out };
};

// Warm up (JIT, the SDK's modules in both processes, connections).
let previous;
for (let i = 0; i < 30; i++) {
  await clientAlone(true);
  previous = (await post({ model: MODEL, input: 'Please echo hello', tools })).id;
  await post({ model: MODEL, input: 'Please echo hello' });
}

const S = { a: [], b: [], c: [], d: [], e: [] };
const cpu = { b: 0, c: 0 };
for (let i = 0; i < N; i++) {
  S.a.push((await timed(() => clientAlone(true))).ms);
  let t = cpuMs(standin.child.pid);
  const b = await timed(() => post({ model: MODEL, input: 'Please echo hello', tools }));
  cpu.b += cpuMs(standin.child.pid) - t;
  if (b.out.output.map((o) => o.type).join() !== 'mcp_list_tools,mcp_call,message') throw new Error(JSON.stringify(b.out.output));
  S.b.push(b.ms);
  t = cpuMs(standin.child.pid);
  S.c.push((await timed(() => post({ model: MODEL, input: 'Please echo hello' }))).ms);
  cpu.c += cpuMs(standin.child.pid) - t;
  const d = await timed(() => post({ model: MODEL, input: 'Please echo hello', tools, previous_response_id: previous }));
  if (d.out.output[0].type !== 'mcp_call') throw new Error('the list was not reused');
  S.d.push(d.ms);
  S.e.push((await timed(() => clientAlone(false))).ms);
}
await stopAll();

const p50 = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
};
const r2 = (x) => Math.round(x * 100) / 100;
const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((k) => p50(S[k]));
report('responses-mcp', [
  {
    case: 'list + call (a new server)',
    'MCP client alone p50 (ms)': r2(a),
    'response with mcp p50 (ms)': r2(b),
    'plain response p50 (ms)': r2(c),
    'overhead p50 (ms) = response − plain − client': r2(b - c - a),
    'response / (plain + client)': r2(b / (c + a)),
    'Standin CPU per response (ms), mcp / plain': `${r2(cpu.b / N)} / ${r2(cpu.c / N)}`,
  },
  {
    case: 'call, list reused (previous_response_id)',
    'MCP client alone p50 (ms)': r2(e),
    'response with mcp p50 (ms)': r2(d),
    'plain response p50 (ms)': r2(c),
    'overhead p50 (ms) = response − plain − client': r2(d - c - e),
    'response / (plain + client)': r2(d / (c + e)),
    'Standin CPU per response (ms), mcp / plain': '',
  },
]);
