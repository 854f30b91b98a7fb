import { notFound, type ApiError } from '../../core/errors.js';
import type { Ctx } from '../../core/module.js';
import type { Tx } from '../../store/db.js';
import { expireIfDue } from '../runs/finish.js';
import { isActive } from '../runs/states.js';
import { getRunById } from '../store/runs.js';
import { clearThreadLock, getThread, lockFreeThread, type ThreadRow } from '../store/threads.js';
import type { Effects } from './write.js';

/**
 * Takes the thread for writing: locks its row (PostgreSQL) and refuses while a run holds it, after
 * expiring a run whose time is up. The caller's statement decides the refusal message.
 */
export async function lockThread(
  ctx: Ctx,
  tx: Tx,
  projectId: string,
  threadId: string,
  fx: Effects,
  refuse: (threadId: string, runId: string) => ApiError,
): Promise<ThreadRow> {
  const free = await lockFreeThread(tx, projectId, threadId);
  if (free) return free;
  const current = await getThread(tx, projectId, threadId);
  if (!current) throw notFound('thread', threadId);
  const run = current.active_run_id ? await getRunById(tx, current.active_run_id) : undefined;
  if (run && isActive(run.status)) {
    const { expired } = await expireIfDue(ctx, tx, run);
    if (!expired) throw refuse(threadId, run.id);
    fx.ended.add(run.id);
  } else {
    // A stale lock (its run is gone or ended): release it.
    await clearThreadLock(tx, threadId);
  }
  const thread = await lockFreeThread(tx, projectId, threadId);
  if (!thread) throw refuse(threadId, current.active_run_id ?? 'run_unknown');
  return thread;
}
