import type { ListParams } from '../../core/pagination.js';
import { paginate } from '../../core/pagination.js';
import { toJson, type Exec } from '../../store/db.js';
import type { RequiredAction } from '../objects.js';
import { ACTIVE, sourcesOf, TERMINAL, WORKER_STATUSES, type Outcome } from '../runs/states.js';
import type { AssistantsTables } from '../tables.js';
import { LIST } from './page.js';

/**
 * SQL of runs. Every status change is guarded by the statuses the state machine lets it leave
 * (`sourcesOf`), and the executor's writes also by its lease token, so a write that lost a race
 * changes nothing and says so (undefined / false).
 */
export type RunRow = AssistantsTables['thread_runs'];

export const getRun = (db: Exec, projectId: string, threadId: string, id: string) =>
  db
    .selectFrom('thread_runs')
    .selectAll()
    .where('id', '=', id)
    .where('thread_id', '=', threadId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

export const getRunById = (db: Exec, id: string) => db.selectFrom('thread_runs').selectAll().where('id', '=', id).executeTakeFirst();

export async function insertRun(tx: Exec, run: RunRow): Promise<void> {
  await tx.insertInto('thread_runs').values(run).execute();
}

export function pageRuns<T>(db: Exec, projectId: string, threadId: string, page: ListParams, map: (row: RunRow) => T) {
  return paginate(
    db.selectFrom('thread_runs').selectAll().where('thread_id', '=', threadId).where('project_id', '=', projectId),
    'id',
    page,
    { ...LIST, map },
  );
}

/** A project's runs across its threads (the dashboard's recent runs), newest first by default. */
export function pageProjectRuns<T>(db: Exec, projectId: string, page: ListParams, map: (row: RunRow) => T) {
  return paginate(db.selectFrom('thread_runs').selectAll().where('project_id', '=', projectId), 'id', page, { ...LIST, map });
}

/** Ids of a thread's unfinished runs whose deadline has passed (to expire before a list shows them). */
export async function dueRunIds(db: Exec, threadId: string, now: number): Promise<string[]> {
  const rows = await db
    .selectFrom('thread_runs')
    .select('id')
    .where('thread_id', '=', threadId)
    .where('status', 'in', ACTIVE)
    .where('deadline', '<=', now)
    .execute();
  return rows.map((r) => r.id);
}

export const setRunMetadata = (db: Exec, runId: string, metadata: unknown) =>
  db
    .updateTable('thread_runs')
    .set({ metadata: toJson(metadata) })
    .where('id', '=', runId)
    .returningAll()
    .executeTakeFirstOrThrow();

// ── The lease (see runs/lease.ts) ─────────────────────────────────────────────────────────────

/** Takes the lease of a run a worker acts on, when nobody holds it (or its holder's lease lapsed). */
export const claimLease = (db: Exec, runId: string, token: string, now: number, until: number) =>
  db
    .updateTable('thread_runs')
    .set({ lease_owner: token, lease_until: until })
    .where('id', '=', runId)
    .where('status', 'in', WORKER_STATUSES)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .returningAll()
    .executeTakeFirst();

/**
 * Takes the lease of a queued run nobody holds and starts it (queued → in_progress) in one statement,
 * taking the event number of `thread.run.in_progress`. Undefined when the run is not queued, free and
 * within its deadline (the caller then claims it as it is: a cancel, an expiry, a takeover, a lease held
 * elsewhere).
 */
export const claimQueued = (
  tx: Exec,
  runId: string,
  token: string,
  lease: { now: number; until: number },
  clock: { nowMs: number; nowSeconds: number },
) =>
  tx
    .updateTable('thread_runs')
    .set((eb) => ({
      lease_owner: token,
      lease_until: lease.until,
      status: 'in_progress',
      started_at: eb.fn.coalesce('started_at', eb.val(clock.nowSeconds)),
      event_seq: eb('event_seq', '+', 1),
    }))
    .where('id', '=', runId)
    .where('status', 'in', sourcesOf('in_progress'))
    .where('deadline', '>', clock.nowMs)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', lease.now)]))
    .returningAll()
    .executeTakeFirst();

export const leaseOf = (db: Exec, runId: string) =>
  db.selectFrom('thread_runs').select(['status', 'lease_owner']).where('id', '=', runId).executeTakeFirst();

/** Extends the lease while `token` holds the run in progress; false when it no longer does. */
export async function renewLease(exec: Exec, runId: string, token: string, until: number): Promise<boolean> {
  const res = await exec
    .updateTable('thread_runs')
    .set({ lease_until: until })
    .where('id', '=', runId)
    .where('lease_owner', '=', token)
    .where('status', '=', 'in_progress')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function releaseLease(db: Exec, runId: string, token: string): Promise<void> {
  await db
    .updateTable('thread_runs')
    .set({ lease_owner: null, lease_until: null })
    .where('id', '=', runId)
    .where('lease_owner', '=', token)
    .execute();
}

/** Marks every lease of a run a worker acts on as lapsed (SQLite at start: their holder is gone). */
export async function lapseLeases(db: Exec): Promise<void> {
  await db
    .updateTable('thread_runs')
    .set({ lease_until: 0 })
    .where('lease_owner', 'is not', null)
    .where('status', 'in', WORKER_STATUSES)
    .execute();
}

/** Runs a worker should act on that nobody holds. */
export async function orphanRunIds(db: Exec, now: number): Promise<string[]> {
  const rows = await db
    .selectFrom('thread_runs')
    .select('id')
    .where('status', 'in', WORKER_STATUSES)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .execute();
  return rows.map((r) => r.id);
}

// ── Moves of the state machine ────────────────────────────────────────────────────────────────

/** queued → in_progress under the worker's lease; takes the event number of `thread.run.in_progress`. */
export const markInProgress = (tx: Exec, runId: string, token: string, startedAt: number) =>
  tx
    .updateTable('thread_runs')
    .set((eb) => ({
      status: 'in_progress',
      started_at: eb.fn.coalesce('started_at', eb.val(startedAt)),
      event_seq: eb('event_seq', '+', 1),
    }))
    .where('id', '=', runId)
    .where('status', 'in', sourcesOf('in_progress'))
    .where('lease_owner', '=', token)
    .returningAll()
    .executeTakeFirst();

/** in_progress → requires_action: the turn's function calls await outputs; the lease is let go. */
export const markRequiresAction = (
  tx: Exec,
  runId: string,
  token: string,
  action: RequiredAction,
  used: { prompt: number; completion: number },
) =>
  tx
    .updateTable('thread_runs')
    .set((eb) => ({
      status: 'requires_action',
      required_action: JSON.stringify(action),
      lease_owner: null,
      lease_until: null,
      prompt_used: eb('prompt_used', '+', used.prompt),
      completion_used: eb('completion_used', '+', used.completion),
    }))
    .where('id', '=', runId)
    .where('status', 'in', sourcesOf('requires_action'))
    .where('lease_owner', '=', token)
    .returningAll()
    .executeTakeFirst();

/** Adds a turn's usage to a run this worker holds in progress (a turn that searched files; the run goes on). */
export const addRunUsage = (tx: Exec, runId: string, token: string, used: { prompt: number; completion: number }) =>
  tx
    .updateTable('thread_runs')
    .set((eb) => ({
      prompt_used: eb('prompt_used', '+', used.prompt),
      completion_used: eb('completion_used', '+', used.completion),
    }))
    .where('id', '=', runId)
    .where('status', '=', 'in_progress')
    .where('lease_owner', '=', token)
    .returningAll()
    .executeTakeFirst();

export const markCancelling = (tx: Exec, runId: string) =>
  tx
    .updateTable('thread_runs')
    .set({ status: 'cancelling' })
    .where('id', '=', runId)
    .where('status', 'in', sourcesOf('cancelling'))
    .returningAll()
    .executeTakeFirst();

/** requires_action → queued, once every tool call has its output. */
export const markQueued = (tx: Exec, runId: string) =>
  tx
    .updateTable('thread_runs')
    .set({ status: 'queued', required_action: null })
    .where('id', '=', runId)
    .where('status', 'in', sourcesOf('queued'))
    .returningAll()
    .executeTakeFirst();

/**
 * Ends a run: its status, the timestamp and details of the outcome, the usage of the last turn; the
 * lease is let go. Only from a status the outcome may follow and, with `leaseToken`, only while that
 * worker holds the run. `takeTicket`: the rate-limit ticket is taken too (the caller holds its value).
 */
export function markEnded(
  tx: Exec,
  runId: string,
  outcome: Outcome,
  now: number,
  opts: { leaseToken?: string; usageDelta?: { prompt: number; completion: number }; takeTicket?: boolean } = {},
) {
  let q = tx
    .updateTable('thread_runs')
    .set((eb) => ({
      ...(opts.takeTicket ? { ratelimit_ticket: null } : {}),
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
    .where('status', 'in', sourcesOf(outcome.status));
  if (opts.leaseToken) q = q.where('lease_owner', '=', opts.leaseToken);
  return q.returningAll().executeTakeFirst();
}

/** Takes an ended run's rate-limit ticket, once (it is cleared in the same statement). */
export const takeTicket = (db: Exec, runId: string) =>
  db
    .updateTable('thread_runs')
    .set({ ratelimit_ticket: null })
    .where('id', '=', runId)
    .where('ratelimit_ticket', 'is not', null)
    .where('status', 'in', TERMINAL)
    .returning(['ratelimit_ticket', 'prompt_used', 'completion_used', 'status'])
    .executeTakeFirst();
