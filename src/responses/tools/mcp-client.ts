import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { callToolRaw, connectServer, listAllTools, mcpFetch } from '../../apps/service.js';
import type { Outbound } from '../../core/outbound.js';

/**
 * A session of the Responses API's MCP client with one remote server (Streamable HTTP, or the older
 * HTTP+SSE transport): the app host's MCP client, with every connection through the outbound guard
 * (the operator's allow list), the request's headers, and bounds on time, on the size of each answer and
 * on the number of tools. A server is untrusted: whatever it does ends in an `McpFailure` with a
 * readable message, or a call's error, never in a crash or a wait without end.
 */

export interface McpLimits {
  /** Connecting (initialize), per transport tried. */
  connectMs: number;
  /** Listing the tools, all pages. */
  listMs: number;
  /** One tool call. */
  callMs: number;
  /** Tools a server may list. */
  maxTools: number;
  /** Bytes of one HTTP answer of the server (a JSON reply, or an event stream over its life). */
  maxResponseBytes: number;
  /** Characters of a call's output. */
  maxOutputChars: number;
}

export const MCP_LIMITS: McpLimits = {
  connectMs: 10_000,
  listMs: 15_000,
  callMs: 60_000,
  maxTools: 500,
  maxResponseBytes: 8 * 1024 * 1024,
  maxOutputChars: 1024 * 1024,
};

/** A tool as `mcp_list_tools` lists it (MCPListToolsTool). */
export interface McpListedTool {
  name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  annotations: Record<string, unknown> | null;
}

/** The error of a call (MCPToolCallError): the server's JSON-RPC error, its HTTP status, or the tool's own error result. */
export type McpCallError =
  | { type: 'mcp_protocol_error'; code: number; message: string }
  | { type: 'http_error'; code: number; message: string }
  | { type: 'mcp_tool_execution_error'; content: unknown };

export type McpCallOutcome = { output: string } | { error: McpCallError };

/** A server that could not be reached, listed or understood; the message says why, for the API's user. */
export class McpFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpFailure';
  }
}

export interface McpSessionOptions {
  url: string;
  headers: Record<string, string>;
  outbound: Outbound;
  limits?: Partial<McpLimits>;
}

const MESSAGE_CHARS = 300;
const clip = (s: string, n = MESSAGE_CHARS) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** What went wrong, in one readable line: the guard's refusal or a limit when one is behind it. */
export function describeFailure(err: unknown): string {
  const seen = new Set<unknown>();
  let e: unknown = err;
  let first: string | undefined;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    const x = e as { code?: unknown; message?: unknown; cause?: unknown; name?: unknown; constructor?: { name?: string } };
    if (x.code === 'ERR_SSRF_BLOCKED' || x.name === 'McpLimitError') return clip(String(x.message));
    // The transport's HTTP errors: the status first, then what the server said.
    if (x.constructor?.name === 'StreamableHTTPError' && typeof x.code === 'number' && x.code >= 100)
      return clip(`HTTP ${x.code}: ${String(x.message).replace(/^Streamable HTTP error: /, '')}`);
    first ??= typeof x.message === 'string' && x.message ? x.message : undefined;
    e = x.cause;
  }
  return clip(first ?? String(err));
}

class McpLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpLimitError';
  }
}

