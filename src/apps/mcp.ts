import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike, Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities, JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

/** The MCP SDK (with zod) loads on the first connection, not at Standin's start. */
const sdk = () => (loaded ??= loadSdk());
let loaded: ReturnType<typeof loadSdk> | undefined;
const loadSdk = async () => {
  const [client, sse, stdio, http, types, z] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('zod/v4'),
  ]);
  // tools/list exactly as sent: the SDK's schema strips members it does not know (the spec's top-level
  // securitySchemes among them), which the lint must see.
  const RawToolList = z.object({ tools: z.array(z.looseObject({ name: z.string() })), nextCursor: z.string().optional() }).loose();
  return { ...client, ...sse, ...stdio, ...http, CallToolResultSchema: types.CallToolResultSchema, RawToolList };
};
import { templateUri, type ResourceContent, type ToolDescriptor } from './lint/descriptor.js';

export { templateUri };

/** Where an MCP server is: a URL (Streamable HTTP, or SSE) or a local command run over stdio. */
export type ServerSpec =
  { kind: 'url'; url: string; transport: 'auto' | 'http' | 'sse' } | { kind: 'stdio'; command: string; args: string[]; cwd?: string };

/** Reads `<server>` as the CLI and the host page give it: a http(s) URL, `sse+http://…`, or a shell-like command line. */
export function parseServerSpec(raw: string, transport: 'auto' | 'http' | 'sse' | 'stdio' = 'auto'): ServerSpec {
  const s = raw.trim();
  if (!s) throw new Error('the server is empty: give a URL (http://…/mcp) or a command (node server.js)');
  const sse = /^sse\+(https?:\/\/.*)$/i.exec(s);
  if (sse) return { kind: 'url', url: sse[1], transport: 'sse' };
  if (/^https?:\/\//i.test(s) && transport !== 'stdio') {
    new URL(s); // throws a readable error on a malformed URL
    return { kind: 'url', url: s, transport: transport === 'auto' ? 'auto' : transport };
  }
  const words = splitCommand(s);
  return { kind: 'stdio', command: words[0], args: words.slice(1) };
}

/** Splits a command line on spaces, honouring single and double quotes and backslash escapes. */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | null = null;
  let has = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else cur += c;
  }
  if (quote) throw new Error(`unterminated ${quote} quote in the server command`);
  if (has || cur) out.push(cur);
  return out;
}

/** A human label of a server spec, for output. */
export const describeServer = (s: ServerSpec) => (s.kind === 'url' ? s.url : [s.command, ...s.args].join(' '));

export interface ConnectOptions {
  vendor: string;
  /** BCP 47 locale sent as `_meta[<vendor>/locale]` on initialize. */
  locale?: string;
  clientName?: string;
  timeoutMs?: number;
  /** Where a stdio server's stderr goes (default: ignored). */
  stderr?: 'inherit' | 'ignore' | 'pipe';
  /** The fetch of URL transports (the app host passes one through the SSRF-guarded outbound client). */
  fetch?: FetchLike;
  /** Advertise the MCP Apps extension and send the locale on initialize (default true; the Responses API's `mcp` tool renders no app). */
  apps?: boolean;
}

/**
 * Wraps a transport so the `initialize` request carries `_meta[<vendor>/locale]` (the spec's client metadata on
 * initialize), which the SDK's Client has no option for.
 */
class InitializeMetaTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  constructor(
    private inner: Transport,
    private meta: Record<string, unknown>,
  ) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => this.onerror?.(e);
    inner.onmessage = (m, extra) => this.onmessage?.(m, extra);
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  start() {
    return this.inner.start();
  }
  close() {
    return this.inner.close();
  }
  send(message: JSONRPCMessage, options?: TransportSendOptions) {
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      const params = message.params ?? {};
      const meta = isRecord(params._meta) ? params._meta : {};
      message = { ...message, params: { ...params, _meta: { ...meta, ...this.meta } } };
    }
    return this.inner.send(message, options);
  }
  setProtocolVersion(v: string) {
    this.inner.setProtocolVersion?.(v);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The MCP Apps extension, advertised on initialize with the component MIME types this host renders. */
const CAPABILITIES: ClientCapabilities = {
  extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app', 'text/html+skybridge'] } },
};

/** The environment of a local server: the user's shell environment (servers read their own keys there), minus Standin's own settings and secrets. */
function serverEnv(getDefaultEnvironment: () => Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { ...getDefaultEnvironment() };
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('STANDIN_')) env[k] = v;
  return env;
}

/** Connects an MCP client to a server, advertising the MCP Apps extension; for `auto` URLs, Streamable HTTP then SSE. */
export async function connectServer(spec: ServerSpec, opts: ConnectOptions): Promise<Client> {
  const { Client, SSEClientTransport, StdioClientTransport, StreamableHTTPClientTransport, getDefaultEnvironment } = await sdk();
  const apps = opts.apps !== false;
  const meta = apps ? { [`${opts.vendor}/locale`]: opts.locale ?? 'en-US' } : {};
  const make = () => new Client({ name: opts.clientName ?? 'standin', version: '0.1.0' }, { capabilities: apps ? CAPABILITIES : {} });
  const timeout = opts.timeoutMs ?? 15_000;
  const attempt = async (t: Transport) => {
    const client = make();
    await withTimeout(client.connect(new InitializeMetaTransport(t, meta), { timeout }), timeout, `connecting to ${describeServer(spec)}`);
    return client;
  };
  if (spec.kind === 'stdio') {
    return attempt(
      new StdioClientTransport({
        command: spec.command,
        args: spec.args,
        cwd: spec.cwd,
        env: serverEnv(getDefaultEnvironment),
        stderr: opts.stderr ?? 'ignore',
      }),
    );
  }
  const url = new URL(spec.url);
  const http = { fetch: opts.fetch };
  if (spec.transport === 'sse') return attempt(new SSEClientTransport(url, http));
  try {
    return await attempt(new StreamableHTTPClientTransport(url, http));
  } catch (err) {
    if (spec.transport === 'http') throw err;
    // Older servers speak only the HTTP+SSE transport (a GET that opens an event stream).
    try {
      return await attempt(new SSEClientTransport(url, http));
    } catch {
      throw err;
    }
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms ${what}`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Lists every tool, following `nextCursor` (bounded: 100 pages, and `maxTools` tools when given). */
export async function listAllTools(client: Client, limits: { maxTools?: number; timeoutMs?: number } = {}): Promise<ToolDescriptor[]> {
  const tools: ToolDescriptor[] = [];
  const { RawToolList } = await sdk();
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, RawToolList, { timeout: limits.timeoutMs });
    tools.push(...r.tools);
    if (limits.maxTools !== undefined && tools.length > limits.maxTools)
      throw new Error(`the server lists more than ${limits.maxTools} tools`);
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/** Reads a UI template; returns its contents or the error message. */
export async function readTemplate(client: Client, uri: string): Promise<{ contents?: ResourceContent[]; error?: string }> {
  try {
    const r = await client.readResource({ uri });
    return { contents: r.contents as ResourceContent[] };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * Calls a tool and returns the result exactly as the server sent it. (The SDK's `callTool` throws when
 * structuredContent misses the outputSchema; the host and the lint need to see such results.)
 */
export async function callToolRaw(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  meta?: Record<string, unknown>,
  timeoutMs = 60_000,
): Promise<Record<string, unknown>> {
  const params = meta && Object.keys(meta).length ? { name, arguments: args, _meta: meta } : { name, arguments: args };
  const { CallToolResultSchema } = await sdk();
  return await client.request({ method: 'tools/call', params }, CallToolResultSchema, { timeout: timeoutMs });
}
