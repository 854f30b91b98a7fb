import type { Ctx } from '../../core/module.js';
import type { Ticket } from '../../ratelimit/service.js';
import type { Exec, Tx } from '../../store/db.js';
import type { MessageIncompleteReason, StepStatus } from '../objects.js';
import { appendEvents, type RunEvent } from '../store/events.js';
import { endRunMessages } from '../store/messages.js';
import { getRunById, markEnded, takeTicket, type RunRow } from '../store/runs.js';
import { endRunSteps } from '../store/steps.js';
import { releaseThread } from '../store/threads.js';
import { messageView, runView, stepEvent } from '../views.js';
import { dropWatchdog } from './jobs.js';
import { runtime } from './runtime.js';
import { isActive, type Outcome } from './states.js';

/**
 * The end of a run, shared by the executor, cancel, expiry and recovery. A run that ends takes its
 * unfinished parts with it, as on the platform: in-progress messages become `incomplete` with the
 * matching reason (run_cancelled, run_expired, run_failed), in-progress steps take the run's status
 * (cancelled, expired, failed), the run gets its timestamp, usage and error, and the thread lock is
 * released — all in one transaction, with the stream events in the platform's order.
 */
const MESSAGE_REASON: Record<Exclude<Outcome['status'], 'completed'>, MessageIncompleteReason> = {
  cancelled: 'run_cancelled',
  expired: 'run_expired',
  failed: 'run_failed',
  incomplete: 'max_tokens',
};
const STEP_STATUS: Record<Outcome['status'], Exclude<StepStatus, 'in_progress'>> = {
  cancelled: 'cancelled',
  expired: 'expired',
  failed: 'failed',
  completed: 'completed',
  incomplete: 'completed',
};

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Ends a run from a status the outcome may follow. Returns the ended run, or undefined when the run had
 * moved on (someone else ended or moved it first). `leaseToken`, when given, must still hold the run
 * (the executor's writes); `extraEvents` go before the run's final event.
 */
export async function finishRun(
  ctx: Pick<Ctx, 'clock' | 'store' | 'jobs'>,
  tx: Exec,
  runId: string,
  outcome: Outcome,
  opts: {
    leaseToken?: string;
    extraEvents?: RunEvent[];
    usageDelta?: { prompt: number; completion: number };
    /**
     * The run's rate-limit ticket as the lease holder read it (`leaseToken` given): the end takes it in
     * its own statement, and the caller gives it back (releaseTicket) instead of taking it after.
     */
    ticket?: string | null;
  } = {},
): Promise<RunRow | undefined> {
  const now = ctx.clock.nowSeconds();
  const run = await markEnded(tx, runId, outcome, now, { ...opts, takeTicket: opts.leaseToken !== undefined && opts.ticket !== undefined });
  if (!run) return undefined;
  await releaseThread(tx, run.thread_id, runId);
  // The run's watchdog (its first execute job) has nothing left to look at.
  await dropWatchdog(ctx, tx, runId);

  const events: RunEvent[] = [...(opts.extraEvents ?? [])];
  const messages = await endRunMessages(
    tx,
    runId,
    outcome.status === 'completed' ? { status: 'completed' } : { status: 'incomplete', reason: MESSAGE_REASON[outcome.status] },
    now,
  );
  for (const m of messages.sort(byId))
    events.push({ event: m.status === 'completed' ? 'thread.message.completed' : 'thread.message.incomplete', data: messageView(m) });
  const stepStatus = STEP_STATUS[outcome.status];
  // A step's error vocabulary has no invalid_prompt: that failure is the server's to the step.
  const stepError =
    outcome.status === 'failed'
      ? { code: outcome.error.code === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'server_error', message: outcome.error.message }
      : null;
  const steps = await endRunSteps(tx, runId, stepStatus, now, stepError);
  for (const st of steps.sort(byId)) events.push({ event: `thread.run.step.${stepStatus}`, data: stepEvent(st) });
  events.push({ event: `thread.run.${outcome.status}`, data: runView(run) });
  await appendEvents(ctx, tx, runId, events);
  return run;
}

/** Expires the run when its 10 minutes are over (any instance, any reader). Returns the run as it now is. */
export async function expireIfDue(
  ctx: Pick<Ctx, 'clock' | 'store' | 'jobs'>,
  tx: Exec,
  run: RunRow,
): Promise<{ run: RunRow; expired: boolean }> {
  if (!isActive(run.status) || ctx.clock.now() < Number(run.deadline)) return { run, expired: false };
  const ended = await finishRun(ctx, tx, run.id, { status: 'expired' });
  if (ended) return { run: ended, expired: true };
  return { run: (await getRunById(tx, run.id)) ?? run, expired: false };
}

/**
 * Gives the rate limiter its admission back once a run has ended, with the tokens the run used. Runs
 * once per run (the ticket is taken in one statement), whichever instance ends the run.
 */
export async function settleTicket(ctx: Pick<Ctx, 'store' | 'services'>, runId: string): Promise<void> {
  const row = await takeTicket(ctx.store.db, runId);
  if (row) await releaseTicket(ctx, row.ratelimit_ticket, row);
}

/** Gives back a ticket taken with the run's end (finishRun's `ticket`), with the usage of the ended run. */
export async function releaseTicket(
  ctx: Pick<Ctx, 'services'>,
  ticket: string | null,
  row: Pick<RunRow, 'prompt_used' | 'completion_used' | 'status'>,
): Promise<void> {
  const limiter = ctx.services.ratelimit;
  if (!ticket || !limiter) return;
  const prompt = Number(row.prompt_used);
  const completion = Number(row.completion_used);
  const usage = prompt + completion > 0 ? { inputTokens: prompt, outputTokens: completion } : { failed: row.status !== 'completed' };
  await limiter.release(JSON.parse(ticket) as Ticket, usage).catch(() => {});
}

/** Runs `fn` in a transaction and wakes the run's followers after the commit. */
export async function commitRun<T>(ctx: Pick<Ctx, 'store' | 'services'>, runId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const out = await ctx.store.db.transaction().execute(fn);
  runtime(ctx).bus.notify(runId);
  return out;
}

/** Ends a run in its own transaction (see finishRun), then gives its rate-limit admission back. */
export async function endRun(
  ctx: Pick<Ctx, 'clock' | 'store' | 'services' | 'jobs'>,
  runId: string,
  outcome: Outcome,
  opts: Parameters<typeof finishRun>[4] = {},
): Promise<RunRow | undefined> {
  const ended = await commitRun(ctx, runId, (tx) => finishRun(ctx, tx, runId, outcome, opts));
  if (ended) await afterEnd(ctx, ended);
  return ended;
}

/** After a run ended: the rate limiter gets its admission back (the expiry job drops the event log later). */
export async function afterEnd(ctx: Pick<Ctx, 'store' | 'services'>, run: Pick<RunRow, 'id' | 'ratelimit_ticket'>): Promise<void> {
  if (run.ratelimit_ticket) await settleTicket(ctx, run.id);
}
