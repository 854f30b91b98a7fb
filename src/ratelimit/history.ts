import { routerPath } from '../core/route-path.js';

/** What the history reads of the control plane's request log (`ctx.services.requestLog`). */
interface LogReader {
  each(
    since: number,
    visit: (
      request: { path: string; status: number; at: number; model: string | null; route: string | null },
      replyHeader: (name: string) => string | undefined,
    ) => void,
  ): void;
}

/** One bucket of one model's traffic: counts, and the tightest rate-limit headers replies carried. */
export interface HistoryPoint {
  t: number;
  requests: number;
  status_429: number;
  status_503: number;
  limit_requests: number | null;
  remaining_requests: number | null;
  limit_tokens: number | null;
  remaining_tokens: number | null;
}

export interface HistorySeries {
  model: string;
  points: HistoryPoint[];
}

const num = (v: string | undefined) => (v === undefined || v === '' || Number.isNaN(Number(v)) ? null : Number(v));
const min = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
const max = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/** A path no route answered, without its query and with ids generalised: `/v1/nowhere/{id}`. */
const unmatchedOf = (path: string) =>
  path
    .split('?')[0]
    .split('/')
    .map((p) => (/^[a-z]+(_[a-z]+)*_[A-Za-z0-9]{6,}$|^[a-z]+-[A-Za-z0-9-]{8,}$/.test(p) ? '{id}' : p))
    .join('/');

/**
 * Rate-limit use over the last minutes, per model, derived from the request log: each reply's
 * x-ratelimit-* headers say the limit and what remained, and 429s and 503s are counted as they were
 * answered. No counters of its own: it sees what the log holds (this instance's requests).
 */
export function rateLimitHistory(
  log: LogReader,
  now: number,
  minutes: number,
  bucketSeconds: number,
): { from: number; series: HistorySeries[] } {
  const from = Math.floor((now - minutes * 60) / bucketSeconds) * bucketSeconds;
  const buckets = Math.ceil((now - from + 1) / bucketSeconds);
  const byModel = new Map<string, HistoryPoint[]>();
  const empty = (i: number): HistoryPoint => ({
    t: from + i * bucketSeconds,
    requests: 0,
    status_429: 0,
    status_503: 0,
    limit_requests: null,
    remaining_requests: null,
    limit_tokens: null,
    remaining_tokens: null,
  });
  log.each(from, (r, header) => {
    // The route that ran, or the path as the router read it: `/%761/…` is /v1 traffic too.
    if (!(r.route ?? routerPath(r.path))?.startsWith('/v1/')) return;
    // Requests refused before their body was read (a fault at the edge, a 429 before parsing) have no model:
    // the route's own path template names them (`/v1/threads/{thread_id}/runs`), as the API reference does.
    const model = r.model ?? r.route ?? unmatchedOf(routerPath(r.path) ?? r.path);
    let points = byModel.get(model);
    if (!points) byModel.set(model, (points = Array.from({ length: buckets }, (_, i) => empty(i))));
    const p = points[Math.min(buckets - 1, Math.max(0, Math.floor((r.at - from) / bucketSeconds)))];
    p.requests++;
    if (r.status === 429) p.status_429++;
    if (r.status === 503) p.status_503++;
    p.limit_requests = max(p.limit_requests, num(header('x-ratelimit-limit-requests')));
    p.remaining_requests = min(p.remaining_requests, num(header('x-ratelimit-remaining-requests')));
    p.limit_tokens = max(p.limit_tokens, num(header('x-ratelimit-limit-tokens')));
    p.remaining_tokens = min(p.remaining_tokens, num(header('x-ratelimit-remaining-tokens')));
  });
  return { from, series: [...byModel].map(([model, points]) => ({ model, points })).sort((a, b) => a.model.localeCompare(b.model)) };
}
