import type { ListParams } from '../../core/pagination.js';
import { paginate } from '../../core/pagination.js';
import { precompiled, precompiledRows, toJson, type Exec } from '../../store/db.js';
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

const runOfThread = precompiled(['id', 'threadId', 'projectId'], (db, a: { id: string; threadId: string; projectId: string }) =>
  db.selectFrom('thread_runs').selectAll().where('id', '=', a.id).where('thread_id', '=', a.threadId).where('project_id', '=', a.projectId),
);

/** A run of the project's thread (compiled once: a client polling a run reads it at every poll). */
export const getRun = async (db: Exec, projectId: string, threadId: string, id: string): Promise<RunRow | undefined> =>
  (await runOfThread(db, { id, threadId, projectId }))[0];

export const getRunById = (db: Exec, id: string) => db.selectFrom('thread_runs').selectAll().where('id', '=', id).executeTakeFirst();

const insertRunStatement = precompiledRows<RunRow>(
  [
    'id',
    'project_id',
    'thread_id',
    'assistant_id',
    'created_at',
    'status',
    'model',
    'instructions',
    'tools',
    'metadata',
    'temperature',
    'top_p',
    'max_prompt_tokens',
    'max_completion_tokens',
    'truncation_strategy',
    'tool_choice',
    'parallel_tool_calls',
    'response_format',
    'reasoning_effort',
    'required_action',
    'last_error',
    'incomplete_details',
    'started_at',
    'expires_at',
    'deadline',
    'cancelled_at',
    'failed_at',
    'completed_at',
    'prompt_used',
    'completion_used',
    'lease_owner',
    'lease_until',
    'event_seq',
    'ratelimit_ticket',
  ],
  (db, rows) => db.insertInto('thread_runs').values(rows),
);

export async function insertRun(tx: Exec, run: RunRow): Promise<void> {
  await tx.executeQuery(insertRunStatement(tx, [run]).compile());
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
const claimQueuedQuery = precompiled(
  ['runId', 'token', 'until', 'now', 'nowMs', 'nowSeconds'],
  (db, a: { runId: string; token: string; until: number; now: number; nowMs: number; nowSeconds: number }) =>
    db
      .updateTable('thread_runs')
      .set((eb) => ({
        lease_owner: a.token,
        lease_until: a.until,
        status: 'in_progress',
        started_at: eb.fn.coalesce('started_at', eb.val(a.nowSeconds)),
        event_seq: eb('event_seq', '+', 1),
      }))
      .where('id', '=', a.runId)
      .where('status', 'in', sourcesOf('in_progress'))
      .where('deadline', '>', a.nowMs)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', a.now)]))
      .returningAll(),
);

export const claimQueued = async (
  tx: Exec,
  runId: string,
  token: string,
  lease: { now: number; until: number },
  clock: { nowMs: number; nowSeconds: number },
): Promise<RunRow | undefined> =>
  (await claimQueuedQuery(tx, { runId, token, until: lease.until, now: lease.now, nowMs: clock.nowMs, nowSeconds: clock.nowSeconds }))[0];

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

type EndArgs = {
  runId: string;
  now: number;
  lastError: string | null;
  incomplete: string | null;
  prompt: number;
  completion: number;
  leaseToken: string | undefined;
};

/** The statement that ends a run, one per outcome status and options (compiled once each). */
function endStatement(status: Outcome['status'], takeTicket: boolean, leased: boolean) {
  return precompiled(['runId', 'now', 'lastError', 'incomplete', 'prompt', 'completion', 'leaseToken'] as const, (db, a: EndArgs) => {
    let q = db
      .updateTable('thread_runs')
      .set((eb) => ({
        ...(takeTicket ? { ratelimit_ticket: null } : {}),
        status,
        required_action: null,
        lease_owner: null,
        lease_until: null,
        expires_at: status === 'expired' ? eb.ref('expires_at') : null,
        completed_at: status === 'completed' ? a.now : eb.ref('completed_at'),
        cancelled_at: status === 'cancelled' ? a.now : eb.ref('cancelled_at'),
        failed_at: status === 'failed' ? a.now : eb.ref('failed_at'),
        last_error: status === 'failed' ? a.lastError : eb.ref('last_error'),
        incomplete_details: status === 'incomplete' ? a.incomplete : eb.ref('incomplete_details'),
        prompt_used: eb('prompt_used', '+', a.prompt),
        completion_used: eb('completion_used', '+', a.completion),
      }))
      .where('id', '=', a.runId)
      .where('status', 'in', sourcesOf(status));
    if (leased) q = q.where('lease_owner', '=', a.leaseToken!);
    return q.returningAll();
  });
}
const endStatements = new Map<string, ReturnType<typeof endStatement>>();

/**
 * Ends a run: its status, the timestamp and details of the outcome, the usage of the last turn; the
 * lease is let go. Only from a status the outcome may follow and, with `leaseToken`, only while that
 * worker holds the run. `takeTicket`: the rate-limit ticket is taken too (the caller holds its value).
 */
export async function markEnded(
  tx: Exec,
  runId: string,
  outcome: Outcome,
  now: number,
  opts: { leaseToken?: string; usageDelta?: { prompt: number; completion: number }; takeTicket?: boolean } = {},
): Promise<RunRow | undefined> {
  const takeTicket = Boolean(opts.takeTicket);
  const leased = Boolean(opts.leaseToken);
  const key = `${outcome.status} ${takeTicket} ${leased}`;
  let statement = endStatements.get(key);
  if (!statement) endStatements.set(key, (statement = endStatement(outcome.status, takeTicket, leased)));
  const rows = await statement(tx, {
    runId,
    now,
    lastError: outcome.status === 'failed' ? toJson(outcome.error) : null,
    incomplete: outcome.status === 'incomplete' ? toJson({ reason: outcome.reason }) : null,
    prompt: opts.usageDelta?.prompt ?? 0,
    completion: opts.usageDelta?.completion ?? 0,
    leaseToken: opts.leaseToken,
  });
  return rows[0];
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
