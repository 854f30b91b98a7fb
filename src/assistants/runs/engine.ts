import { randomUUID } from 'node:crypto';
import { wallNow } from '../../core/clock.js';
import { ApiError } from '../../core/errors.js';
import type { Ctx } from '../../core/module.js';
import { ModelError } from '../../models/service.js';
import type { RunBus } from '../bus.js';
import { deleteRunEvents, insertEvents } from '../store/events.js';
import { getRunById, lapseLeases, markInProgress, orphanRunIds, releaseLease, type RunRow } from '../store/runs.js';
import { takeOver } from './takeover.js';
import { runView } from '../views.js';
import { afterEnd, commitRun, endRun, expireIfDue } from './finish.js';
import { enqueueRunJob, watchMs } from './jobs.js';
import { claim, claimAndStart, leaseToken, Lost, watchLease } from './lease.js';
import type { RunEngine } from './runtime.js';
import { isTerminal, WORKER_STATUSES } from './states.js';
import { runTurn } from './turn.js';

/**
 * The run engine. A run is executed by the `run.execute` job, which any worker may claim (with
 * PostgreSQL, any instance; SKIP LOCKED gives it to one). The worker then takes the run's lease
 * (lease.ts) and executes its model turns (turn.ts): the reply ends the run, or its function calls put it
 * in `requires_action` until submit_tool_outputs queues it again (file searches are executed in between).
 *
 * Crashes: a run found `in_progress` with a lapsed lease was being executed by a process that died; the
 * worker that finds it takes it over and continues from its last committed step (takeover.ts): the
 * model turn in flight is made again, nothing committed is repeated. A worker holds the run's execute
 * job while it executes the run, so the job of a dead worker comes back after its visibility timeout
 * (`--lease-ms`, as the run's lease); a run started at once by the instance that queued it (`kick`) has
 * its execute job as a watchdog (jobs.ts). On start, SQLite (one process) clears every lease at once
 * and re-queues the runs; PostgreSQL re-queues runs whose lease has lapsed.
 */

/** Runs one process executes at once; more wait in the queue. */
const MAX_RUNNING = 256;
/** How long a run's event log is kept after the run has ended and its deadline has passed. */
const EVENTS_KEPT_MS = 10 * 60_000;
const INTERRUPTED = 'The run was interrupted because the server processing it stopped. Please create a new run.';
const FAILED = 'The server had an error while processing your run.';

