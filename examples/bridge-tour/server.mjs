#!/usr/bin/env node
// The bridge tour: an MCP app (built on @modelcontextprotocol/sdk) whose component uses every global and method of
// the window.<vendor> bridge, plus a component written with the MCP Apps App class (@modelcontextprotocol/ext-apps).
//
//   node examples/bridge-tour/server.mjs                 stdio
//   node examples/bridge-tour/server.mjs --http 3001     Streamable HTTP at /mcp, SSE at /sse
//
// Options: --vendor <name> (default $STANDIN_VENDOR or "vendor"), --connect-domain <origin> (repeatable: origins the
// board component may fetch; everything else is blocked by the host's CSP).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  McpError,
  ErrorCode,
} from '@modelcontextprotocol/sdk/types.js';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const V = flag('vendor') ?? process.env.STANDIN_VENDOR ?? 'vendor';
const connectDomains = argv.flatMap((a, i) => (a === '--connect-domain' ? [argv[i + 1]] : []));

const BOARD = 'ui://tour/board.html';
const EXT = 'ui://tour/ext-app.html';

// ---------------------------------------------------------------------------------------------- state

let cards = [
  { id: 'c1', title: 'Write the spec', column: 'done' },
  { id: 'c2', title: 'Build the host', column: 'doing' },
];
let nextId = 3;
const boardOutput = (board = 'team') => ({ board, cards });

// ---------------------------------------------------------------------------------------------- descriptors

const fileObject = {
  type: 'object',
  properties: {
    download_url: { type: 'string' },
    file_id: { type: 'string' },
    mime_type: { type: 'string' },
    file_name: { type: 'string' },
  },
  required: ['download_url', 'file_id'],
};
const boardSchema = {
  type: 'object',
  properties: {
    board: { type: 'string' },
    cards: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, title: { type: 'string' }, column: { type: 'string' } },
        required: ['id', 'title', 'column'],
      },
    },
  },
  required: ['board', 'cards'],
};
const noauth = [{ type: 'noauth' }];
const ui = (extra = {}) => ({ ui: { resourceUri: BOARD, ...extra }, [`${V}/outputTemplate`]: BOARD, securitySchemes: noauth });

const tools = [
  {
    name: 'show_board',
    title: 'Show the board',
    description: 'Shows the cards of a kanban board.',
    inputSchema: { type: 'object', properties: { board: { type: 'string', default: 'team' } } },
    outputSchema: boardSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false, idempotentHint: true },
    securitySchemes: noauth,
    _meta: {
      ...ui({ visibility: ['model', 'app'] }),
      [`${V}/toolInvocation/invoking`]: 'Opening the board',
      [`${V}/toolInvocation/invoked`]: 'Board opened',
      [`${V}/widgetAccessible`]: true,
    },
  },
  {
    name: 'add_card',
    title: 'Add a card',
    description: 'Adds a card to the board.',
    inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
    outputSchema: boardSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    securitySchemes: noauth,
    _meta: ui(),
  },
  {
    name: 'delete_card',
    title: 'Delete a card',
    description: 'Deletes a card; it cannot be restored.',
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    outputSchema: boardSchema,
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    securitySchemes: noauth,
    _meta: ui(),
  },
  {
    name: 'refresh_board',
    title: 'Refresh the board',
    description: 'Reloads the cards (for the component only).',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: boardSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    securitySchemes: noauth,
    _meta: { ...ui({ visibility: ['app'] }) },
  },
  {
    name: 'board_stats',
    title: 'Board statistics',
    description: 'Counts cards per column (for the model only).',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: {
      type: 'object',
      properties: { counts: { type: 'object', additionalProperties: { type: 'integer' } } },
      required: ['counts'],
    },
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    securitySchemes: noauth,
    _meta: { ui: { visibility: ['model'] }, securitySchemes: noauth },
  },
  {
    name: 'describe_file',
    title: 'Describe a file',
    description: 'Reads an uploaded file and describes it.',
    inputSchema: { type: 'object', properties: { file: fileObject }, required: ['file'] },
    outputSchema: {
      type: 'object',
      properties: { file_name: { type: 'string' }, mime_type: { type: 'string' }, size: { type: 'integer' }, text: { type: 'string' } },
      required: ['size'],
    },
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    securitySchemes: noauth,
    _meta: { [`${V}/fileParams`]: ['file'], securitySchemes: noauth },
  },
  {
    name: 'whoami',
    title: 'Current profile',
    description: 'Returns the signed-in profile (needs sign-in).',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    securitySchemes: [{ type: 'oauth2', scopes: ['profile'] }],
    _meta: { [`${V}/profile`]: true, securitySchemes: [{ type: 'oauth2', scopes: ['profile'] }] },
  },
  {
    name: 'ext_app_demo',
    title: 'MCP Apps standard component',
    description: 'Renders a component built with the ext-apps App class.',
    inputSchema: { type: 'object', properties: { greeting: { type: 'string', default: 'hello' } } },
    outputSchema: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] },
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    securitySchemes: noauth,
    _meta: { ui: { resourceUri: EXT }, securitySchemes: noauth },
  },
  {
    name: 'reset_greeting',
    title: 'Reset the greeting (standard component, needs approval)',
    description: 'Resets the greeting; destructive, so the host asks first.',
    inputSchema: { type: 'object', properties: { greeting: { type: 'string' } } },
    outputSchema: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    securitySchemes: noauth,
    _meta: { ui: { resourceUri: EXT }, securitySchemes: noauth },
  },
];

