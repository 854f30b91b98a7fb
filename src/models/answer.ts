import { ModelError } from './errors.js';
import type { ChatProvider } from './types.js';

/**
 * What a model provider answers, checked where it enters Standin. An upstream server and a fixture file
 * are outside input: a usage count that is a string, negative, fractional or infinite would become `NaN`
 * in a rate-limit counter, a usage object of a reply, a run's totals; a tool call id that is an object
 * would be stored as one. Every provider the registry routes to is wrapped by `checkedProvider`, so no
 * other code needs to look again.
 */

/** Tool calls one answer may hold: their `index` is below this. */
export const MAX_TOOL_CALLS = 128;

const FINISH_REASONS = new Set(['stop', 'length', 'tool_calls', 'content_filter']);
const USAGE_KEYS = ['prompt_tokens', 'completion_tokens', 'total_tokens'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A token count: an integer, finite, not negative, exact in a double. */
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** A short, safe rendering of a value for a message. */
export function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v);
  if (Array.isArray(v)) return 'an array';
  if (v !== null && typeof v === 'object') return 'an object';
  return String(v);
}

/** The first key of `value` not in `known`, as a problem at `at`. */
function unknownKey(value: Record<string, unknown>, known: readonly string[], at: string): string | undefined {
  const extra = Object.keys(value).find((k) => !known.includes(k));
  return extra === undefined ? undefined : `${at}: unknown member '${extra.slice(0, 64)}'`;
}

const optionalString = (v: unknown, at: string) =>
  v === undefined || typeof v === 'string' ? undefined : `${at}: must be a string (got ${shown(v)})`;

/** What is wrong with a usage object (its path and the rule), or undefined when it is sound. */
function usageProblem(u: unknown, at = 'usage'): string | undefined {
  if (!isObject(u)) return `${at}: must be an object (got ${shown(u)})`;
  for (const k of USAGE_KEYS) if (!isCount(u[k])) return `${at}.${k}: must be a non-negative integer (got ${shown(u[k])})`;
  return unknownKey(u, USAGE_KEYS, at);
}

/** What is wrong with one streamed piece, or undefined. */
export function chunkProblem(c: unknown, at: string): string | undefined {
  if (!isObject(c)) return `${at}: must be an object (got ${shown(c)})`;
  if (c.type === 'text') return typeof c.delta === 'string' ? unknownKey(c, ['type', 'delta'], at) : `${at}.delta: must be a string`;
  if (c.type !== 'tool_call') return `${at}.type: must be 'text' or 'tool_call' (got ${shown(c.type)})`;
  if (!(isCount(c.index) && c.index < MAX_TOOL_CALLS))
    return `${at}.index: must be an integer from 0 to ${MAX_TOOL_CALLS - 1} (got ${shown(c.index)})`;
  for (const k of ['id', 'name', 'arguments']) {
    const p = optionalString(c[k], `${at}.${k}`);
    if (p) return p;
  }
  return unknownKey(c, ['type', 'index', 'id', 'name', 'arguments'], at);
}

/** What is wrong with a completion's result, or undefined. */
export function resultProblem(r: unknown, at = 'result'): string | undefined {
  if (!isObject(r)) return `${at}: must be an object (got ${shown(r)})`;
  if (r.content !== null && typeof r.content !== 'string') return `${at}.content: must be a string or null (got ${shown(r.content)})`;
  if (!Array.isArray(r.tool_calls)) return `${at}.tool_calls: must be an array`;
  if (r.tool_calls.length > MAX_TOOL_CALLS) return `${at}.tool_calls: at most ${MAX_TOOL_CALLS} calls`;
  for (const [i, call] of r.tool_calls.entries()) {
    const where = `${at}.tool_calls[${i}]`;
    if (!isObject(call) || call.type !== 'function' || typeof call.id !== 'string' || !isObject(call.function))
      return `${where}: must be {id: string, type: 'function', function: {name, arguments}}`;
    if (typeof call.function.name !== 'string' || typeof call.function.arguments !== 'string')
      return `${where}.function: name and arguments must be strings`;
  }
  if (!FINISH_REASONS.has(r.finish_reason as string))
    return `${at}.finish_reason: must be one of ${[...FINISH_REASONS].join(', ')} (got ${shown(r.finish_reason)})`;
  return usageProblem(r.usage, `${at}.usage`) ?? unknownKey(r, ['content', 'tool_calls', 'finish_reason', 'usage'], at);
}

const invalidAnswer = (provider: ChatProvider, problem: string) =>
  new ModelError('server_error', `The model provider '${provider.name}' gave an answer Standin cannot use: ${problem}.`);

/** The provider with each piece and each result it gives checked (a ModelError naming the rule when one is unsound). */
export function checkedProvider(provider: ChatProvider): ChatProvider {
  return {
    name: provider.name,
    async complete(request, onChunk) {
      const pass = onChunk
        ? (chunk: unknown) => {
            const problem = chunkProblem(chunk, 'chunk');
            if (problem) throw invalidAnswer(provider, problem);
            onChunk(chunk as Parameters<typeof onChunk>[0]);
          }
        : undefined;
      const result = await provider.complete(request, pass);
      const problem = resultProblem(result);
      if (problem) throw invalidAnswer(provider, problem);
      return result;
    },
  };
}
