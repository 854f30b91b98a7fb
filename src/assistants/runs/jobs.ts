import { Type, type Static, type TSchema } from 'typebox';
import type { JobDefinition } from '../../core/jobs.js';
import type { Ctx } from '../../core/module.js';
import type { Exec } from '../../store/db.js';

/**
 * The job catalog of runs: each kind with its payload, how many run at once in one process, its
 * visibility timeout (how long a claim lasts before another worker may take the job) and its retry
 * schedule. Handlers own their retries: they return `{ retryAt }` to be looked at again; an unexpected
 * throw comes back after `retryDelayMs`.
 */
interface JobKind {
  payload: TSchema;
  concurrency: number;
  /** Unset: the queue's `--lease-ms`, renewed while the job runs. */
  visibilityMs?: number;
  retryDelayMs: number;
}

/** When a run's watchdog job looks at it again (Standin clock ms): one lease (`--lease-ms`), see `run.execute`. */
export const watchMs = (ctx: Pick<Ctx, 'settings'>): number => ctx.settings.leaseMs;

const RunRef = Type.Object({ runId: Type.String() });

export const RUN_JOBS = {
  /**
   * Executes a run (engine.ts). The worker holds the job while it executes (both the job's claim and the
   * run's lease last `--lease-ms`, renewed), so the job of a worker that died comes back when the run's
   * lease has lapsed too. A run started at once by the instance that queued it has this job as its
   * watchdog, due one lease later; a run held elsewhere is looked at again when that lease would lapse.
   */
  'run.execute': { payload: RunRef, concurrency: 32, retryDelayMs: 1000 },
  /** Due at the run's deadline: expires an unfinished run; later drops the event log of an ended one. */
  'run.expire': { payload: RunRef, concurrency: 8, retryDelayMs: 5000 },
} satisfies Record<string, JobKind>;

export type RunJobKind = keyof typeof RUN_JOBS;
export type RunJobPayload<K extends RunJobKind> = Static<(typeof RUN_JOBS)[K]['payload']>;
export type RunHandlers = { [K in RunJobKind]: (payload: RunJobPayload<K>) => Promise<void | { retryAt: number }> };

/** Queues a run job in the caller's transaction, so it commits with the state change. */
export function enqueueRunJob<K extends RunJobKind>(
  ctx: Pick<Ctx, 'jobs'>,
  exec: Exec,
  kind: K,
  payload: RunJobPayload<K>,
  opts: { runAt?: number; id?: string } = {},
): Promise<string> {
  return ctx.jobs.enqueue(exec, kind, payload, opts);
}

/**
 * The id of a run's watchdog: the execute job its creation queues (service/write.ts). Known from the run,
 * so the run's end drops it in the same transaction (dropWatchdog) rather than leave it to be claimed,
 * find the run ended and be deleted, one lease after.
 */
export const watchdogId = (runId: string): string => `job_watch_${runId}`;

/** Drops the run's watchdog job in the caller's transaction (nothing when it is gone or was never queued). */
export function dropWatchdog(ctx: Pick<Ctx, 'jobs'>, exec: Exec, runId: string): Promise<void> {
  return ctx.jobs.remove(exec, watchdogId(runId));
}

/**
 * The catalog as the job queue takes it, with the engine's handlers. `abandon` is told of a run whose
 * execution kept killing its process (`--job-max-deaths`): the engine fails it rather than take it over again.
 */
export function runJobDefinitions(handlers: RunHandlers, abandon?: (runId: string, reason: string) => Promise<void>): JobDefinition[] {
  return (Object.keys(RUN_JOBS) as RunJobKind[]).map((kind) => {
    const def: JobKind = RUN_JOBS[kind];
    return {
      kind,
      handler: handlers[kind],
      concurrency: def.concurrency,
      visibilityMs: def.visibilityMs,
      retryDelayMs: def.retryDelayMs,
      // The engine logs the run it takes over (takeover.ts).
      logsTakeover: kind === 'run.execute',
      ...(kind === 'run.execute' && abandon
        ? { onAbandon: (p: RunJobPayload<'run.execute'>, reason: string) => abandon(p.runId, reason) }
        : {}),
    };
  });
}