// ---------------------------------------------------------------------------------------------- tool calls

async function call(name, args) {
  const text = (t) => [{ type: 'text', text: t }];
  switch (name) {
    case 'show_board':
    case 'refresh_board': {
      const out = boardOutput(args.board);
      return { content: text(`${out.cards.length} cards`), structuredContent: out, _meta: { secret: 'only the component sees this' } };
    }
    case 'add_card':
      if (typeof args.title !== 'string' || !args.title.trim())
        throw new McpError(ErrorCode.InvalidParams, 'title must be a non-blank string');
      cards = [...cards, { id: `c${nextId++}`, title: args.title, column: 'todo' }];
      return { content: text(`Added ${args.title}`), structuredContent: boardOutput() };
    case 'delete_card':
      cards = cards.filter((c) => c.id !== args.id);
      return { content: text(`Deleted ${args.id}`), structuredContent: boardOutput() };
    case 'board_stats': {
      const counts = {};
      for (const c of cards) counts[c.column] = (counts[c.column] ?? 0) + 1;
      return { content: text(JSON.stringify(counts)), structuredContent: { counts } };
    }
    case 'describe_file': {
      const f = args.file;
      if (!f?.download_url) throw new McpError(ErrorCode.InvalidParams, 'file.download_url is required');
      const r = await fetch(f.download_url);
      const bytes = Buffer.from(await r.arrayBuffer());
      const out = { file_name: f.file_name, mime_type: f.mime_type, size: bytes.length, text: bytes.toString('utf8').slice(0, 200) };
      return { content: text(`${out.file_name}: ${out.size} bytes`), structuredContent: out };
    }
    case 'whoami':
      return {
        isError: true,
        content: text('Sign in to see your profile.'),
        _meta: {
          'mcp/www_authenticate': [
            'Bearer resource_metadata="https://tour.example/.well-known/oauth-protected-resource", error="insufficient_scope", scope="profile"',
          ],
        },
      };
    case 'ext_app_demo':
      return { content: text(`echo ${args.greeting ?? 'hello'}`), structuredContent: { echo: String(args.greeting ?? 'hello') } };
    case 'reset_greeting':
      return { content: text('reset'), structuredContent: { echo: 'reset' } };
    default:
      throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
  }
}

