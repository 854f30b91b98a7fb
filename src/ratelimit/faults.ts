import { createHash } from 'node:crypto';
import { ApiError, invalid, type ErrorType } from '../core/errors.js';
import { retryHeaders } from './service.js';

/**
 * Injected failures: the next `remaining` requests matching `path` and `method` fail with `status`, in the
 * error envelope of `type` and `code` (each with `probability`, after `latency_ms`; a fault with a latency
 * and no status only delays). This file holds what is pure about them (validation, the error a fault
 * answers with, matching, the seeded roll); `fault-sync.ts` claims uses in the store and keeps every
 * instance's table in step with it.
 */
export interface Fault {
  id: string;
  object: 'admin.fault';
  path: string;
  method: string;
  /** Null for a fault that only delays (`latency_ms`) and lets the request through. */
  status: FaultStatus | null;
  type: ErrorType | null;
  code: string | null;
  /** The error message; null: the platform's message for the type and code. */
  message: string | null;
  remaining: number;
  /** Seconds, or null for no Retry-After. */
  retry_after: number | null;
  /** Chance (0..1] that a matching request is taken; a request not taken passes and uses none of the count. */
  probability: number;
  /** Makes the rolls repeatable: the nth matching request (counted in the store) is taken per `rollOf`. */
  seed: number | null;
  /** Wall-clock milliseconds a taken request waits before its answer (or before it goes on). */
  latency_ms: number;
  created_at: number;
}

export type FaultStatus = 429 | 503 | 500;

export interface FaultInput {
  path: string;
  method?: string;
  status?: FaultStatus;
  type?: ErrorType;
  code?: string | null;
  message?: string;
  count?: number;
  retry_after?: number;
  probability?: number;
  seed?: number;
  latency_ms?: number;
}

/** Every error type of core/errors.ts (the compile-time check below keeps the list complete). */
export const ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'conflict_error',
  'unprocessable_entity_error',
  'rate_limit_error',
  'insufficient_quota',
  'server_error',
  'service_unavailable_error',
] as const satisfies readonly ErrorType[];
type Unlisted = Exclude<ErrorType, (typeof ERROR_TYPES)[number]>;
// A type added to ErrorType and not here fails to compile.
const _everyTypeListed: [Unlisted] extends [never] ? true : Unlisted = true;

export const FAULT_STATUSES: readonly FaultStatus[] = [429, 503, 500];

/** The type a status stands for when the fault names none: the platform's 429 slow_down, 503 overload, 500. */
const TYPE_OF_STATUS: Record<FaultStatus, ErrorType> = { 429: 'rate_limit_error', 503: 'service_unavailable_error', 500: 'server_error' };

/** The code a type gets when the fault names none. */
const DEFAULT_CODE: Partial<Record<ErrorType, string | null>> = {
  rate_limit_error: 'slow_down',
  insufficient_quota: 'insufficient_quota',
  service_unavailable_error: 'server_is_overloaded',
  server_error: null,
  // The spec's earlier answer to video requests: 429 invalid_request_error rate_limit_exceeded.
  invalid_request_error: 'rate_limit_exceeded',
};

/** The platform's messages for the codes a fault usually carries. */
const MESSAGES: Record<string, string> = {
  slow_down: 'Your request rate rose too quickly. Reduce your request rate, then increase it gradually.',
  rate_limit_exceeded: 'Rate limit reached for requests. Please try again later.',
  insufficient_quota: 'You exceeded your current quota, please check your plan and billing details.',
  server_is_overloaded: 'The model is currently overloaded with other requests. You can retry your request.',
};
const SERVER_ERROR = 'The server had an error while processing your request. Sorry about that!';

/** The status the error type table (core/errors.ts) gives a type. */
const statusOfType = (type: ErrorType) => new ApiError(type, '').status;

/**
 * Resolves a fault's status, type and code, checked against the error type table: a type answers with its
 * table status, which must be one a fault injects (429, 503, 500). One exception, from the spec: 429 with
 * `invalid_request_error` (the platform's earlier `rate_limit_exceeded` answer to video requests).
 */
export function resolveFault(input: FaultInput): { status: FaultStatus | null; type: ErrorType | null; code: string | null } {
  if (input.status === undefined && input.type === undefined) {
    if (!input.latency_ms) throw invalid("A fault needs a 'status' (429, 503 or 500), an error 'type', or a 'latency_ms'.", 'status');
    for (const field of ['code', 'message', 'retry_after'] as const)
      if (input[field] !== undefined)
        throw invalid(`'${field}' is for a fault that fails requests; this one only delays (no 'status' or 'type').`, field);
    return { status: null, type: null, code: null };
  }
  const type = input.type ?? TYPE_OF_STATUS[input.status!];
  const tableStatus = statusOfType(type);
  const status = input.status ?? (tableStatus as FaultStatus);
  const legacy = status === 429 && type === 'invalid_request_error';
  if (!FAULT_STATUSES.includes(status) || (status !== tableStatus && !legacy)) {
    const allowed = ERROR_TYPES.filter((t) => statusOfType(t) === status);
    throw invalid(
      input.status === undefined
        ? `'type' ${type} answers ${tableStatus}; a fault injects 429, 503 or 500 (rate_limit_error, insufficient_quota, service_unavailable_error, server_error).`
        : `'type' ${type} answers ${tableStatus}, not ${status}; with status ${status} use ${[...allowed, ...(status === 429 ? ['invalid_request_error'] : [])].join(' or ')}.`,
      'type',
      'invalid_value',
    );
  }
  const code = input.code !== undefined ? input.code : (DEFAULT_CODE[type] ?? null);
  return { status, type, code };
}

