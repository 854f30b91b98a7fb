import { invalid } from '../core/errors.js';
import type { Attachment, ResponseFormat, Tool, ToolChoice, TruncationStrategy } from './objects.js';

/**
 * Field rules of the threads interface that a JSON Schema union cannot report precisely (tools, content
 * blocks, response_format, tool_choice, truncation, metadata). Each check names the field path in
 * `param` and the rule in the message, in the platform's wording where it is known.
 */
type Json = Record<string, unknown>;

/** `metadata` once checked. */
export type MetadataInput = Record<string, string> | null | undefined;

/** A chunking strategy once checked. */
export type ChunkingInput = { type: 'auto' } | { type: 'static'; static: { max_chunk_size_tokens: number; chunk_overlap_tokens: number } };

/** `tool_resources` once checked (`vector_stores` is the create-only helper). */
export interface ToolResourcesInput {
  code_interpreter?: { file_ids?: string[] };
  file_search?: {
    vector_store_ids?: string[];
    vector_stores?: { file_ids?: string[]; chunking_strategy?: ChunkingInput; metadata?: MetadataInput }[];
  };
}

/** A content block of a message to create. */
export type ContentInput =
  | { type: 'text'; text: string }
  | { type: 'image_file'; image_file: { file_id: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

/** A message to create, once checked. */
export interface MessageInput {
  role: 'user' | 'assistant';
  content: string | ContentInput[];
  attachments?: Attachment[] | null;
  metadata?: MetadataInput;
}

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);
const NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;

/** The `name` of a function or a json_schema: required, a-z A-Z 0-9 _ -, at most 64 characters. */
function requiredName(obj: Json, path: string): string {
  const name = required(obj, 'name', path);
  expectType(name, 'string', `${path}.name`);
  if (!NAME_RE.test(name as string)) {
    throw invalid(
      `Invalid '${path}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' with at most 64 characters.`,
      `${path}.name`,
      'invalid_value',
    );
  }
  return name as string;
}
const IMAGE_EXT_RE = /\.(jpe?g|png|gif|webp)$/i;
const DATA_IMAGE_RE = /^data:image\/(jpeg|jpg|png|gif|webp);base64,/i;

function expectType(v: unknown, type: 'object' | 'string' | 'array' | 'boolean' | 'number' | 'integer', param: string): void {
  const ok =
    type === 'object' ? isObject(v) : type === 'array' ? Array.isArray(v) : type === 'integer' ? Number.isInteger(v) : typeof v === type;
  if (!ok)
    throw invalid(
      `Invalid type for '${param}': expected ${type === 'object' || type === 'array' || type === 'integer' ? `an ${type}` : `a ${type}`}, but got ${kind(v)} instead.`,
      param,
      'invalid_type',
    );
}

function onlyKeys(v: Json, allowed: string[], param: string): void {
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k))
      throw invalid(
        `Unrecognized request argument supplied: '${param ? `${param}.` : ''}${k}'.`,
        param ? `${param}.${k}` : k,
        'unknown_parameter',
      );
  }
}

function required(v: Json, key: string, param: string): unknown {
  if (v[key] === undefined)
    throw invalid(`Missing required parameter: '${param}.${key}'.`, `${param}.${key}`, 'missing_required_parameter');
  return v[key];
}

function enumOf(v: unknown, values: readonly string[], param: string): void {
  if (typeof v !== 'string' || !values.includes(v)) {
    throw invalid(
      `Invalid value for '${param}': ${JSON.stringify(v)}. Supported values are: ${values.map((x) => `'${x}'`).join(', ')}.`,
      param,
      'invalid_value',
    );
  }
}