// ---------------------------------------------------------------------------------------------- resources

let extHtml;
async function extAppHtml() {
  if (!extHtml) {
    const r = await build({
      entryPoints: [join(here, 'ext-app.js')],
      bundle: true,
      format: 'iife',
      write: false,
      minify: true,
      target: 'chrome110',
      logLevel: 'silent',
    });
    const js = r.outputFiles[0].text.replace(/<\/script/gi, '<\\/script');
    extHtml = `<!doctype html><html><head><meta charset="utf-8"><title>ext-apps demo</title></head><body><h1>MCP Apps standard component</h1><p>input: <code id="input">null</code></p><p>result: <code id="result">null</code></p><p>context: <code id="context">null</code></p><script>${js}</script></body></html>`;
  }
  return extHtml;
}

const boardMeta = () => ({
  ui: { csp: { connectDomains, resourceDomains: [] }, domain: 'https://tour.example', prefersBorder: true },
  [`${V}/widgetCSP`]: { connect_domains: connectDomains, resource_domains: [], redirect_domains: ['https://redirect.example'] },
  [`${V}/widgetDescription`]: 'A kanban board: the user sees the cards and can add, select and open them.',
});

async function read(uri) {
  if (uri === BOARD)
    return {
      uri,
      mimeType: 'text/html+skybridge',
      text: readFileSync(join(here, 'board.html'), 'utf8').replace(/__VENDOR__/g, V),
      _meta: boardMeta(),
    };
  if (uri === EXT)
    return {
      uri,
      mimeType: 'text/html;profile=mcp-app',
      text: await extAppHtml(),
      _meta: { ui: { domain: 'https://ext.tour.example', prefersBorder: false, csp: { connectDomains: [], resourceDomains: [] } } },
    };
  throw new McpError(ErrorCode.InvalidParams, `no resource ${uri}`);
}

// ---------------------------------------------------------------------------------------------- server

function makeServer() {
  const server = new Server({ name: 'bridge-tour', version: '1.0.0' }, { capabilities: { tools: {}, resources: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const r = await call(req.params.name, req.params.arguments ?? {});
    // Echo the client metadata the host sent, so the tour (and the tests) can see it arrive.
    r._meta = { ...(r._meta ?? {}), receivedMeta: req.params._meta ?? null };
    return r;
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [
      { uri: BOARD, name: 'board', mimeType: 'text/html+skybridge' },
      { uri: EXT, name: 'ext-app', mimeType: 'text/html;profile=mcp-app' },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => ({ contents: [await read(req.params.uri)] }));
  return server;
}

const port = flag('http');
if (port === undefined) {
  await makeServer().connect(new StdioServerTransport());
} else {
  const sse = new Map();
  const http = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    try {
      if (url.pathname === '/mcp') {
        // Stateless Streamable HTTP: one server and transport per request.
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        const server = makeServer();
        res.on('close', () => void transport.close());
        await server.connect(transport);
        let body;
        if (req.method === 'POST') {
          const chunks = [];
          for await (const c of req) chunks.push(c);
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
        }
        return await transport.handleRequest(req, res, body);
      }
      if (url.pathname === '/sse' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res);
        sse.set(transport.sessionId, transport);
        res.on('close', () => sse.delete(transport.sessionId));
        return await makeServer().connect(transport);
      }
      if (url.pathname === '/messages' && req.method === 'POST') {
        const t = sse.get(url.searchParams.get('sessionId'));
        if (!t) return res.writeHead(404).end('unknown session');
        return await t.handlePostMessage(req, res);
      }
      res.writeHead(404).end('not found');
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  http.listen(Number(port), '127.0.0.1', () => {
    const a = http.address();
    process.stdout.write(`bridge tour listening: http://127.0.0.1:${a.port}/mcp (Streamable HTTP), http://127.0.0.1:${a.port}/sse (SSE)\n`);
  });
}