/** A fault as the store holds it, from what a `POST /admin/v1/faults` body says (checked by resolveFault). */
export function newFault(input: FaultInput, id: string, createdAt: number): Fault {
  const { status, type, code } = resolveFault(input);
  if (input.seed !== undefined && input.probability === undefined)
    throw invalid("'seed' makes the rolls of a 'probability' repeatable; give a 'probability' too.", 'seed');
  return {
    id,
    object: 'admin.fault',
    path: input.path,
    method: input.method ?? '*',
    status,
    type,
    code,
    message: input.message ?? null,
    remaining: input.count ?? 1,
    retry_after: input.retry_after ?? null,
    probability: input.probability ?? 1,
    seed: input.seed ?? null,
    latency_ms: input.latency_ms ?? 0,
    created_at: createdAt,
  };
}

/**
 * Whether the nth matching request (n counted from 1 in the store) of a seeded fault is taken: the first 32
 * bits of sha256("<seed>:<n>") over 2^32, below the probability. The same seed gives the same pattern on
 * any instance, store or platform.
 */
export function rollOf(seed: number, n: number, probability: number): boolean {
  return createHash('sha256').update(`${seed}:${n}`).digest().readUInt32BE(0) / 2 ** 32 < probability;
}

/** The error a failing fault answers with, headers included (`x-standin-fault`, Retry-After when set). */
export function faultError(f: Fault & { status: FaultStatus; type: ErrorType }): ApiError {
  const message =
    f.message ?? (f.code !== null ? MESSAGES[f.code] : undefined) ?? (f.status === 500 ? SERVER_ERROR : `Injected ${f.type}.`);
  const headers: Record<string, string> = { 'x-standin-fault': f.id };
  if (f.retry_after !== null) Object.assign(headers, retryHeaders(f.retry_after * 1000));
  // A quota error is not cured by waiting: the openai SDK does not retry it (as the limiter's own).
  if (f.type === 'insufficient_quota') headers['x-should-retry'] = 'false';
  return new ApiError(f.type, message, { status: f.status, code: f.code, headers });
}

/** A glob token: a character code, or one of these. */
const STAR = -1;
const GLOBSTAR = -2;

/**
 * A path pattern: a glob when it has `*` (`*` within a segment, `**` across segments), else a prefix.
 * The glob runs as a set of positions in the pattern advanced one path character at a time, never by
 * backtracking: at most (pattern length + 1) steps per character, whatever the pattern and the path (a
 * no-key request with thousands of slashes is matched before its key is checked).
 */
export function pathMatcher(pattern: string): (path: string) => boolean {
  if (!pattern.includes('*')) return (path) => path.startsWith(pattern);
  const tokens: number[] = [];
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '*') tokens.push(pattern.charCodeAt(i));
    else if (pattern[i + 1] !== '*') tokens.push(STAR);
    else {
      // `**` (and a longer run of stars, which matches what its widest part does): across segments.
      while (pattern[i + 1] === '*') i++;
      tokens.push(GLOBSTAR);
    }
  }
  return (path) => globMatch(tokens, path);
}

/** Whether `path` matches the glob `tokens` (see pathMatcher); returns the number of steps taken to `steps`, for the tests. */
export function globMatch(tokens: readonly number[], path: string, steps?: { n: number }): boolean {
  const m = tokens.length;
  let at = new Uint8Array(m + 1);
  let next = new Uint8Array(m + 1);
  // A star matches nothing too: a position before one is a position after it.
  const close = (set: Uint8Array) => {
    for (let i = 0; i < m; i++) if (set[i] && tokens[i] < 0) set[i + 1] = 1;
  };
  at[0] = 1;
  close(at);
  let count = 0;
  for (let p = 0; p < path.length; p++) {
    const c = path.charCodeAt(p);
    next.fill(0);
    let any = false;
    for (let i = 0; i < m; i++) {
      count++;
      if (!at[i]) continue;
      const t = tokens[i];
      if (t === GLOBSTAR || (t === STAR && c !== 47)) next[i] = 1;
      else if (t === c) next[i + 1] = 1;
      else continue;
      any = true;
    }
    if (!any) {
      if (steps) steps.n = count;
      return false;
    }
    close(next);
    [at, next] = [next, at];
  }
  if (steps) steps.n = count;
  return at[m] === 1;
}

/**
 * One instance's view of the faults: replaced whole from the store, consulted synchronously by the edge
 * check to learn whether a request has business with a fault at all (the store is asked only then).
 */
export function createFaultTable() {
  let faults: (Fault & { match: (p: string) => boolean })[] = [];
  return {
    /** Replaces the view (oldest first). */
    replace(list: readonly Fault[]) {
      faults = list.filter((f) => f.remaining > 0).map((f) => ({ ...f, match: pathMatcher(f.path) }));
    },
    size: () => faults.length,
    list: (): Fault[] => faults.map(({ match: _m, ...f }) => f),
    /** The live faults this request matches, oldest first (a copy: claims update the view meanwhile). */
    matching(method: string, path: string): Fault[] {
      return faults.filter((f) => (f.method === '*' || f.method === method) && f.match(path)).map(({ match: _m, ...f }) => f);
    },
    /** Follows a claim's outcome: the store's count (0 or undefined: the fault is gone). */
    update(id: string, remaining: number | undefined) {
      const i = faults.findIndex((f) => f.id === id);
      if (i < 0) return;
      if (remaining === undefined || remaining <= 0) faults.splice(i, 1);
      else faults[i].remaining = remaining;
    },
  };
}
