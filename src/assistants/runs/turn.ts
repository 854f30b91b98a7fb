import type { Ctx } from '../../core/module.js';
import type { ChatResult } from '../../models/types.js';
import { fromJson } from '../../store/db.js';
import type { RequiredAction, Tool } from '../objects.js';
import { appendEvents, type RunEvent } from '../store/events.js';
import { markMessageIncomplete, threadMessages } from '../store/messages.js';
import { addRunUsage, markRequiresAction, type RunRow } from '../store/runs.js';
import { runSteps, setStepUsage } from '../store/steps.js';
import { messageView, runView } from '../views.js';
import { hasInterpreter, outputFileMap, pendingImages } from './code-calls.js';
import { RunSandbox } from './code-interpreter.js';
import { runSearches, runStores } from './file-search.js';
import { commitRun, endRun, finishRun, releaseTicket } from './finish.js';
import { Lost } from './lease.js';
import { buildPrompt } from './prompt.js';
import { citationMap, fileSearchSettings } from './search-calls.js';
import type { Outcome } from './states.js';
import { TurnWriter } from './turn-writer.js';

/** The context window assumed for a model whose route names none. */
const DEFAULT_CONTEXT_WINDOW = 128_000;

/**
 * Model turns of a run this worker holds in progress: build the prompt, stream the reply into a message
 * and/or a tool_calls step, then move the run on — file searches and code_interpreter calls are executed
 * here and the next turn follows at once (no requires_action for them); function calls put the run in
 * `requires_action`; a reply ends it `completed` (or `incomplete`). submit_tool_outputs queues the run
 * again. Throws Lost when the worker stopped holding the run; a model failure propagates (the engine
 * fails the run).
 */
export async function runTurn(ctx: Ctx, started: RunRow, token: string, signal: AbortSignal): Promise<void> {
  const models = ctx.services.models;
  const tools = fromJson<Tool[]>(started.tools) ?? [];
  const settings = fileSearchSettings(tools);
  const sandbox = hasInterpreter(tools) && ctx.services.codeInterpreter ? new RunSandbox(ctx, started) : undefined;
  let run = started;
  for (;;) {
    const stores = settings ? await runStores(ctx, run) : { ids: [] };
    const [messages, steps] = await Promise.all([threadMessages(ctx.store.db, run.thread_id), runSteps(ctx.store.db, run.id)]);
    const prompt = buildPrompt({
      run,
      messages,
      steps,
      contextWindow: models.route(run.model)?.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
      fileSearch: stores.ids.length > 0,
      interpreter: sandbox ? { files: await sandbox.listed() } : undefined,
    });
    if ('incomplete' in prompt) {
      await endRun(ctx, run.id, { status: 'incomplete', reason: prompt.incomplete }, { leaseToken: token });
      return;
    }
    const searchName = prompt.request.retrieval?.name;
    const codeName = prompt.request.interpreter?.name;
    const writer = new TurnWriter(ctx, run, token, {
      searchName,
      citations: citationMap(steps),
      codeName,
      outputFiles: outputFileMap(steps),
      images: pendingImages(steps),
    });
    const result: ChatResult = await models.complete({ ...prompt.request, signal }, (chunk) => writer.chunk(chunk));
    await writer.drain();
    const usage = { prompt: result.usage.prompt_tokens, completion: result.usage.completion_tokens };
    // A reply cut at the token limit has no complete calls to act on.
    const calls = result.finish_reason === 'length' ? [] : result.tool_calls;

    if (calls.length) {
      const stepId = writer.toolCalls(calls);
      const searches = writer.searchCalls();
      if (searches.length) {
        const found = await runSearches(ctx, run, stores, searches, settings ?? {}, signal).catch(async (err: unknown) => {
          // The step is written before the run fails, so it shows the failed search.
          if (!signal.aborted) await commitRun(ctx, run.id, (tx) => writer.flushIn(tx));
          throw err;
        });
        writer.searched(found);
      }
      const codes = writer.codeCalls();
      if (codes.length && sandbox) {
        // The step shows the code while it runs; each call's outputs (and the files it wrote) commit together.
        await commitRun(ctx, run.id, (tx) => writer.flushIn(tx));
        for (const call of codes) {
          const result = await sandbox.execute(call.id, call.code_interpreter.input);
          if (signal.aborted) throw new Lost();
          await commitRun(ctx, run.id, async (tx) => {
            await result.insert(tx);
            writer.coded(call.id, result.outputs, result.files);
            await writer.flushIn(tx);
          });
        }
      }
      const turnUsage = writer.splitUsage(usage);
      const functions = calls.filter((c) => c.function.name !== searchName && c.function.name !== codeName);
      if (!functions.length) {
        // Only file searches and code: their step is done, and the model answers from the results in the next turn.
        run = await commitRun(ctx, run.id, async (tx) => {
          writer.completeToolStep(turnUsage.tool);
          await writer.flushIn(tx);
          const row = await addRunUsage(tx, run.id, token, usage);
          if (!row) throw new Lost();
          return row;
        });
        continue;
      }
      const action: RequiredAction = {
        type: 'submit_tool_outputs',
        submit_tool_outputs: {
          tool_calls: functions.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.function.name, arguments: c.function.arguments },
          })),
        },
      };
      // The step waits for outputs: its calls' deltas held behind searches and code all go before requires_action.
      writer.releaseCalls();
      await commitRun(ctx, run.id, async (tx) => {
        // The run update below is conditional on the lease; failing it rolls the whole turn back.
        const written = await writer.flushIn(tx, false, true);
        await setStepUsage(tx, stepId, turnUsage.tool);
        const row = await markRequiresAction(tx, run.id, token, action, usage);
        if (!row) throw new Lost();
        await appendEvents(ctx, tx, run.id, [...written, { event: 'thread.run.requires_action', data: runView(row) }]);
      });
      return;
    }

    const { messageId, stepId } = writer.ensureMessage();
    writer.endText();
    const turnUsage = writer.splitUsage(usage);
    const filtered = result.finish_reason === 'content_filter';
    const outcome: Outcome =
      result.finish_reason === 'length' ? { status: 'incomplete', reason: 'max_completion_tokens' } : { status: 'completed' };
    const ticket = run.ratelimit_ticket;
    const ended = await commitRun(ctx, run.id, async (tx) => {
      // No lease check of its own: finishRun below only ends the run while this worker holds it. The
      // turn's events are numbered with the end's, in one append.
      const extra: RunEvent[] = await writer.flushIn(tx, false, true);
      await setStepUsage(tx, stepId, turnUsage.message);
      if (filtered)
        extra.push({
          event: 'thread.message.incomplete',
          data: messageView(await markMessageIncomplete(tx, messageId, 'content_filter', ctx.clock.nowSeconds())),
        });
      // This worker holds the run, so its ticket is the one it read: taken with the end, in the same statement.
      const row = await finishRun(ctx, tx, run.id, outcome, { leaseToken: token, extraEvents: extra, usageDelta: usage, ticket });
      if (!row) throw new Lost();
      return row;
    });
    await releaseTicket(ctx, ticket, ended);
    return;
  }
}
