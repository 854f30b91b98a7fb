import { paginate, type ListParams } from '../../core/pagination.js';
import { precompiled, precompiledRows, precompiledWrite, toJson, type Exec } from '../../store/db.js';
import type { StepStatus } from '../objects.js';
import type { AssistantsTables } from '../tables.js';
import { LIST } from './page.js';

/** SQL of run steps, scoped to the caller's project and run. */
export type StepRow = AssistantsTables['run_steps'];

export const getStep = (db: Exec, projectId: string, runId: string, id: string) =>
  db
    .selectFrom('run_steps')
    .selectAll()
    .where('id', '=', id)
    .where('run_id', '=', runId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

export function pageSteps<T>(db: Exec, projectId: string, runId: string, page: ListParams, map: (row: StepRow) => T) {
  return paginate(db.selectFrom('run_steps').selectAll().where('run_id', '=', runId).where('project_id', '=', projectId), 'id', page, {
    ...LIST,
    map,
  });
}

/** A run's steps in creation order. */
const runStepsQuery = precompiled(['runId'], (db, a: { runId: string }) =>
  db.selectFrom('run_steps').selectAll().where('run_id', '=', a.runId).orderBy('id', 'asc'),
);
export const runSteps = (db: Exec, runId: string) => runStepsQuery(db, { runId });

const insertStepStatement = precompiledRows<StepRow>(
  [
    'id',
    'project_id',
    'run_id',
    'thread_id',
    'assistant_id',
    'created_at',
    'type',
    'status',
    'step_details',
    'last_error',
    'cancelled_at',
    'completed_at',
    'expired_at',
    'failed_at',
    'usage',
    'metadata',
  ],
  (db, rows) => db.insertInto('run_steps').values(rows),
);

export async function insertStep(tx: Exec, row: StepRow): Promise<void> {
  await tx.executeQuery(insertStepStatement(tx, [row]).compile());
}

export async function completeStep(tx: Exec, id: string, now: number, usage: string | null): Promise<void> {
  await tx.updateTable('run_steps').set({ status: 'completed', completed_at: now, usage }).where('id', '=', id).execute();
}

/** The step details of a step being written (JSON). */
export async function setStepDetails(tx: Exec, id: string, details: string): Promise<void> {
  await tx.updateTable('run_steps').set({ step_details: details }).where('id', '=', id).execute();
}

const setStepUsageStatement = precompiledWrite(['id', 'usage'], (db, a: { id: string; usage: string | null }) =>
  db.updateTable('run_steps').set({ usage: a.usage }).where('id', '=', a.id),
);

export async function setStepUsage(tx: Exec, id: string, usage: unknown): Promise<void> {
  await setStepUsageStatement(tx, { id, usage: toJson(usage) });
}

/** A run's tool_calls steps still waiting for their outputs. */
export const openToolSteps = (tx: Exec, runId: string) =>
  tx
    .selectFrom('run_steps')
    .selectAll()
    .where('run_id', '=', runId)
    .where('type', '=', 'tool_calls')
    .where('status', '=', 'in_progress')
    .execute();

/** Completes a tool_calls step with its calls' outputs. */
export const completeToolStep = (tx: Exec, id: string, details: string, now: number) =>
  tx
    .updateTable('run_steps')
    .set({ status: 'completed', completed_at: now, step_details: details })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();

/** The end of a completed run's steps, compiled once (every run that completes ends its steps so). */
const completeRunSteps = precompiled(['runId', 'now'], (db, a: { runId: string; now: number }) =>
  db
    .updateTable('run_steps')
    .set({ status: 'completed', completed_at: a.now })
    .where('run_id', '=', a.runId)
    .where('status', '=', 'in_progress')
    .returningAll(),
);

/** Ends the steps a run still has in progress with `status` (and its timestamp, and the error of a failure). Returns them. */
export function endRunSteps(
  tx: Exec,
  runId: string,
  status: Exclude<StepStatus, 'in_progress'>,
  now: number,
  lastError: { code: string; message: string } | null,
) {
  if (status === 'completed' && !lastError) return completeRunSteps(tx, { runId, now });
  const at = {
    completed: { completed_at: now },
    cancelled: { cancelled_at: now },
    expired: { expired_at: now },
    failed: { failed_at: now },
  }[status];
  return tx
    .updateTable('run_steps')
    .set({ status, ...at, ...(lastError ? { last_error: toJson(lastError) } : {}) })
    .where('run_id', '=', runId)
    .where('status', '=', 'in_progress')
    .returningAll()
    .execute();
}

/** Deletes the steps a run still has in progress (the cut turn of a run taken over). Returns how many. */
export async function dropRunStepsInProgress(tx: Exec, runId: string): Promise<number> {
  const res = await tx.deleteFrom('run_steps').where('run_id', '=', runId).where('status', '=', 'in_progress').executeTakeFirst();
  return Number(res.numDeletedRows);
}
