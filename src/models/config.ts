import { Type, type Static } from 'typebox';
import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { parseDuration } from '../core/clock.js';
import { upstreamKeyFromEnv } from '../core/upstream-key.js';

/**
 * The root `models` section of the config file: model name (or pattern) → provider.
 *
 * ```yaml
 * models:
 *   llama3.1:                # an exact name
 *     provider: upstream
 *     base_url: http://127.0.0.1:11434/v1
 *   "gpt-*":                 # a glob (`*`, `?`), or /regex/ between slashes
 *     provider: builtin
 *     rules:
 *       - match: weather     # substring of the last user message, case-insensitive
 *         tool_calls: [{ name: get_weather, arguments: { city: Paris } }]
 *         after_tool_outputs: "It is {{output}} in Paris."
 * ```
 * Exact names win over patterns; patterns are tried in file order. A name no entry matches is served by
 * the built-in provider with no rules (the default when the section is absent), unless an entry maps
 * `"*"` elsewhere.
 */
const Duration = Type.Union([Type.String({ minLength: 1, maxLength: 32 }), Type.Number({ minimum: 0 })]);

const RuleToolCall = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-zA-Z0-9_-]+$' }),
    arguments: Type.Optional(Type.Union([Type.String({ maxLength: 100_000 }), Type.Record(Type.String(), Type.Unknown())])),
  },
  { additionalProperties: false },
);

export const RuleSchema = Type.Object(
  {
    /** Substring of the last user message (case-insensitive). */
    match: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    /** A regular expression (`source` or `/source/flags`) tested against the last user message. */
    regex: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    /** Reply text; `{{input}}` is the last user message. */
    reply: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    /** Function calls to make (only tools offered in the request are called). */
    tool_calls: Type.Optional(Type.Array(RuleToolCall, { maxItems: 32 })),
    /** Reply once the tool outputs are back; `{{output}}` is the outputs joined, `{{input}}` as above. */
    after_tool_outputs: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    /** `content_filter` ends the reply as filtered (the message becomes incomplete). */
    finish_reason: Type.Optional(Type.Union([Type.Literal('stop'), Type.Literal('content_filter')])),
    /** Wait before each streamed chunk (wall time; lets tests cancel a run mid-way). */
    delay: Type.Optional(Duration),
  },
  { additionalProperties: false },
);

export const EntrySchema = Type.Object(
  {
    provider: Type.Union([Type.Literal('builtin'), Type.Literal('upstream'), Type.Literal('record'), Type.Literal('replay')]),
    /** Record and replay: the fixture folder (relative to the working directory), inside the fixtures root. */
    fixtures: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
    /** Upstream: base URL of a Chat Completions server, up to `/v1` (`{base_url}/chat/completions` is called). */
    base_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    api_key: Type.Optional(Type.String({ maxLength: 4000 })),
    /** Upstream: name of an environment variable holding the key, `STANDIN_UPSTREAM_…` (keeps secrets out of the file). */
    api_key_env: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    /** Upstream: the model name sent upstream (default: the requested name). */
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** Upstream: time limit of one completion, e.g. `120s` (default 120s). */
    timeout: Type.Optional(Duration),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** Upstream: stream the completion (default true); false for servers without streaming. */
    stream: Type.Optional(Type.Boolean()),
    /** Upstream: name of the completion limit parameter (default `max_tokens`). */
    max_tokens_param: Type.Optional(Type.Union([Type.Literal('max_tokens'), Type.Literal('max_completion_tokens')])),
    /** Built-in: reply rules, first match wins. */
    rules: Type.Optional(Type.Array(RuleSchema, { maxItems: 1000 })),
    /** Built-in: reply when no rule matches (default `{{input}}` echoed, see docs/models.md). */
    default_reply: Type.Optional(Type.String({ maxLength: 100_000 })),
    /** Built-in: characters per streamed text chunk (default 32; 0 sends the reply in one chunk). */
    chunk_chars: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    /** Built-in: wait before each streamed chunk, unless a rule says otherwise. */
    delay: Type.Optional(Duration),
    /** Context window in tokens, used by `auto` truncation (default 128000). */
    context_window: Type.Optional(Type.Integer({ minimum: 256, maximum: 100_000_000 })),
    owned_by: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** Names a pattern entry advertises in `GET /v1/models`. */
    list: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 1000 })),
  },
  { additionalProperties: false },
);

