// The JSON the host handles (tool descriptors, results, JSON-RPC messages), read without `any`: values arrive
// as `unknown` and are narrowed where they are used.

export type JsonObject = Record<string, unknown>;

/** The value when it is a plain object, else an empty one. */
export const obj = (v: unknown): JsonObject => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : {});
/** The value when it is a string, else undefined. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** The value when it is an array, else an empty one. */
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** A JSON-RPC 2.0 message of either protocol (request, notification or response). */
export interface RpcMessage {
  jsonrpc: '2.0';
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}
export const isRpc = (v: unknown): v is RpcMessage => obj(v).jsonrpc === '2.0';

/** The parts of an MCP tool descriptor the host reads. */
export interface ToolDescriptor {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: JsonObject;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
  _meta?: JsonObject;
}
/** Reads a descriptor the server sent (any JSON object) as a tool descriptor. */
export function descriptor(value: unknown): ToolDescriptor {
  const d = obj(value);
  return {
    ...d,
    name: str(d.name) ?? '',
    title: str(d.title),
    description: str(d.description),
    inputSchema: obj(d.inputSchema),
    annotations: obj(d.annotations),
    _meta: obj(d._meta),
  };
}

/** An MCP tool result. */
export interface ToolResult extends JsonObject {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: JsonObject;
}

/** What the model sees of a result: structuredContent and content, never _meta. */
export function modelView(result: ToolResult): JsonObject {
  const out: JsonObject = {};
  if (result.structuredContent !== undefined) out.structuredContent = result.structuredContent;
  if (result.content !== undefined) out.content = result.content;
  if (result.isError) out.isError = true;
  return out;
}

/** A random id with a prefix (`ws_…`, `turn_…`). */
export const rid = (prefix: string) =>
  `${prefix}_${Array.from(crypto.getRandomValues(new Uint8Array(9)), (b) => b.toString(16).padStart(2, '0')).join('')}`;

/** A starting value for an arguments form: defaults, else examples, else empty values of required fields. */
export function exampleArgs(schema: unknown): JsonObject {
  const s = obj(schema);
  const required = arr(s.required);
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj(s.properties))) {
    const p = obj(v);
    if (p.default !== undefined) out[k] = p.default;
    else if (Array.isArray(p.examples) && p.examples.length) out[k] = p.examples[0];
    else if (required.includes(k))
      out[k] =
        p.type === 'number' || p.type === 'integer'
          ? 0
          : p.type === 'boolean'
            ? false
            : p.type === 'array'
              ? []
              : p.type === 'object'
                ? {}
                : '';
  }
  return out;
}

/** Parses an arguments form's JSON object; throws a readable error. */
export function parseArgs(text: string): JsonObject {
  let v: unknown;
  try {
    v = JSON.parse(text || '{}');
  } catch (err) {
    throw new Error(`The arguments are not JSON: ${(err as Error).message}`);
  }
  return obj(v);
}
