import { Type, type Static, type TSchema } from 'typebox';
import { invalid } from '../../core/errors.js';

/**
 * The `mcp` tool of a request (MCPTool of the official document): which remote MCP server, how to reach
 * it, which of its tools the model may use and which need a human's approval first. docs/responses.md,
 * "Remote MCP servers".
 */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** MCPToolFilter: tools by name, and/or by their `readOnlyHint` annotation. */
const ToolFilter = Type.Object(
  {
    tool_names: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 1000 })),
    read_only: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ToolFilter = Static<typeof ToolFilter>;

/** A label names the server in items and in the functions the model is offered: letters, digits, `_` and `-`. */
export const LABEL_PATTERN = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';

export const McpTool = Type.Object(
  {
    type: Type.Literal('mcp'),
    server_label: Type.String({ pattern: LABEL_PATTERN }),
    server_url: Type.Optional(Type.String({ maxLength: 2048 })),
    connector_id: Type.Optional(Type.String({ maxLength: 64 })),
    tunnel_id: Type.Optional(Type.String({ maxLength: 64 })),
    authorization: Type.Optional(Nullable(Type.String({ maxLength: 16_384 }))),
    server_description: Type.Optional(Nullable(Type.String({ maxLength: 8192 }))),
    headers: Type.Optional(
      Nullable(Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 16_384 }), { maxProperties: 32 })),
    ),
    allowed_tools: Type.Optional(Nullable(Type.Union([Type.Array(Type.String({ maxLength: 128 }), { maxItems: 1000 }), ToolFilter]))),
    allowed_callers: Type.Optional(Nullable(Type.Array(Type.Enum(['direct', 'programmatic']), { minItems: 1, maxItems: 2 }))),
    require_approval: Type.Optional(
      Nullable(
        Type.Union([
          Type.Enum(['always', 'never']),
          Type.Object({ always: Type.Optional(ToolFilter), never: Type.Optional(ToolFilter) }, { additionalProperties: false }),
        ]),
      ),
    ),
    defer_loading: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type McpTool = Static<typeof McpTool>;

/** What Standin knows of a listed tool when it applies the filters: its name and annotations. */
export interface ListedTool {
  name: string;
  annotations?: unknown;
}

/** Headers the MCP transport itself sets: a request may not replace them. */
const TRANSPORT_HEADERS = new Set([
  'accept',
  'connection',
  'content-length',
  'content-type',
  'host',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-session-id',
  'transfer-encoding',
  'upgrade',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The rules of an `mcp` tool the schema cannot say: a server URL (http or https, no credentials in it),
 * not a hosted connector or tunnel (the platform's own), headers that are headers, one credential.
 * `at` is the tool's place in the request (`tools[2]`).
 */
export function checkMcpTool(tool: McpTool, at: string): void {
  if (tool.connector_id !== undefined)
    throw invalid(
      `'${at}.connector_id' '${tool.connector_id}' names one of the platform's hosted connectors, which Standin does not have; give 'server_url' of an MCP server instead (docs/responses.md).`,
      `${at}.connector_id`,
      'unsupported_value',
    );
  if (tool.tunnel_id !== undefined)
    throw invalid(
      `'${at}.tunnel_id' names a Secure MCP Tunnel of the platform, which Standin does not have; give 'server_url' instead (docs/responses.md).`,
      `${at}.tunnel_id`,
      'unsupported_value',
    );
  if (tool.defer_loading === true)
    throw invalid(
      `'${at}.defer_loading' needs tool search, which Standin does not run; leave it out (docs/responses.md).`,
      `${at}.defer_loading`,
      'unsupported_value',
    );
  if (tool.server_url === undefined)
    throw invalid(`Missing required parameter: '${at}.server_url'.`, `${at}.server_url`, 'missing_required_parameter');
  let url: URL;
  try {
    url = new URL(tool.server_url);
  } catch {
    throw invalid(`'${at}.server_url' is not a valid URL.`, `${at}.server_url`, 'invalid_value');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid(`'${at}.server_url' must be an http or https URL.`, `${at}.server_url`, 'invalid_value');
  if (url.username || url.password)
    throw invalid(
      `'${at}.server_url' must not hold credentials; give them in 'authorization' or 'headers'.`,
      `${at}.server_url`,
      'invalid_value',
    );
  for (const [name, value] of Object.entries(tool.headers ?? {})) {
    const param = `${at}.headers.${name}`;
    if (!TOKEN.test(name)) throw invalid(`'${param}' is not a valid HTTP header name.`, `${at}.headers`, 'invalid_value');
    if (!HEADER_VALUE.test(value)) throw invalid(`'${param}' holds characters a header value cannot.`, `${at}.headers`, 'invalid_value');
    const lower = name.toLowerCase();
    if (TRANSPORT_HEADERS.has(lower))
      throw invalid(`'${param}' is set by the MCP transport itself and cannot be given.`, `${at}.headers`, 'invalid_value');
    if (lower === 'authorization' && tool.authorization != null)
      throw invalid(`'${at}.authorization' and an Authorization header cannot both be given.`, `${at}.authorization`, 'invalid_value');
  }
}

/** The headers sent to the server: `headers`, and `authorization` as a bearer token. */
export function serverHeaders(tool: McpTool): Record<string, string> {
  const headers: Record<string, string> = { ...(tool.headers ?? {}) };
  if (tool.authorization != null) headers.Authorization = `Bearer ${tool.authorization}`;
  return headers;
}

const readOnly = (t: ListedTool) => (t.annotations as { readOnlyHint?: unknown } | null | undefined)?.readOnlyHint === true;

/** Whether a tool matches a filter: every criterion it gives holds (an empty filter matches every tool). */
export function matches(filter: ToolFilter, t: ListedTool): boolean {
  if (filter.tool_names !== undefined && !filter.tool_names.includes(t.name)) return false;
  if (filter.read_only !== undefined && readOnly(t) !== filter.read_only) return false;
  return true;
}

/** Whether `allowed_tools` lets the model use a tool (no `allowed_tools`: every tool). */
export function isAllowed(tool: Pick<McpTool, 'allowed_tools'>, t: ListedTool): boolean {
  const allowed = tool.allowed_tools;
  if (allowed == null) return true;
  return Array.isArray(allowed) ? allowed.includes(t.name) : matches(allowed, t);
}

/**
 * Whether a call of a tool waits for a human's approval. `require_approval` left out is `always` (the
 * document's default). In the object form, a tool `always` matches needs approval and one `never`
 * matches does not (`always` wins when both match); a tool neither matches needs approval unless only
 * `always` was given (then the list is the exceptions to a default of `never`).
 */
export function needsApproval(tool: Pick<McpTool, 'require_approval'>, t: ListedTool): boolean {
  const policy = tool.require_approval;
  if (policy == null || policy === 'always') return true;
  if (policy === 'never') return false;
  if (policy.always && matches(policy.always, t)) return true;
  if (policy.never && matches(policy.never, t)) return false;
  return !(policy.always && !policy.never);
}