/** metadata: null or up to 16 string pairs, keys ≤ 64 and values ≤ 512 characters. */
export function checkMetadata(v: unknown, param = 'metadata'): asserts v is MetadataInput {
  if (v === null || v === undefined) return;
  expectType(v, 'object', param);
  const entries = Object.entries(v as Json);
  if (entries.length > 16) {
    throw invalid(
      `Invalid '${param}': too many properties. Expected an object with at most 16 properties, but got an object with ${entries.length} properties instead.`,
      param,
      'object_above_max_properties',
    );
  }
  for (const [k, val] of entries) {
    if (k.length > 64)
      throw invalid(`Invalid '${param}': key '${k.slice(0, 80)}' is too long. Keys must be at most 64 characters.`, param, 'invalid_value');
    if (typeof val !== 'string')
      throw invalid(`Invalid type for '${param}.${k}': expected a string, but got ${kind(val)} instead.`, `${param}.${k}`, 'invalid_type');
    if (val.length > 512)
      throw invalid(
        `Invalid '${param}.${k}': string too long. Expected a string with maximum length 512, but got a string with length ${val.length} instead.`,
        `${param}.${k}`,
        'string_above_max_length',
      );
  }
}

function checkStringArray(v: unknown, max: number, param: string): void {
  expectType(v, 'array', param);
  const arr = v as unknown[];
  if (arr.length > max)
    throw invalid(
      `Invalid '${param}': array too long. Expected an array with maximum length ${max}, but got an array with length ${arr.length} instead.`,
      param,
      'array_above_max_length',
    );
  arr.forEach((x, i) => {
    expectType(x, 'string', `${param}[${i}]`);
    if ((x as string).length === 0 || (x as string).length > 256)
      throw invalid(`'${param}[${i}]' must be 1 to 256 characters.`, `${param}[${i}]`, 'invalid_value');
  });
}

/**
 * tool_resources: `code_interpreter.file_ids` (≤ 20) and `file_search.vector_store_ids` (≤ 1) or the
 * `vector_stores` helper (≤ 1, assistants and threads only).
 */
export function checkToolResources(
  v: unknown,
  param = 'tool_resources',
  opts: { helper: boolean } = { helper: true },
): asserts v is ToolResourcesInput | null | undefined {
  if (v === null || v === undefined) return;
  expectType(v, 'object', param);
  const tr = v as Json;
  onlyKeys(tr, ['code_interpreter', 'file_search'], param);
  if (tr.code_interpreter !== undefined) {
    const p = `${param}.code_interpreter`;
    expectType(tr.code_interpreter, 'object', p);
    onlyKeys(tr.code_interpreter as Json, ['file_ids'], p);
    const ids = (tr.code_interpreter as Json).file_ids;
    if (ids !== undefined) checkStringArray(ids, 20, `${p}.file_ids`);
  }
  if (tr.file_search !== undefined) {
    const p = `${param}.file_search`;
    expectType(tr.file_search, 'object', p);
    const fs = tr.file_search as Json;
    onlyKeys(fs, opts.helper ? ['vector_store_ids', 'vector_stores'] : ['vector_store_ids'], p);
    if (fs.vector_store_ids !== undefined && fs.vector_stores !== undefined) {
      throw invalid(`Invalid '${p}': give either 'vector_store_ids' or 'vector_stores', not both.`, p, 'invalid_value');
    }
    if (fs.vector_store_ids !== undefined) checkStringArray(fs.vector_store_ids, 1, `${p}.vector_store_ids`);
    if (fs.vector_stores !== undefined) {
      const vp = `${p}.vector_stores`;
      expectType(fs.vector_stores, 'array', vp);
      const list = fs.vector_stores as unknown[];
      if (list.length > 1)
        throw invalid(
          `Invalid '${vp}': array too long. Expected an array with maximum length 1, but got an array with length ${list.length} instead.`,
          vp,
          'array_above_max_length',
        );
      list.forEach((vs, i) => {
        const ip = `${vp}[${i}]`;
        expectType(vs, 'object', ip);
        onlyKeys(vs as Json, ['file_ids', 'chunking_strategy', 'metadata'], ip);
        if ((vs as Json).file_ids !== undefined) checkStringArray((vs as Json).file_ids, 10_000, `${ip}.file_ids`);
        checkChunking((vs as Json).chunking_strategy, `${ip}.chunking_strategy`);
        checkMetadata((vs as Json).metadata, `${ip}.metadata`);
      });
    }
  }
}

