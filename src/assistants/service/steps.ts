import { notFound } from '../../core/errors.js';
import type { Ctx } from '../../core/module.js';
import type { ListParams } from '../../core/pagination.js';
import type { RunStepObject } from '../objects.js';
import * as store from '../store/steps.js';
import { stepView } from '../views.js';
import { readRun } from './runs.js';

/** Run steps: what a run did (a message it wrote, tool calls it made), read-only. */

export async function listSteps(ctx: Ctx, projectId: string, threadId: string, runId: string, page: ListParams, includeContent: boolean) {
  await readRun(ctx, projectId, threadId, runId);
  return store.pageSteps(ctx.store.db, projectId, runId, page, (r) => stepView(r, { includeContent }));
}

export async function getStep(
  ctx: Ctx,
  projectId: string,
  threadId: string,
  runId: string,
  stepId: string,
  includeContent: boolean,
): Promise<RunStepObject> {
  await readRun(ctx, projectId, threadId, runId);
  const row = await store.getStep(ctx.store.db, projectId, runId, stepId);
  if (!row) throw notFound('run step', stepId);
  return stepView(row, { includeContent });
}