export const ModelsConfigSchema = Type.Record(Type.String({ minLength: 1, maxLength: 256 }), EntrySchema);

export type RuleConfig = Static<typeof RuleSchema>;
export type ModelsConfig = Static<typeof ModelsConfigSchema>;

/** A compiled rule of the built-in provider. */
export interface BuiltinRule {
  test(text: string): boolean;
  reply?: string;
  toolCalls: { name: string; arguments: string }[];
  afterToolOutputs?: string;
  finishReason: 'stop' | 'content_filter';
  delayMs: number;
}

export interface BuiltinOptions {
  rules: BuiltinRule[];
  defaultReply?: string;
  chunkChars: number;
  delayMs: number;
}

export interface UpstreamOptions {
  baseUrl: string;
  apiKey?: string;
  model?: string;
  timeoutMs: number;
  headers: Record<string, string>;
  stream: boolean;
  maxTokensParam: 'max_tokens' | 'max_completion_tokens';
}

export interface Route {
  /** The config key: an exact name, a glob or a /regex/. */
  key: string;
  exact: boolean;
  matches(model: string): boolean;
  provider: 'builtin' | 'upstream' | 'record' | 'replay';
  builtin?: BuiltinOptions;
  /** Upstream and record: the server called. */
  upstream?: UpstreamOptions;
  /** Record and replay: the fixture folder, absolute, and the root it was checked to be inside. */
  fixtures?: { dir: string; root: string };
  contextWindow: number;
  ownedBy: string;
  list: string[];
}

export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** Turns `/source/flags` or a plain source into a RegExp; throws with the offending text. */
export function parseRegex(text: string, where: string): RegExp {
  const m = /^\/(.*)\/([dgimsuy]*)$/s.exec(text);
  try {
    return m ? new RegExp(m[1], m[2].replace('g', '')) : new RegExp(text);
  } catch (err) {
    throw new Error(`${where}: '${text}' is not a valid regular expression (${(err as Error).message})`);
  }
}