function checkChunking(v: unknown, param: string): void {
  if (v === undefined) return;
  expectType(v, 'object', param);
  const c = v as Json;
  enumOf(c.type, ['auto', 'static'], `${param}.type`);
  if (c.type === 'auto') return onlyKeys(c, ['type'], param);
  onlyKeys(c, ['type', 'static'], param);
  const s = required(c, 'static', param);
  expectType(s, 'object', `${param}.static`);
  onlyKeys(s as Json, ['max_chunk_size_tokens', 'chunk_overlap_tokens'], `${param}.static`);
  const size = required(s as Json, 'max_chunk_size_tokens', `${param}.static`);
  const overlap = required(s as Json, 'chunk_overlap_tokens', `${param}.static`);
  expectType(size, 'integer', `${param}.static.max_chunk_size_tokens`);
  expectType(overlap, 'integer', `${param}.static.chunk_overlap_tokens`);
  if ((size as number) < 100 || (size as number) > 4096)
    throw invalid(`'${param}.static.max_chunk_size_tokens' must be 100 to 4096.`, `${param}.static.max_chunk_size_tokens`, 'invalid_value');
  if ((overlap as number) < 0 || (overlap as number) > (size as number) / 2) {
    throw invalid(
      `'${param}.static.chunk_overlap_tokens' must be 0 to half of max_chunk_size_tokens.`,
      `${param}.static.chunk_overlap_tokens`,
      'invalid_value',
    );
  }
}

/** A tool definition: code_interpreter, file_search (max_num_results 1–50, ranking options), function. */
export function checkTools(v: unknown, max: number, param = 'tools'): asserts v is Tool[] | null | undefined {
  if (v === null || v === undefined) return;
  expectType(v, 'array', param);
  const tools = v as unknown[];
  if (tools.length > max) {
    throw invalid(
      `Invalid '${param}': array too long. Expected an array with maximum length ${max}, but got an array with length ${tools.length} instead.`,
      param,
      'array_above_max_length',
    );
  }
  const names = new Set<string>();
  tools.forEach((t, i) => {
    const p = `${param}[${i}]`;
    expectType(t, 'object', p);
    const tool = t as Json;
    enumOf(tool.type, ['code_interpreter', 'file_search', 'function'], `${p}.type`);
    if (tool.type === 'code_interpreter') return onlyKeys(tool, ['type'], p);
    if (tool.type === 'file_search') {
      onlyKeys(tool, ['type', 'file_search'], p);
      if (tool.file_search === undefined) return;
      const fp = `${p}.file_search`;
      expectType(tool.file_search, 'object', fp);
      const fs = tool.file_search as Json;
      onlyKeys(fs, ['max_num_results', 'ranking_options'], fp);
      if (fs.max_num_results !== undefined) {
        expectType(fs.max_num_results, 'integer', `${fp}.max_num_results`);
        const n = fs.max_num_results as number;
        if (n < 1 || n > 50)
          throw invalid(`Invalid '${fp}.max_num_results': must be between 1 and 50, got ${n}.`, `${fp}.max_num_results`, 'invalid_value');
      }
      if (fs.ranking_options !== undefined) {
        const rp = `${fp}.ranking_options`;
        expectType(fs.ranking_options, 'object', rp);
        const ro = fs.ranking_options as Json;
        onlyKeys(ro, ['ranker', 'score_threshold'], rp);
        if (ro.ranker !== undefined) enumOf(ro.ranker, ['auto', 'default_2024_08_21'], `${rp}.ranker`);
        const th = required(ro, 'score_threshold', rp);
        expectType(th, 'number', `${rp}.score_threshold`);
        if ((th as number) < 0 || (th as number) > 1)
          throw invalid(`Invalid '${rp}.score_threshold': must be between 0 and 1, got ${th}.`, `${rp}.score_threshold`, 'invalid_value');
      }
      return;
    }
    onlyKeys(tool, ['type', 'function'], p);
    const fn = required(tool, 'function', p);
    const fp = `${p}.function`;
    expectType(fn, 'object', fp);
    const f = fn as Json;
    onlyKeys(f, ['name', 'description', 'parameters', 'strict'], fp);
    const name = requiredName(f, fp);
    if (names.has(name as string))
      throw invalid(`Invalid '${param}': function names must be unique; '${name}' appears twice.`, `${fp}.name`, 'invalid_value');
    names.add(name as string);
    if (f.description !== undefined) {
      expectType(f.description, 'string', `${fp}.description`);
      if ((f.description as string).length > 1024 * 100)
        throw invalid(`'${fp}.description' must be at most 102400 characters.`, `${fp}.description`, 'string_above_max_length');
    }
    if (f.parameters !== undefined) expectType(f.parameters, 'object', `${fp}.parameters`);
    if (f.strict !== undefined && f.strict !== null) expectType(f.strict, 'boolean', `${fp}.strict`);
  });
}

