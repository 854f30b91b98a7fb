import { describe, expect, it } from 'vitest';
import { RequestLog } from '../admin/request-log.js';
import { rateLimitHistory } from './history.js';

// A request log filled directly, as the log controller fills it.
function logWith(
  entries: { path: string; status: number; at: number; model: string | null; route?: string | null; headers?: Record<string, string> }[],
) {
  const log = new RequestLog(100);
  entries.forEach((e, i) =>
    log.add({
      id: `req_${i}`,
      method: 'POST',
      url: e.path,
      status: e.status,
      duration: 100,
      at: e.at,
      credential_id: 'key_x',
      project_id: 'proj_x',
      model: e.model,
      route: e.route === undefined ? '/v1/chat/completions' : e.route,
      reqHeaders: {},
      reqBody: undefined,
      resHeaders: e.headers ?? {},
      resBody: null,
    }),
  );
  return log;
}

describe('rate-limit history from the request log', () => {
  it('buckets requests per model with the tightest remaining, and counts 429s and 503s', () => {
    const now = 1_000_000;
    const h = (limit: number, remaining: number) => ({
      'x-ratelimit-limit-requests': String(limit),
      'x-ratelimit-remaining-requests': String(remaining),
    });
    const log = logWith([
      { path: '/v1/chat/completions', status: 200, at: now - 25, model: 'gpt-4o', headers: h(500, 499) },
      { path: '/v1/chat/completions', status: 200, at: now - 21, model: 'gpt-4o', headers: h(500, 497) },
      { path: '/v1/chat/completions', status: 429, at: now - 5, model: 'gpt-4o' },
      { path: '/v1/threads/thread_abcdef123/runs', status: 503, at: now - 5, model: null, route: '/v1/threads/{thread_id}/runs' },
      { path: '/v1/threads/thread_abcdef456/runs?limit=2', status: 429, at: now - 6, model: null, route: '/v1/threads/{thread_id}/runs' },
      { path: '/v1/nowhere/thread_abcdef123', status: 404, at: now - 5, model: null, route: null },
      { path: '/admin/v1/clock', status: 200, at: now - 5, model: null, route: '/admin/v1/clock' },
      { path: '/v1/chat/completions', status: 200, at: now - 4000, model: 'gpt-4o', headers: h(500, 1) },
    ]);
    const { from, series } = rateLimitHistory(log, now, 1, 10);
    expect(from).toBe(Math.floor((now - 60) / 10) * 10);
    // Unread bodies are grouped by the route's own template, as the API reference names it; a path no route answered, by its shape.
    expect(series.map((s) => s.model)).toEqual(['/v1/nowhere/{id}', '/v1/threads/{thread_id}/runs', 'gpt-4o']);
    const gpt = series.find((s) => s.model === 'gpt-4o')!;
    const busy = gpt.points.find((p) => p.requests === 2)!;
    expect(busy).toMatchObject({ limit_requests: 500, remaining_requests: 497, status_429: 0 });
    expect(gpt.points.reduce((n, p) => n + p.status_429, 0)).toBe(1);
    expect(gpt.points.reduce((n, p) => n + p.requests, 0)).toBe(3);
    const runs = series.find((s) => s.model === '/v1/threads/{thread_id}/runs')!;
    expect(runs.points.reduce((n, p) => n + p.requests, 0)).toBe(2);
    expect(runs.points.reduce((n, p) => n + p.status_503, 0)).toBe(1);
  });
});
