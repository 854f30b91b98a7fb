/** What logs the events: pino's logger, or anything with its three levels (the job queue's). */
type Logger = {
  info(o: unknown, msg: string): void;
  warn(o: unknown, msg: string): void;
  error(o: unknown, msg: string): void;
};

/**
 * The instance's state changes as structured log lines at `info` (problems at `warn`/`error`), each with an
 * `event` field an operator can filter on (docs/operations.md, "Events"). A check is logged when it
 * changes, not each time it is read.
 */
export type InstanceEvent =
  | 'migrations.started'
  | 'migrations.finished'
  | 'instance.listening'
  | 'instance.started'
  | 'instance.ready'
  | 'instance.not_ready'
  | 'instance.signal'
  | 'instance.draining'
  | 'instance.stopped'
  | 'store.unreachable'
  | 'store.reachable'
  | 'redis.down'
  | 'redis.up'
  | 'backend.down'
  | 'backend.up'
  | 'work.taken_over';

/** One readiness check as /readyz reports it. */
export interface CheckResult {
  name: string;
  ok: boolean;
  reason?: string;
}

/**
 * Remembers the last state of each readiness check and of the whole, and logs what changed: the store
 * (`store.unreachable` / `store.reachable`), a module's backend (`backend.down` / `backend.up`, the
 * limiter's Redis logs `redis.down` / `redis.up` itself), and the instance (`instance.ready` /
 * `instance.not_ready` with the reasons). The first report logs the instance's state.
 */
export function readinessLog(log: Logger): { report(checks: readonly CheckResult[]): void } {
  const last = new Map<string, boolean>();
  let ready: boolean | undefined;
  return {
    report(checks) {
      for (const c of checks) {
        const was = last.get(c.name);
        last.set(c.name, c.ok);
        // The shutdown check is the drain, logged by the stop itself (instance.draining).
        if (was === c.ok || c.name === 'shutdown' || (was === undefined && c.ok)) continue;
        if (c.name === 'store')
          if (c.ok) log.info({ event: 'store.reachable' }, 'the store is reachable again');
          else log.error({ event: 'store.unreachable', reason: c.reason }, 'the store is unreachable');
        else if (c.ok) log.info({ event: 'backend.up', check: c.name }, `${c.name}: its backend is back`);
        else log.warn({ event: 'backend.down', check: c.name, reason: c.reason }, `${c.name}: its backend is down`);
      }
      const now = checks.every((c) => c.ok);
      if (now === ready) return;
      ready = now;
      if (now) log.info({ event: 'instance.ready' }, 'ready: /readyz answers 200');
      else
        log.warn(
          { event: 'instance.not_ready', reasons: checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.reason ?? 'down'}`) },
          'not ready: /readyz answers 503',
        );
    },
  };
}

/**
 * The line a worker logs when it takes over work another instance held and lost (its lease lapsed):
 * `{"event":"work.taken_over","kind":…,"id":…}` at info, with what else helps (`attempt`, `lapsed_ms`).
 * Every kind of work (runs, background responses, batches, ingestion, deliveries) logs it the same way,
 * so one filter shows every takeover.
 */
export function logWorkTakenOver(
  log: Logger,
  work: { kind: string; id: string; attempt?: number; lapsed_ms?: number } & Record<string, unknown>,
): void {
  log.info({ event: 'work.taken_over' satisfies InstanceEvent, ...work }, `took over ${work.kind} ${work.id} from a lost instance`);
}