/** response_format: 'auto', {type: text | json_object}, or {type: json_schema, json_schema: {name, …}}. */
export function checkResponseFormat(v: unknown, param = 'response_format'): asserts v is ResponseFormat | null | undefined {
  if (v === null || v === undefined || v === 'auto') return;
  if (typeof v === 'string') return enumOf(v, ['auto'], param);
  expectType(v, 'object', param);
  const rf = v as Json;
  enumOf(rf.type, ['text', 'json_object', 'json_schema'], `${param}.type`);
  if (rf.type !== 'json_schema') return onlyKeys(rf, ['type'], param);
  onlyKeys(rf, ['type', 'json_schema'], param);
  const js = required(rf, 'json_schema', param);
  const jp = `${param}.json_schema`;
  expectType(js, 'object', jp);
  const j = js as Json;
  onlyKeys(j, ['name', 'description', 'schema', 'strict'], jp);
  requiredName(j, jp);
  if (j.description !== undefined) expectType(j.description, 'string', `${jp}.description`);
  if (j.schema !== undefined) expectType(j.schema, 'object', `${jp}.schema`);
  if (j.strict !== undefined && j.strict !== null) expectType(j.strict, 'boolean', `${jp}.strict`);
}

/** tool_choice: none, auto, required, or a named tool (function.name required for type function). */
export function checkToolChoice(v: unknown, param = 'tool_choice'): asserts v is ToolChoice | null | undefined {
  if (v === null || v === undefined) return;
  if (typeof v === 'string') return enumOf(v, ['none', 'auto', 'required'], param);
  expectType(v, 'object', param);
  const tc = v as Json;
  enumOf(tc.type, ['function', 'code_interpreter', 'file_search'], `${param}.type`);
  if (tc.type !== 'function') return onlyKeys(tc, ['type'], param);
  onlyKeys(tc, ['type', 'function'], param);
  const fn = required(tc, 'function', param);
  expectType(fn, 'object', `${param}.function`);
  onlyKeys(fn as Json, ['name'], `${param}.function`);
  const name = required(fn as Json, 'name', `${param}.function`);
  expectType(name, 'string', `${param}.function.name`);
}

/** truncation_strategy: {type: auto} or {type: last_messages, last_messages ≥ 1}. */
export function checkTruncation(v: unknown, param = 'truncation_strategy'): asserts v is TruncationStrategy | null | undefined {
  if (v === null || v === undefined) return;
  expectType(v, 'object', param);
  const ts = v as Json;
  onlyKeys(ts, ['type', 'last_messages'], param);
  const type = required(ts, 'type', param);
  enumOf(type, ['auto', 'last_messages'], `${param}.type`);
  const n = ts.last_messages;
  if (n !== undefined && n !== null) {
    expectType(n, 'integer', `${param}.last_messages`);
    if ((n as number) < 1)
      throw invalid(`Invalid '${param}.last_messages': must be at least 1, got ${n}.`, `${param}.last_messages`, 'invalid_value');
  }
  if (type === 'last_messages' && (n === undefined || n === null)) {
    throw invalid(
      `Missing required parameter: '${param}.last_messages' (required when type is 'last_messages').`,
      `${param}.last_messages`,
      'missing_required_parameter',
    );
  }
}

