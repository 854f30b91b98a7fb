import { MAX_JSON_DEPTH } from '../core/json-body.js';
import { chunkProblem, resultProblem, shown } from './answer.js';
import type { ModelErrorCode } from './errors.js';
import type { ChatChunk, ChatResult } from './types.js';

/**
 * The format of a fixture file, checked before Standin uses one: a fixture is a file anyone may have
 * edited (or sent in a pull request), so it is outside input like a request body.
 */
export const FIXTURE_VERSION = 1;

/** What a fixture file holds, in this order (keys sorted inside `request`, so files diff well). */
export interface Exchange {
  standin_fixture: typeof FIXTURE_VERSION;
  key: string;
  request: Record<string, unknown>;
  /** The pieces the provider passed on as the answer arrived; a replay passes the same ones. */
  chunks: ChatChunk[];
  result?: ChatResult;
  /** An error the upstream answered with (an HTTP status): replayed as the same error. */
  error?: { code: ModelErrorCode; message: string; status: number | null };
}

/** A recorded request nests as deep as a request body may (MAX_JSON_DEPTH), one level down in the file. */
export const MAX_FIXTURE_DEPTH = MAX_JSON_DEPTH + 2;

const ERROR_CODES = new Set(['server_error', 'rate_limit_exceeded', 'invalid_prompt']);
const TOP_KEYS = ['standin_fixture', 'key', 'request', 'chunks', 'result', 'error'];

/** Whether JSON text nests deeper than `max` (a scan of the text that skips strings: linear, no objects built). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // \ escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The rule a parsed fixture breaks (a path and the rule), or undefined. */
function problemOf(v: unknown): string | undefined {
  if (!isObject(v)) return 'it is not a JSON object';
  const extra = Object.keys(v).find((k) => !TOP_KEYS.includes(k));
  if (extra !== undefined) return `it has an unknown member '${extra.slice(0, 64)}'`;
  if (v.standin_fixture !== FIXTURE_VERSION) return `standin_fixture: must be ${FIXTURE_VERSION} (got ${shown(v.standin_fixture)})`;
  if (typeof v.key !== 'string' || !/^[0-9a-f]{64}$/.test(v.key)) return 'key: must be the sha256 of the request, 64 hex digits';
  if (!isObject(v.request)) return 'request: must be an object';
  if (!Array.isArray(v.chunks)) return 'chunks: must be an array';
  for (const [i, c] of v.chunks.entries()) {
    const p = chunkProblem(c, `chunks[${i}]`);
    if (p) return p;
  }
  if ((v.result === undefined) === (v.error === undefined)) return "it must hold either 'result' or 'error'";
  if (v.result !== undefined) return resultProblem(v.result, 'result');
  const e = v.error;
  if (!isObject(e)) return 'error: must be an object';
  if (!ERROR_CODES.has(e.code as string)) return `error.code: must be one of ${[...ERROR_CODES].join(', ')} (got ${shown(e.code)})`;
  if (typeof e.message !== 'string') return 'error.message: must be a string';
  if (e.status !== null && !(Number.isInteger(e.status) && (e.status as number) >= 400 && (e.status as number) <= 599))
    return `error.status: must be an HTTP error status (400-599) or null (got ${shown(e.status)})`;
  const extraError = Object.keys(e).find((k) => !['code', 'message', 'status'].includes(k));
  return extraError === undefined ? undefined : `error: unknown member '${extraError.slice(0, 64)}'`;
}

/** The exchange a fixture's text holds; throws an Error whose message is the rule it breaks. */
export function parseFixture(text: string): Exchange {
  if (nestsDeeperThan(text, MAX_FIXTURE_DEPTH)) throw new Error(`it nests deeper than ${MAX_FIXTURE_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // Only where: the parser's own message quotes the text, which need not be a fixture's (a link, a mistake).
    const at = /position \d+/.exec((err as Error).message)?.[0];
    throw new Error(`it is not JSON${at ? ` (at ${at})` : ''}`);
  }
  const problem = problemOf(value);
  if (problem) throw new Error(problem);
  return value as Exchange;
}
