import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { Counter, Gauge, Histogram, Registry } from './prom.js';
import { SeriesCounter, SeriesHistogram, type Observer } from './series.js';
import { wallNow } from '../core/clock.js';
import { routeConfigOf } from '../core/route-path.js';
import type { Ctx } from '../core/module.js';

/** The metrics of one Standin: its own registry (several Standins share a test process), fed by one hook. */
export interface Metrics {
  registry: Registry;
  /** Counts a finished request under its route template (never the raw URL: bounded label values). */
  observe(request: FastifyRequest, reply: FastifyReply, route?: string): void;
  /** One webhook attempt (its outcome and time) and, when it ended the delivery, the delivery's status. */
  webhookAttempt(result: AttemptOutcome, deliveryStatus: string): void;
  /** A webhook delivery that ended without an attempt (its endpoint was disabled meanwhile). */
  webhookDeliveryEnded(status: 'failed'): void;
  /** Run stream events written: each `thread.run.<status>` is a run entering that status. */
  runEvents(events: readonly { event: string }[]): void;
  /** One ingestion attempt of one file: how it ended and, when it ran, for how long since `startedMs` (performance.now()). */
  ingestion(outcome: IngestionOutcome, startedMs?: number): void;
  /** Starts sampling the event loop delay (while the instance listens). */
  start(): void;
  stop(): void;
}

/** What the webhook metrics read of an attempt (webhooks/deliver.ts's result). */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  timedOut: boolean;
  durationUs: number;
}

/** How one ingestion attempt of a file ended (`retried`: an error worth another attempt; `superseded`: cancelled or replaced meanwhile). */
export type IngestionOutcome = 'completed' | 'failed' | 'retried' | 'superseded' | 'abandoned';

/** The statuses of a run, as its stream events name them (`thread.run.<status>`). */
const RUN_STATUS_EVENTS: ReadonlyMap<string, string> = new Map(
  ['queued', 'in_progress', 'requires_action', 'cancelling', 'completed', 'incomplete', 'failed', 'cancelled', 'expired'].map((s) => [
    `thread.run.${s}`,
    s,
  ]),
);

/** A request no route matched (a 404, a refused URL): one label value, whatever the URL was. */
export const UNMATCHED = '(unmatched)';