/** Builds the engine of this process; `bus` wakes the runs' followers and carries other instances' cancels. */
export function createRunEngine(ctx: Ctx, bus: RunBus): RunEngine {
  const processId = randomUUID().slice(0, 8);
  const executing = new Map<string, AbortController>();
  const running = new Set<Promise<void>>();
  const db = ctx.store.db;
  let stopping = false;

  function interrupt(runId: string) {
    executing.get(runId)?.abort(new Lost());
  }

  /**
   * Takes the run's lease and starts executing it. Returns the execution (to await or not), or the moment
   * to look again when the run cannot start here now (held elsewhere, or this process is full), or
   * nothing when there is nothing to do.
   */
  async function start(runId: string): Promise<{ done: Promise<void> } | { retryAt: number } | undefined> {
    const now = ctx.clock.now();
    // Stopping: another instance takes it (the job that brought it here is due at once).
    if (stopping) return { retryAt: now };
    // This process is on it already.
    if (executing.has(runId)) return { retryAt: now + watchMs(ctx) };
    if (executing.size >= MAX_RUNNING) return { retryAt: now + 25 };
    const token = leaseToken(processId);
    // A queued run is leased and started in one statement and one commit (the common case); any other
    // (a cancel, an expiry, a takeover, a lease held elsewhere) is leased as it is and driven by its status.
    const fresh = await commitRun(ctx, runId, async (tx) => {
      const row = await claimAndStart(ctx, tx, runId, token);
      if (row) await insertEvents(ctx, tx, runId, Number(row.event_seq) - 1, [{ event: 'thread.run.in_progress', data: runView(row) }]);
      return row;
    });
    const claimed = fresh ?? (await claim(ctx, runId, token));
    if (!claimed) {
      const run = await getRunById(db, runId);
      if (!run || !WORKER_STATUSES.includes(run.status)) return undefined;
      // The lease lasts in wall-clock time; the job's retry is on the Standin clock.
      const lapsesIn = Math.max(0, Number(run.lease_until ?? 0) - wallNow());
      return { retryAt: now + Math.min(lapsesIn, watchMs(ctx)) };
    }
    const ac = new AbortController();
    executing.set(runId, ac);
    const stopWatch = watchLease(ctx, bus, runId, token, ac);
    const done: Promise<void> = (fresh ? turn(fresh, token, ac.signal) : drive(claimed, token, ac.signal))
      .catch((err) => ctx.log.error({ err, run: runId }, 'run execution failed'))
      .finally(() => {
        stopWatch();
        executing.delete(runId);
        running.delete(done);
      });
    running.add(done);
    return { done };
  }

  /**
   * The `run.execute` handler: executes the run while holding the job, so a worker that dies mid-run
   * leaves the job to come back after its visibility timeout, when the lease has lapsed too.
   */
  async function execute({ runId }: { runId: string }): Promise<void | { retryAt: number }> {
    const res = await start(runId);
    if (res && 'done' in res) return void (await res.done);
    return res;
  }

  /** Acts on a run this worker has just leased, by its status. */
  async function drive(run: RunRow, token: string, signal: AbortSignal): Promise<void> {
    if (run.status === 'cancelling') {
      await endRun(ctx, run.id, { status: 'cancelled' });
      return;
    }
    if (ctx.clock.now() >= Number(run.deadline)) {
      const { expired, run: now } = await commitRun(ctx, run.id, (tx) => expireIfDue(ctx, tx, run));
      if (expired) await afterEnd(ctx, now);
      return;
    }
    // In progress with a lapsed lease: the process executing it died, and this worker takes it over.
    const started =
      run.status === 'in_progress'
        ? await takeOver(ctx, run, token).catch((err: unknown) => {
            if (err instanceof Lost) return undefined;
            throw err;
          })
        : await commitRun(ctx, run.id, async (tx) => {
            const row = await markInProgress(tx, run.id, token, ctx.clock.nowSeconds());
            if (row)
              await insertEvents(ctx, tx, run.id, Number(row.event_seq) - 1, [{ event: 'thread.run.in_progress', data: runView(row) }]);
            return row;
          });
    if (!started) return settleAfterLoss(run.id, token);
    await turn(started, token, signal);
  }

  /** Executes the model turns of a run this worker holds in progress; a failure fails the run. */
  async function turn(started: RunRow, token: string, signal: AbortSignal): Promise<void> {
    const run = started;
    try {
      await runTurn(ctx, started, token, signal);
    } catch (err) {
      if (err instanceof Lost || signal.aborted) return settleAfterLoss(run.id, token);
      if (!(err instanceof ModelError) && !(err instanceof ApiError)) ctx.log.error({ err, run: run.id }, 'run failed');
      // A refusal of a service the run used (a file search over an expired store) fails the run with its message.
      const error =
        err instanceof ModelError
          ? { code: err.code, message: err.message }
          : { code: 'server_error' as const, message: err instanceof ApiError ? err.message : FAILED };
      await endRun(ctx, run.id, { status: 'failed', error }, { leaseToken: token });
      await settleAfterLoss(run.id, token);
    }
  }

  /**
   * After the execution stopped early: finish a pending cancel; a run this process stops executing
   * because it shuts down is handed back (its lease released, its job due now: another instance takes
   * it over at once); a run this worker still holds (or nobody holds) in progress otherwise is failed
   * rather than left so; a run still queued under this worker's lease is let go.
   */
  async function settleAfterLoss(runId: string, token: string) {
    const run = await getRunById(db, runId);
    if (!run) return;
    const ours = !run.lease_owner || run.lease_owner === token;
    if (run.status === 'cancelling') await endRun(ctx, runId, { status: 'cancelled' });
    else if (run.status === 'in_progress' && run.lease_owner === token && stopping) {
      await releaseLease(db, runId, token);
      await enqueueRunJob(ctx, db, 'run.execute', { runId });
    } else if (run.status === 'in_progress' && ours)
      await endRun(ctx, runId, { status: 'failed', error: { code: 'server_error', message: INTERRUPTED } });
    else if (run.status === 'queued' && run.lease_owner === token) {
      await releaseLease(db, runId, token);
      await enqueueRunJob(ctx, db, 'run.execute', { runId });
      ctx.jobs.wake('run.execute');
    }
  }

  /**
   * The `run.expire` job, due at the run's deadline: expires an unfinished run; once the run has ended
   * (and its streams have long finished) it drops the run's event log.
   */
  async function expire({ runId }: { runId: string }): Promise<void | { retryAt: number }> {
    const run = await getRunById(db, runId);
    if (!run) return;
    if (isTerminal(run.status)) return deleteRunEvents(db, runId);
    if (ctx.clock.now() < Number(run.deadline)) return { retryAt: Number(run.deadline) };
    const { expired, run: now } = await commitRun(ctx, runId, (tx) => expireIfDue(ctx, tx, run));
    if (expired) {
      interrupt(runId);
      await afterEnd(ctx, now);
    }
    return { retryAt: ctx.clock.now() + EVENTS_KEPT_MS };
  }

  async function sweep(): Promise<number> {
    // One process owns an SQLite store: every lease found at start belongs to a process that is gone.
    if (ctx.store.dialect === 'sqlite') await lapseLeases(db);
    const orphans = await orphanRunIds(db, wallNow());
    for (const runId of orphans) await enqueueRunJob(ctx, db, 'run.execute', { runId });
    if (orphans.length) ctx.jobs.wake('run.execute');
    return orphans.length;
  }

  /**
   * Starts a run in this process right after the commit that queued it, without waiting for the job loop
   * and without holding a job: the run's execute job was queued as a watchdog due one lease later, which
   * finds the run ended (or still held) — or, if this process died, recovers it.
   */
  function kick(runId: string) {
    start(runId)
      .then(async (res) => {
        // Not started here (held elsewhere, or this process is full): a job comes back to it.
        if (res && 'retryAt' in res && res.retryAt < ctx.clock.now() + watchMs(ctx)) {
          await enqueueRunJob(ctx, db, 'run.execute', { runId }, { runAt: res.retryAt });
          ctx.jobs.wake('run.execute');
        }
      })
      .catch((err) => ctx.log.error({ err, run: runId }, 'starting a run failed; its watchdog job will retry'));
  }

  async function stop(timeoutMs = 5000) {
    stopping = true;
    const all = Promise.allSettled([...running]);
    if (timeoutMs > 0) await Promise.race([all, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    const runs = [...executing.keys()];
    for (const ac of executing.values()) ac.abort(new Lost());
    await Promise.race([Promise.allSettled([...running]), new Promise((r) => setTimeout(r, 1000).unref())]);
    if (runs.length) ctx.log.info({ runs }, `stopping: handed ${runs.length} runs back to the queue`);
  }

  /** A run whose execution died with its process `--job-max-deaths` times in a row is failed, not taken over again. */
  async function abandon(runId: string, reason: string) {
    interrupt(runId);
    await endRun(ctx, runId, { status: 'failed', error: { code: 'server_error', message: reason } });
  }

  return { interrupt, kick, sweep, stop, abandon, handlers: { 'run.execute': execute, 'run.expire': expire } };
}
