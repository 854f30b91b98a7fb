import { MAX_OFFSET_MS, parseDuration } from '../core/clock.js';
import { invalid } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import type { Exec } from '../store/db.js';
import type { HoldStage, WorkHoldsBody, WorkHoldsObject } from './schemas.js';
import * as store from './store.js';

export { HOLD_STAGES, type HoldStage } from './schemas.js';

/**
 * Holds and pace of a project's long-running work. They live in the database and the workers read them
 * at every step (one primary-key read), so a hold set on one instance holds on every instance at once,
 * with no copy in memory to fall behind. Held work is not run and not spun on: its job comes back every
 * `HOLD_RECHECK_MS` of the Standin clock (a clock advance makes it due at once) to look again.
 */

/** How often held work looks again whether it was released (Standin clock ms). */
export const HOLD_RECHECK_MS = 1000;

/** A project's holds, as the workers read them. */
export interface WorkHolds {
  /** Batch stages where the project's batches stop. */
  batchHoldAt: readonly HoldStage[];
  /** The least time (ms of the Standin clock) a batch spends in a stage. */
  batchPaceMs: Partial<Record<HoldStage, number>>;
  ingestionHeld: boolean;
}

const NONE: WorkHolds = { batchHoldAt: [], batchPaceMs: {}, ingestionHeld: false };

function objectOf(projectId: string, row: Awaited<ReturnType<typeof store.getHolds>>): WorkHoldsObject {
  return {
    object: 'project.work_holds',
    project_id: projectId,
    batch_hold_at: row ? (JSON.parse(row.batch_hold_at) as HoldStage[]) : [],
    batch_pace: row ? (JSON.parse(row.batch_pace) as WorkHoldsObject['batch_pace']) : {},
    ingestion: row?.ingestion === 'hold' ? 'hold' : 'run',
  };
}

/** The holds of a project now (none set: everything runs at once). */
export async function workHolds(ctx: Ctx, projectId: string, exec: Exec = ctx.store.db): Promise<WorkHolds> {
  const row = await store.getHolds(exec, projectId);
  if (!row) return NONE;
  const o = objectOf(projectId, row);
  const pace: WorkHolds['batchPaceMs'] = {};
  for (const [stage, text] of Object.entries(o.batch_pace)) if (text) pace[stage as HoldStage] = parseDuration(text);
  return { batchHoldAt: o.batch_hold_at, batchPaceMs: pace, ingestionHeld: o.ingestion === 'hold' };
}

/** The control plane's view of a project's holds. */
export async function getWorkHolds(ctx: Ctx, projectId: string): Promise<WorkHoldsObject> {
  return objectOf(projectId, await store.getHolds(ctx.store.db, projectId));
}

/** Sets a project's holds (what the body leaves out runs: holds are replaced, not merged). */
export async function setWorkHolds(ctx: Ctx, exec: Exec, projectId: string, body: WorkHoldsBody): Promise<WorkHoldsObject> {
  // A pace past the clock's range could never be spent, and past 2^53 ms it is no time at all.
  for (const [stage, text] of Object.entries(body.batch_pace ?? {}))
    if (text && !(parseDuration(text) <= MAX_OFFSET_MS))
      throw invalid(
        `'batch_pace.${stage}' is '${text}'; a pace is at most 100 years (36500d), the range of the Standin clock.`,
        `batch_pace.${stage}`,
        'invalid_value',
      );
  const row = {
    project_id: projectId,
    batch_hold_at: JSON.stringify(body.batch_hold_at ?? []),
    batch_pace: JSON.stringify(body.batch_pace ?? {}),
    ingestion: body.ingestion ?? 'run',
  };
  await store.putHolds(exec, row);
  return objectOf(projectId, row);
}

/** Releases everything of a project: no holds, no pace. */
export async function clearWorkHolds(exec: Exec, projectId: string): Promise<void> {
  await store.deleteHolds(exec, projectId);
}