/** HTTP statuses whose responses carry no body (a Response made with one refuses a body). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The answer with its body cut off, in error, past `max` bytes. */
function capped(res: Response, max: number): Response {
  if (!res.body || NULL_BODY.has(res.status)) return res;
  let seen = 0;
  const counted = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctl) {
        seen += chunk.byteLength;
        if (seen > max) ctl.error(new McpLimitError(`the MCP server's answer is larger than ${max} bytes`));
        else ctl.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** The fetch of one session: the guarded one, with the request's headers, each answer capped, all stopped by `signal`. */
function sessionFetch(outbound: Outbound, headers: Record<string, string>, maxBytes: number, signal: AbortSignal): FetchLike {
  const base = mcpFetch(outbound);
  return async (url, init) => {
    const h = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    const own = init?.signal ? AbortSignal.any([init.signal, signal]) : signal;
    const res = await base(url, { ...init, headers: h, signal: own });
    return capped(res, maxBytes);
  };
}

/** The text of a tool's result: its text parts, a line for each other part, or its structured content. */
function outputText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  const parts = content.map((c) => {
    switch (c?.type) {
      case 'text':
        return String(c.text ?? '');
      case 'resource': {
        const r = (c.resource ?? {}) as Record<string, unknown>;
        return typeof r.text === 'string' ? r.text : `[resource: ${String(r.uri ?? '')}]`;
      }
      case 'resource_link':
        return `[resource: ${String(c.uri ?? '')}]`;
      default:
        return `[${String(c?.type ?? 'content')}${typeof c?.mimeType === 'string' ? `: ${c.mimeType}` : ''}]`;
    }
  });
  if (!parts.length && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A listed tool in the document's shape; a server that lists something else is refused with the reason. */
function listedTool(raw: Record<string, unknown>, index: number): McpListedTool {
  const name = raw.name;
  if (typeof name !== 'string' || !name || name.length > 128)
    throw new McpFailure(`the server lists a tool (number ${index + 1}) without a valid name (1 to 128 characters)`);
  const schema = raw.inputSchema;
  if (schema !== undefined && !isRecord(schema))
    throw new McpFailure(`the server lists the tool '${clip(name, 128)}' with an inputSchema that is not an object`);
  return {
    name,
    description: typeof raw.description === 'string' ? raw.description : null,
    input_schema: schema ?? { type: 'object', properties: {} },
    annotations: isRecord(raw.annotations) ? raw.annotations : null,
  };
}

/** One connected session with a server; `close()` ends it and everything it still has open. */
export class McpSession {
  private constructor(
    private client: Client,
    private abort: AbortController,
    private limits: McpLimits,
  ) {}

  /** Connects (Streamable HTTP, then SSE), within the connect limit. */
  static async open(opts: McpSessionOptions): Promise<McpSession> {
    const limits = { ...MCP_LIMITS, ...opts.limits };
    const abort = new AbortController();
    const fetch = sessionFetch(opts.outbound, opts.headers, limits.maxResponseBytes, abort.signal);
    try {
      const client = await connectServer(
        { kind: 'url', url: opts.url, transport: 'auto' },
        { vendor: 'vendor', apps: false, clientName: 'standin-responses', timeoutMs: limits.connectMs, fetch },
      );
      return new McpSession(client, abort, limits);
    } catch (err) {
      abort.abort();
      throw new McpFailure(describeFailure(err));
    }
  }

  /** The server's tools (every page), checked and bounded. */
  async listTools(): Promise<McpListedTool[]> {
    let raw;
    try {
      raw = await withDeadline(
        listAllTools(this.client, { maxTools: this.limits.maxTools, timeoutMs: this.limits.listMs }),
        this.limits.listMs,
        'listing the tools',
      );
    } catch (err) {
      throw new McpFailure(describeFailure(err));
    }
    const tools = raw.map((t, i) => listedTool(t as unknown as Record<string, unknown>, i));
    const names = new Set<string>();
    for (const t of tools) {
      if (names.has(t.name)) throw new McpFailure(`the server lists the tool '${clip(t.name, 128)}' twice`);
      names.add(t.name);
    }
    return tools;
  }

  /** Calls a tool: its output text, or the error the server or the tool gave (never throws). */
  async call(name: string, args: Record<string, unknown>): Promise<McpCallOutcome> {
    let result: Record<string, unknown>;
    try {
      result = await withDeadline(
        callToolRaw(this.client, name, args, undefined, this.limits.callMs),
        this.limits.callMs,
        `calling '${name}'`,
      );
    } catch (err) {
      return { error: callError(err) };
    }
    if (result.isError === true) return { error: { type: 'mcp_tool_execution_error', content: result.content ?? [] } };
    const output = outputText(result);
    if (output.length > this.limits.maxOutputChars)
      return {
        error: {
          type: 'mcp_protocol_error',
          code: -32603,
          message: `the tool's output is larger than ${this.limits.maxOutputChars} characters`,
        },
      };
    return { output };
  }

  async close(): Promise<void> {
    try {
      await withDeadline(this.client.close(), 2_000, 'closing');
    } catch {
      // A server that does not let go is cut off below.
    } finally {
      this.abort.abort();
    }
  }
}

/** The error of a failed call in the document's union: the server's JSON-RPC error, its HTTP status, or a protocol error. */
function callError(err: unknown): McpCallError {
  const e = err as { name?: unknown; code?: unknown; message?: unknown; constructor?: { name?: string } };
  const message = describeFailure(err);
  if (e?.name === 'McpError' && typeof e.code === 'number') return { type: 'mcp_protocol_error', code: e.code, message };
  if (e?.constructor?.name === 'StreamableHTTPError' && typeof e.code === 'number' && e.code >= 100)
    return { type: 'http_error', code: e.code, message };
  // Connection lost, refused or cut by a limit: the JSON-RPC "connection closed" code.
  return { type: 'mcp_protocol_error', code: -32000, message };
}

/** A hard stop for a step, should the server keep the SDK waiting past its own timeouts. */
async function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new McpLimitError(`timed out after ${ms} ms ${what}`)), ms + 1_000))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