/** Builds the per-instance registry: request metrics, rate-limit decisions, and gauges read at scrape time. */
export function createMetrics(ctx: Ctx): Metrics {
  const registry = new Registry();
  const requests = new SeriesHistogram({
    name: 'standin_http_request_duration_seconds',
    help: 'Requests by method, route template and status, with their latency',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const decisions = new SeriesCounter({
    name: 'standin_rate_limit_decisions_total',
    help: 'Rate-limited requests by route template and decision (admitted, limited)',
    labelNames: ['route', 'decision'] as const,
    registers: [registry],
  });
  const attempts = new Histogram({
    name: 'standin_webhook_attempt_duration_seconds',
    help: 'Webhook delivery attempts by outcome (ok: 2xx; http_error: another status; timeout; error: no answer), with their time',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'standin_webhook_deliveries_total',
    help: 'Webhook deliveries that ended, by status (succeeded, failed: out of attempts or the endpoint disabled)',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const runs = new Counter({
    name: 'standin_run_transitions_total',
    help: 'Runs entering each status (queued, in_progress, requires_action, cancelling, completed, incomplete, failed, cancelled, expired)',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const ingestions = new Histogram({
    name: 'standin_ingestion_duration_seconds',
    help: 'Ingestion attempts of vector store files by outcome (completed, failed, retried, superseded, abandoned), with their time',
    labelNames: ['outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  jobGauges(ctx, registry);
  poolGauges(ctx, registry);
  const lag = lagGauges(registry);
  // The series of each route, method and status, made once: a request allocates and hashes nothing.
  const seriesOf = seriesCache(requests, decisions);
  return {
    registry,
    observe(request, reply, route = routeConfigOf(request)?.url ?? UNMATCHED) {
      const status = reply.statusCode;
      const series = seriesOf(route, request.method, status);
      series.request.observe(reply.elapsedTime / 1000);
      // A limited route says so in its x-ratelimit-* headers; a 429 is the limiter's refusal.
      if (status === 429) series.limited.observe(1);
      else if (reply.hasHeader('x-ratelimit-limit-requests')) series.admitted.observe(1);
    },
    webhookAttempt(result, deliveryStatus) {
      const outcome = result.ok ? 'ok' : result.timedOut ? 'timeout' : result.statusCode !== null ? 'http_error' : 'error';
      attempts.observe({ outcome }, result.durationUs / 1e6);
      if (deliveryStatus === 'succeeded' || deliveryStatus === 'failed') deliveries.inc({ status: deliveryStatus });
    },
    webhookDeliveryEnded(status) {
      deliveries.inc({ status });
    },
    runEvents(events) {
      for (const e of events) {
        const status = RUN_STATUS_EVENTS.get(e.event);
        if (status) runs.inc({ status });
      }
    },
    ingestion(outcome, startedMs) {
      // An attempt that never ran (abandoned after its process died) has no time: counted at 0 s.
      ingestions.observe({ outcome }, startedMs === undefined ? 0 : (performance.now() - startedMs) / 1000);
    },
    start: lag.start,
    stop: lag.stop,
  };
}

interface RequestSeries {
  request: Observer;
  limited: Observer;
  admitted: Observer;
}

/**
 * The series of a request by route, method and status. Bounded: routes are templates (or UNMATCHED),
 * methods those Node's parser accepts, statuses three digits.
 */
function seriesCache(
  requests: SeriesHistogram<'method' | 'route' | 'status'>,
  decisions: SeriesCounter<'route' | 'decision'>,
): (route: string, method: string, status: number) => RequestSeries {
  const routes = new Map<string, Map<string, Map<number, RequestSeries>>>();
  // A route's decisions do not depend on the method or status: one pair of series a route.
  const decided = new Map<string, { limited: Observer; admitted: Observer }>();
  return (route, method, status) => {
    let methods = routes.get(route);
    if (!methods) routes.set(route, (methods = new Map()));
    let statuses = methods.get(method);
    if (!statuses) methods.set(method, (statuses = new Map()));
    let series = statuses.get(status);
    if (!series) {
      let d = decided.get(route);
      if (!d)
        decided.set(
          route,
          (d = { limited: decisions.series({ route, decision: 'limited' }), admitted: decisions.series({ route, decision: 'admitted' }) }),
        );
      series = { request: requests.series({ method, route, status }), ...d };
      statuses.set(status, series);
    }
    return series;
  };
}

/** Job queue depth and age by kind (deliveries, runs, ingestion, batches): one grouped query, only when scraped. */
function jobGauges(ctx: Ctx, registry: Registry): void {
  // Both gauges are collected concurrently in one scrape: they share the query in flight.
  let inFlight: Promise<void> | undefined;
  const refresh = (): Promise<void> =>
    (inFlight ??= readJobs(ctx, depth, backlog, oldest).finally(() => {
      inFlight = undefined;
    }));
  const depth: Gauge<'kind' | 'state'> = new Gauge({
    name: 'standin_jobs',
    help: 'Jobs in the queue by kind and state (waiting: due or scheduled, unclaimed; running: claimed)',
    labelNames: ['kind', 'state'] as const,
    registers: [registry],
    collect: refresh,
  });
  const backlog: Gauge<'kind'> = new Gauge({
    name: 'standin_jobs_backlog',
    help: 'Jobs of each kind that are due and not claimed: work waiting for a worker (jobs scheduled later are not counted)',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect: refresh,
  });
  const oldest: Gauge<'kind'> = new Gauge({
    name: 'standin_jobs_oldest_due_age_seconds',
    help: 'How long the oldest due, unclaimed job of each kind has waited',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect: refresh,
  });
}

async function readJobs(ctx: Ctx, depth: Gauge<'kind' | 'state'>, backlog: Gauge<'kind'>, oldest: Gauge<'kind'>): Promise<void> {
  const now = ctx.clock.now();
  // Claims last in wall-clock time (core/jobs.ts); when a job is due is Standin-clock time.
  const claimed = sql<number>`case when locked_until is not null and locked_until >= ${wallNow()} then 1 else 0 end`;
  const rows = await ctx.store.db
    .selectFrom('jobs')
    .select((eb) => [
      'kind',
      eb.fn.countAll<number>().as('total'),
      eb.fn.sum<number>(claimed).as('running'),
      eb.fn.sum<number>(sql<number>`case when run_at <= ${now} and ${claimed} = 0 then 1 else 0 end`).as('due'),
      eb.fn.min<number>(sql<number>`case when run_at <= ${now} and ${claimed} = 0 then run_at end`).as('oldest'),
    ])
    .groupBy('kind')
    .execute();
  // A kind whose queue emptied since the last scrape disappears, rather than keep its old value.
  depth.reset();
  backlog.reset();
  oldest.reset();
  for (const r of rows) {
    const running = Number(r.running ?? 0);
    depth.set({ kind: r.kind, state: 'running' }, running);
    depth.set({ kind: r.kind, state: 'waiting' }, Number(r.total) - running);
    backlog.set({ kind: r.kind }, Number(r.due ?? 0));
    oldest.set({ kind: r.kind }, r.oldest === null ? 0 : Math.max(0, now - Number(r.oldest)) / 1000);
  }
}

/** PostgreSQL connections of the transaction pool (SQLite has none). */
function poolGauges(ctx: Ctx, registry: Registry): void {
  const pool = ctx.store.pgPool;
  if (!pool) return;
  new Gauge({
    name: 'standin_store_pool_connections',
    help: 'PostgreSQL pool connections by state (total, idle, waiting: checkouts queued for one)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
}

/** Event loop delay, sampled by Node while the instance listens; read (and the window restarted) at scrape. */
function lagGauges(registry: Registry): { start(): void; stop(): void } {
  let histogram: IntervalHistogram | undefined;
  const read = (name: string, help: string, value: (h: IntervalHistogram) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        if (histogram) this.set(value(histogram) / 1e9);
      },
    });
  read('standin_event_loop_lag_p99_seconds', 'Event loop delay, 99th percentile since the last scrape', (h) => h.percentile(99));
  read('standin_event_loop_lag_max_seconds', 'Event loop delay, largest since the last scrape', (h) => h.max);
  // Registered last, so the percentiles above are read before the window restarts.
  new Gauge({
    name: 'standin_event_loop_lag_mean_seconds',
    help: 'Event loop delay, mean since the last scrape',
    registers: [registry],
    collect() {
      if (!histogram) return;
      this.set(histogram.mean / 1e9 || 0);
      histogram.reset();
    },
  });
  return {
    start() {
      histogram ??= monitorEventLoopDelay({ resolution: 20 });
      histogram.enable();
    },
    stop() {
      histogram?.disable();
    },
  };
}
