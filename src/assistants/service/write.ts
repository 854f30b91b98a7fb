import type { Ctx } from '../../core/module.js';
import type { Tx } from '../../store/db.js';
import { settleTicket } from '../runs/finish.js';
import { enqueueRunJob, watchdogId, watchMs } from '../runs/jobs.js';
import { runtime } from '../runs/runtime.js';

/** What a write did to runs, acted on after its commit. */
export interface Effects {
  /** Runs whose event log grew: their followers are woken. */
  touched: Set<string>;
  /** Runs queued for execution this process starts itself. */
  kick: Set<string>;
  /** Runs the write ended (expired): their execution stops and their admission is given back. */
  ended: Set<string>;
}

/**
 * Runs `fn` in a transaction, then wakes the followers of the runs it touched and, once the caller has
 * answered, starts the runs it queued. The job loop is not woken: the jobs queued here are watchdogs due
 * later (or, in a process without workers, another instance's business, which PostgreSQL's NOTIFY reaches).
 */
export async function write<T>(ctx: Ctx, fn: (tx: Tx, fx: Effects) => Promise<T>): Promise<T> {
  const fx: Effects = { touched: new Set(), kick: new Set(), ended: new Set() };
  const out = await ctx.store.db.transaction().execute((tx) => fn(tx, fx));
  const rt = runtime(ctx);
  for (const id of fx.touched) rt.bus.notify(id);
  for (const id of fx.ended) {
    rt.bus.notify(id);
    rt.engine.interrupt(id);
    await settleTicket(ctx, id);
  }
  // Started once the caller has answered (its reply, a stream's first events, goes out in this turn's
  // microtasks): a run started at once interleaved its execution with them, and the create's answer waited.
  if (fx.kick.size) setImmediate(() => fx.kick.forEach((id) => rt.engine.kick(id)));
  return out;
}

/**
 * Queues the execution of a run in the caller's transaction. A process with workers starts the run
 * itself right after the commit (`kick`), so the job is only the watchdog, due one lease later; otherwise
 * the job is due now and any worker takes it.
 */
export async function queueExecution(ctx: Ctx, tx: Tx, runId: string, fx: Effects, opts: { created?: boolean } = {}): Promise<void> {
  const direct = runtime(ctx).direct;
  // The creation's watchdog has an id the run's end knows (runs/jobs.ts dropWatchdog); a later one (a
  // cancel, tool outputs) may meet it still queued, so it gets its own.
  const id = direct && opts.created ? { id: watchdogId(runId) } : {};
  await enqueueRunJob(ctx, tx, 'run.execute', { runId }, direct ? { runAt: ctx.clock.now() + watchMs(ctx), ...id } : {});
  if (direct) fx.kick.add(runId);
}
