import type { Clock } from '../core/clock.js';
import { ApiError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { retryHeaders } from './service.js';

/** An injected failure: the next `remaining` requests matching `path` and `method` fail with `status`. */
export interface Fault {
  id: string;
  object: 'admin.fault';
  path: string;
  method: string;
  status: 429 | 503 | 500;
  remaining: number;
  /** Seconds, or null for no Retry-After. */
  retry_after: number | null;
  created_at: number;
}

export interface FaultInput {
  path: string;
  method?: string;
  status: 429 | 503 | 500;
  count?: number;
  retry_after?: number;
}

/** The error each status stands for: the platform's own 429 slow_down, 503 overload and 500. */
const ERRORS = {
  429: () => new ApiError('rate_limit_error', 'Your request rate rose too quickly. Reduce your request rate, then increase it gradually.', { code: 'slow_down' }),
  503: () => new ApiError('service_unavailable_error', 'The model is currently overloaded with other requests. You can retry your request.', { code: 'server_is_overloaded' }),
  500: () => new ApiError('server_error', 'The server had an error while processing your request. Sorry about that!', { code: null }),
} as const;

/** A path pattern: a glob when it has `*` (`*` within a segment, `**` across segments), else a prefix. */
export function pathMatcher(pattern: string): (path: string) => boolean {
  if (!pattern.includes('*')) return (path) => path.startsWith(pattern);
  const re = new RegExp(
    '^' +
      pattern
        .split(/(\*\*|\*)/)
        .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
        .join('') +
      '$',
  );
  return (path) => re.test(path);
}

/** The fault table of this process (faults are per instance: see docs/rate-limits.md). */
export function createFaults(clock: Clock) {
  const faults: (Fault & { match: (p: string) => boolean })[] = [];
  const view = ({ match: _m, ...f }: Fault & { match: unknown }): Fault => f;
  return {
    add(input: FaultInput): Fault {
      const f = {
        id: newId('fault', clock),
        object: 'admin.fault' as const,
        path: input.path,
        method: input.method ?? '*',
        status: input.status,
        remaining: input.count ?? 1,
        retry_after: input.retry_after ?? null,
        created_at: clock.nowSeconds(),
        match: pathMatcher(input.path),
      };
      faults.push(f);
      return view(f);
    },
    list: (): Fault[] => faults.map(view),
    size: () => faults.length,
    get: (id: string) => {
      const f = faults.find((x) => x.id === id);
      return f ? view(f) : undefined;
    },
    remove(id: string): boolean {
      const i = faults.findIndex((f) => f.id === id);
      if (i < 0) return false;
      faults.splice(i, 1);
      return true;
    },
    clear() {
      faults.length = 0;
    },
    /** The error for this request if a fault takes it (using up one of the fault's count), else null. */
    take(method: string, path: string): ApiError | null {
      if (faults.length === 0) return null;
      for (let i = 0; i < faults.length; i++) {
        const f = faults[i];
        if ((f.method !== '*' && f.method !== method) || !f.match(path)) continue;
        if (--f.remaining <= 0) faults.splice(i, 1);
        const err = ERRORS[f.status]();
        Object.assign(err.headers, { 'x-standin-fault': f.id }, f.retry_after !== null ? retryHeaders(f.retry_after * 1000) : {});
        return err;
      }
      return null;
    },
  };
}

export type Faults = ReturnType<typeof createFaults>;