/** Message content: a string, or 1+ blocks of text, image_file, image_url (jpeg/jpg/png/gif/webp, detail auto/low/high). */
export function checkContent(v: unknown, param = 'content'): asserts v is string | ContentInput[] {
  if (typeof v === 'string') return;
  if (!Array.isArray(v))
    throw invalid(
      `Invalid type for '${param}': expected a string or an array of content parts, but got ${kind(v)} instead.`,
      param,
      'invalid_type',
    );
  if (v.length === 0)
    throw invalid(
      `Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
      param,
      'empty_array',
    );
  if (v.length > 1000)
    throw invalid(
      `Invalid '${param}': array too long. Expected an array with maximum length 1000, but got an array with length ${v.length} instead.`,
      param,
      'array_above_max_length',
    );
  v.forEach((b, i) => {
    const p = `${param}[${i}]`;
    expectType(b, 'object', p);
    const block = b as Json;
    enumOf(block.type, ['text', 'image_file', 'image_url'], `${p}.type`);
    if (block.type === 'text') {
      onlyKeys(block, ['type', 'text'], p);
      expectType(required(block, 'text', p), 'string', `${p}.text`);
      return;
    }
    if (block.type === 'image_file') {
      onlyKeys(block, ['type', 'image_file'], p);
      const f = required(block, 'image_file', p);
      expectType(f, 'object', `${p}.image_file`);
      onlyKeys(f as Json, ['file_id', 'detail'], `${p}.image_file`);
      expectType(required(f as Json, 'file_id', `${p}.image_file`), 'string', `${p}.image_file.file_id`);
      if ((f as Json).detail !== undefined) enumOf((f as Json).detail, ['auto', 'low', 'high'], `${p}.image_file.detail`);
      return;
    }
    onlyKeys(block, ['type', 'image_url'], p);
    const u = required(block, 'image_url', p);
    const up = `${p}.image_url`;
    expectType(u, 'object', up);
    onlyKeys(u as Json, ['url', 'detail'], up);
    const url = required(u as Json, 'url', up);
    expectType(url, 'string', `${up}.url`);
    checkImageUrl(url as string, `${up}.url`);
    if ((u as Json).detail !== undefined) enumOf((u as Json).detail, ['auto', 'low', 'high'], `${up}.detail`);
  });
}

function checkImageUrl(url: string, param: string): void {
  if (DATA_IMAGE_RE.test(url)) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(`Invalid '${param}': '${url.substring(0, 200)}' is not a valid URL.`, param, 'invalid_url');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalid(`Invalid '${param}': only http, https and data:image URLs are supported.`, param, 'invalid_url');
  }
  if (!IMAGE_EXT_RE.test(parsed.pathname)) {
    throw invalid(`Invalid '${param}': the image must be of a supported type: jpeg, jpg, png, gif or webp.`, param, 'invalid_image_format');
  }
}

/** attachments: null or [{file_id, tools: [{type: code_interpreter | file_search}]}]. */
function checkAttachments(v: unknown, param = 'attachments'): asserts v is Attachment[] | null | undefined {
  if (v === null || v === undefined) return;
  expectType(v, 'array', param);
  const list = v as unknown[];
  if (list.length > 1000)
    throw invalid(`Invalid '${param}': array too long. Expected an array with maximum length 1000.`, param, 'array_above_max_length');
  list.forEach((a, i) => {
    const p = `${param}[${i}]`;
    expectType(a, 'object', p);
    onlyKeys(a as Json, ['file_id', 'tools'], p);
    expectType(required(a as Json, 'file_id', p), 'string', `${p}.file_id`);
    const tools = required(a as Json, 'tools', p);
    expectType(tools, 'array', `${p}.tools`);
    (tools as unknown[]).forEach((t, j) => {
      const tp = `${p}.tools[${j}]`;
      expectType(t, 'object', tp);
      onlyKeys(t as Json, ['type'], tp);
      enumOf((t as Json).type, ['code_interpreter', 'file_search'], `${tp}.type`);
    });
  });
}

/** A message to create (thread messages, additional_messages, create message). */
export function checkMessage(v: unknown, param: string): asserts v is MessageInput {
  expectType(v, 'object', param || 'body');
  const m = v as Json;
  onlyKeys(m, ['role', 'content', 'attachments', 'metadata'], param);
  const at = (k: string) => (param ? `${param}.${k}` : k);
  if (m.role === undefined) throw invalid(`Missing required parameter: '${at('role')}'.`, at('role'), 'missing_required_parameter');
  enumOf(m.role, ['user', 'assistant'], at('role'));
  if (m.content === undefined)
    throw invalid(`Missing required parameter: '${at('content')}'.`, at('content'), 'missing_required_parameter');
  checkContent(m.content, at('content'));
  checkAttachments(m.attachments, at('attachments'));
  checkMetadata(m.metadata, at('metadata'));
}
