import { logWorkTakenOver } from '../../core/instance-events.js';
import type { Ctx } from '../../core/module.js';
import { dropRunMessagesInProgress } from '../store/messages.js';
import type { RunRow } from '../store/runs.js';
import { dropRunStepsInProgress } from '../store/steps.js';
import { commitRun } from './finish.js';
import { holdLease } from './lease.js';

/**
 * Taking over a run whose instance died: the run is `in_progress`, its lease lapsed, and this worker has
 * just leased it. Everything committed stays as it is — the user's messages, completed steps (answered
 * tool calls with their outputs, finished searches and code), the run's usage and its events — and the
 * model turn that was in flight is made again from there (turn.ts builds its prompt from the committed
 * history, so answered tool calls are not asked again). What that turn had written is its partial
 * reply: the message it was streaming and the step still in progress. Those are removed in one
 * transaction under the new lease, so the thread holds one reply, not a cut one and a whole one.
 * A `requires_action` run is not here: it waits for its outputs, whichever instance receives them.
 *
 * Returns the run as the turn starts from; throws Lost when another worker took it first.
 */
export async function takeOver(ctx: Ctx, run: RunRow, token: string): Promise<RunRow> {
  const dropped = await commitRun(ctx, run.id, async (tx) => {
    await holdLease(ctx, tx, run.id, token);
    const messages = await dropRunMessagesInProgress(tx, run.id);
    const steps = await dropRunStepsInProgress(tx, run.id);
    return { messages, steps };
  });
  // Its turn in flight is made again here; the cut reply and step were dropped above.
  logWorkTakenOver(ctx.log, {
    kind: 'run',
    id: run.id,
    dropped_messages: dropped.messages,
    dropped_steps: dropped.steps,
  });
  return run;
}
