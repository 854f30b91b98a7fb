import type { Ctx } from '../core/module.js';
import { toJson, type Exec } from '../store/db.js';
import { appendEvents, getRunById } from './store.js';
import type { AssistantsTables } from './tables.js';
import { ACTIVE, messageView, runView, stepView } from './views.js';

/**
 * The end of a run, shared by the executor, cancel, expiry and recovery. A run that ends takes its
 * unfinished parts with it, as on the platform: in-progress messages become `incomplete` with the
 * matching reason (run_cancelled, run_expired, run_failed), in-progress steps take the run's status
 * (cancelled, expired, failed), the run gets its timestamp, usage and error, and the thread lock is
 * released — all in one transaction, with the stream events in the platform's order.
 */
export type RunRow = AssistantsTables['thread_runs'];
export type Outcome =
  | { status: 'completed' }
  | { status: 'incomplete'; reason: 'max_completion_tokens' | 'max_prompt_tokens' }
  | { status: 'failed'; error: { code: 'server_error' | 'rate_limit_exceeded' | 'invalid_prompt'; message: string } }
  | { status: 'cancelled' }
  | { status: 'expired' };

const MESSAGE_REASON: Record<string, string> = { cancelled: 'run_cancelled', expired: 'run_expired', failed: 'run_failed', incomplete: 'max_tokens' };
const STEP_STATUS: Record<string, string> = { cancelled: 'cancelled', expired: 'expired', failed: 'failed', completed: 'completed', incomplete: 'completed' };

/**
 * Ends a run from any of `from` statuses. Returns the ended run, or undefined when the run was no
 * longer in one of them (someone else ended or moved it first). `leaseToken`, when given, must still
 * hold the run (the executor's writes); `extraEvents` go before the run's final event.
 */
export async function finishRun(
  ctx: Pick<Ctx, 'clock' | 'store'>,
  tx: Exec,
  runId: string,
  outcome: Outcome,
  opts: { from?: readonly string[]; leaseToken?: string; extraEvents?: { event: string; data: unknown }[]; usageDelta?: { prompt: number; completion: number } } = {},
): Promise<RunRow | undefined> {
  const now = ctx.clock.nowSeconds();
  const from = opts.from ?? ACTIVE;
  let q = tx
    .updateTable('thread_runs')
    .set((eb) => ({
      status: outcome.status,
      required_action: null,
      lease_owner: null,
      lease_until: null,
      expires_at: outcome.status === 'expired' ? eb.ref('expires_at') : null,
      completed_at: outcome.status === 'completed' ? now : eb.ref('completed_at'),
      cancelled_at: outcome.status === 'cancelled' ? now : eb.ref('cancelled_at'),
      failed_at: outcome.status === 'failed' ? now : eb.ref('failed_at'),
      last_error: outcome.status === 'failed' ? toJson(outcome.error) : eb.ref('last_error'),
      incomplete_details: outcome.status === 'incomplete' ? toJson({ reason: outcome.reason }) : eb.ref('incomplete_details'),
      prompt_used: eb('prompt_used', '+', opts.usageDelta?.prompt ?? 0),
      completion_used: eb('completion_used', '+', opts.usageDelta?.completion ?? 0),
    }))
    .where('id', '=', runId)
    .where('status', 'in', [...from]);
  if (opts.leaseToken) q = q.where('lease_owner', '=', opts.leaseToken);
  const run = await q.returningAll().executeTakeFirst();
  if (!run) return undefined;
  await tx.updateTable('threads').set({ active_run_id: null }).where('id', '=', run.thread_id).where('active_run_id', '=', runId).execute();

  const events: { event: string; data: unknown }[] = [...(opts.extraEvents ?? [])];
  const messages =
    outcome.status === 'completed'
      ? await tx.updateTable('thread_messages').set({ status: 'completed', completed_at: now }).where('run_id', '=', runId).where('status', '=', 'in_progress').returningAll().execute()
      : await tx
          .updateTable('thread_messages')
          .set({ status: 'incomplete', incomplete_at: now, incomplete_details: toJson({ reason: MESSAGE_REASON[outcome.status] }) })
          .where('run_id', '=', runId)
          .where('status', '=', 'in_progress')
          .returningAll()
          .execute();
  for (const m of messages.sort(byId)) events.push({ event: m.status === 'completed' ? 'thread.message.completed' : 'thread.message.incomplete', data: messageView(m) });
  const stepStatus = STEP_STATUS[outcome.status];
  const set: Record<string, unknown> = { status: stepStatus, [`${stepStatus}_at`]: now };
  if (outcome.status === 'failed') set.last_error = toJson({ code: outcome.error.code === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'server_error', message: outcome.error.message });
  const steps = await tx.updateTable('run_steps').set(set).where('run_id', '=', runId).where('status', '=', 'in_progress').returningAll().execute();
  for (const st of steps.sort(byId)) events.push({ event: `thread.run.step.${stepStatus}`, data: stepView(st) });
  events.push({ event: `thread.run.${outcome.status}`, data: runView(run) });
  await appendEvents(ctx, tx, runId, events);
  return run;
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Expires the run when its 10 minutes are over (any instance, any reader). Returns the run as it now is. */
export async function expireIfDue(ctx: Pick<Ctx, 'clock' | 'store'>, tx: Exec, run: RunRow): Promise<{ run: RunRow; expired: boolean }> {
  if (!(ACTIVE as readonly string[]).includes(run.status) || ctx.clock.now() < Number(run.deadline)) return { run, expired: false };
  const ended = await finishRun(ctx, tx, run.id, { status: 'expired' });
  if (ended) return { run: ended, expired: true };
  return { run: (await getRunById(tx, run.id)) ?? run, expired: false };
}