function globToRegex(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

function ms(value: string | number | undefined, where: string, fallback: number): number {
  if (value === undefined) return fallback;
  try {
    return parseDuration(value);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`);
  }
}

function compileRule(rule: RuleConfig, where: string, entryDelay: number): BuiltinRule {
  if (!rule.match && !rule.regex) throw new Error(`${where}: a rule needs 'match' or 'regex'`);
  if (rule.reply === undefined && !rule.tool_calls?.length && rule.finish_reason !== 'content_filter') {
    throw new Error(`${where}: a rule needs 'reply' or 'tool_calls'`);
  }
  const needle = rule.match?.toLowerCase();
  const re = rule.regex ? parseRegex(rule.regex, `${where}.regex`) : undefined;
  return {
    test: (text) => (needle === undefined || text.toLowerCase().includes(needle)) && (re === undefined || re.test(text)),
    reply: rule.reply,
    toolCalls: (rule.tool_calls ?? []).map((c) => ({
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
    })),
    afterToolOutputs: rule.after_tool_outputs,
    finishReason: rule.finish_reason ?? 'stop',
    delayMs: ms(rule.delay, `${where}.delay`, entryDelay),
  };
}

const UPSTREAM_FIELDS = ['base_url', 'api_key', 'api_key_env', 'model', 'timeout', 'headers', 'stream', 'max_tokens_param'] as const;
const BUILTIN_FIELDS = ['rules', 'default_reply', 'chunk_chars', 'delay'] as const;

/** The path as the file system resolves it: symbolic links of its deepest existing folder followed. */
function realPath(path: string): string {
  const tail: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    try {
      return resolve(realpathSync(at), ...tail);
    } catch {
      if (dirname(at) === at) return path;
      tail.unshift(basename(at));
    }
  }
}

/** Whether `path` is `root` or inside it, by name and once symbolic links are followed. */
function inside(root: string, path: string): boolean {
  const within = (r: string, p: string) => {
    const rel = relative(r, p);
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  };
  return within(root, path) && within(realPath(root), realPath(path));
}

/** Where the section's fixture folders may be (docs/models.md): the working directory unless the operator says. */
export interface CompileOptions {
  env?: NodeJS.ProcessEnv;
  /** `--fixtures-root`; default the working directory. */
  fixturesRoot?: string;
}

/** Validates the cross-field rules the schema cannot express and compiles the section into routes. */
export function compileModelsConfig(config: ModelsConfig | undefined, opts: CompileOptions = {}): Route[] {
  const env = opts.env ?? process.env;
  const root = resolve(opts.fixturesRoot ?? '.');
  const routes: Route[] = [];
  for (const [key, entry] of Object.entries(config ?? {})) {
    const where = `models.${key}`;
    const isRegex = /^\/.*\/[a-z]*$/s.test(key);
    const isGlob = !isRegex && /[*?]/.test(key);
    const re = isRegex ? parseRegex(key, where) : isGlob ? globToRegex(key) : undefined;
    const route: Route = {
      key,
      exact: !re,
      matches: re ? (m) => re.test(m) : (m) => m === key,
      provider: entry.provider,
      contextWindow: entry.context_window ?? DEFAULT_CONTEXT_WINDOW,
      ownedBy: entry.owned_by ?? (entry.provider === 'builtin' ? 'standin' : 'upstream'),
      list: entry.list ?? [],
    };
    const recorded = entry.provider === 'record' || entry.provider === 'replay';
    if (recorded) {
      if (!entry.fixtures) throw new Error(`${where}: provider ${entry.provider} needs 'fixtures' (a folder)`);
      const dir = resolve(entry.fixtures);
      // A config may come from the control plane: its folders stay where the operator allows writing.
      if (!inside(root, dir))
        throw new Error(
          `${where}.fixtures: '${entry.fixtures}' is outside the fixtures root (the working directory, or --fixtures-root); give a folder inside it`,
        );
      route.fixtures = { dir, root };
    } else if (entry.fixtures !== undefined) throw new Error(`${where}.fixtures: only for the record and replay providers`);
    if (entry.provider === 'replay') {
      for (const k of UPSTREAM_FIELDS) if (entry[k] !== undefined) throw new Error(`${where}.${k}: a replay calls no upstream`);
      for (const k of BUILTIN_FIELDS) if (entry[k] !== undefined) throw new Error(`${where}.${k}: only for the builtin provider`);
    } else if (entry.provider === 'upstream' || entry.provider === 'record') {
      if (!entry.base_url)
        throw new Error(`${where}: ${entry.provider === 'record' ? 'a record provider' : 'an upstream'} needs 'base_url'`);
      let url: URL;
      try {
        url = new URL(entry.base_url);
      } catch {
        throw new Error(`${where}.base_url: '${entry.base_url}' is not a URL`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${where}.base_url: must be http or https`);
      for (const k of BUILTIN_FIELDS) if (entry[k] !== undefined) throw new Error(`${where}.${k}: only for the builtin provider`);
      let apiKey = entry.api_key;
      if (entry.api_key_env) apiKey = upstreamKeyFromEnv(entry.api_key_env, `${where}.api_key_env`, env);
      route.upstream = {
        baseUrl: entry.base_url.replace(/\/+$/, ''),
        apiKey,
        model: entry.model,
        timeoutMs: ms(entry.timeout, `${where}.timeout`, 120_000),
        headers: entry.headers ?? {},
        stream: entry.stream ?? true,
        maxTokensParam: entry.max_tokens_param ?? 'max_tokens',
      };
    } else {
      for (const k of UPSTREAM_FIELDS) if (entry[k] !== undefined) throw new Error(`${where}.${k}: only for the upstream provider`);
      const delayMs = ms(entry.delay, `${where}.delay`, 0);
      route.builtin = {
        rules: (entry.rules ?? []).map((r, i) => compileRule(r, `${where}.rules[${i}]`, delayMs)),
        defaultReply: entry.default_reply,
        chunkChars: entry.chunk_chars ?? 32,
        delayMs,
      };
    }
    routes.push(route);
  }
  // Exact names first; patterns keep their file order.
  return [...routes.filter((r) => r.exact), ...routes.filter((r) => !r.exact)];
}
