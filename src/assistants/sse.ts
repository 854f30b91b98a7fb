import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../core/module.js';
import { openEventStream, writeFrame } from '../core/sse.js';
import { runtime } from './runs/runtime.js';
import { isTerminal, TERMINAL } from './runs/states.js';
import { eventsAfter, type StoredEvent } from './store/events.js';
import { getRunById } from './store/runs.js';

/**
 * Server-sent events of a run: every frame has an `event:` line and a JSON `data:` line, in the order the
 * run's events were committed; the stream ends after the run's final event for this request (completed,
 * incomplete, failed, cancelled, expired or requires_action) with `event: done` / `data: [DONE]`. A
 * failure while streaming is sent as `event: error` with the error object as data.
 *
 * Streams read the run's event log (`run_events`), so a stream served here follows a run executed by any
 * instance; the bus wakes it at each commit, and a short timer covers a missed wake-up.
 */

/** The events that end a stream: the run ended, or waits for tool outputs. */
const STOP = new Set([...TERMINAL, 'requires_action'].map((status) => `thread.run.${status}`));
const IDLE_MS = 250;
const DONE = 'event: done\ndata: [DONE]\n\n';

/** Yields the run's events after `afterSeq`, as many as one read finds at a time, until one that ends this stream. */
async function* followRun(ctx: Ctx, runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<StoredEvent[]> {
  const bus = runtime(ctx).bus;
  let last = afterSeq;
  let idle = 0;
  while (!signal.aborted) {
    const wake = bus.waiter(runId, IDLE_MS, signal);
    const rows = await eventsAfter(ctx.store.db, runId, last);
    if (rows.length) {
      wake.cancel();
      idle = 0;
      const batch: StoredEvent[] = [];
      for (const row of rows) {
        last = Number(row.seq);
        batch.push({ seq: last, event: row.event, data: row.data });
        if (STOP.has(row.event)) return yield batch;
      }
      yield batch;
      continue;
    }
    if (++idle % 4 === 0) {
      const run = await getRunById(ctx.store.db, runId);
      if (!run) throw new Error(`The run ${runId} was deleted.`);
      // Ended, and its events already cleaned up: nothing more will come.
      if (isTerminal(run.status) && Number(run.event_seq) <= last) return;
    }
    await wake.promise;
  }
}

/** The tool calls of a step event or a step delta, as far as file search results go. */
type WithResults = { tool_calls?: { type: string; file_search?: { results?: { content?: unknown }[] } }[] };

/**
 * Step events and step deltas are logged with their file search results' content (turn-writer.ts,
 * views.ts stepEvent); a stream whose request did not ask for it (`include[]`) gets them without.
 */
function withoutContent(data: string): string {
  const step = JSON.parse(data) as { step_details?: WithResults; delta?: { step_details?: WithResults } };
  const details = step.step_details ?? step.delta?.step_details;
  for (const call of details?.tool_calls ?? []) {
    if (call.type === 'file_search') for (const r of call.file_search?.results ?? []) delete r.content;
  }
  return JSON.stringify(step);
}

/** Where a stream starts and what it carries besides the run's events. */
export interface StreamFrom {
  /** The stream starts after this event number. */
  afterSeq: number;
  /**
   * Events after `afterSeq` the request itself committed (a create's, a submission's), in order: written
   * at once, before the run's execution has a turn, not read back; the stream reads on after the last.
   */
  first?: StoredEvent[];
  headers?: Record<string, string>;
  /** File search results keep their content (`include[]`). */
  includeContent?: boolean;
}

/** Answers the request with the run's event stream. */
export async function streamRun(ctx: Ctx, request: FastifyRequest, reply: FastifyReply, runId: string, from: StreamFrom): Promise<void> {
  const { first = [], includeContent = false } = from;
  const signal = openEventStream(request, reply, from.headers ?? {});
  const raw = reply.raw;
  const send = (frame: string) => writeFrame(raw, frame);
  const afterSeq = first.length ? first[first.length - 1].seq : from.afterSeq;
  async function* batches() {
    if (first.length) yield first;
    if (!first.some((e) => STOP.has(e.event))) yield* followRun(ctx, runId, afterSeq, signal);
  }
  try {
    // The events of one read go out in one write (and the end with the last of them), not one write each.
    let ended = false;
    for await (const batch of batches()) {
      let frames = '';
      for (const e of batch) {
        const stepWithResults = !includeContent && e.event.startsWith('thread.run.step.') && e.data.includes('"results"');
        const data = stepWithResults ? withoutContent(e.data) : e.data;
        frames += `event: ${e.event}\ndata: ${data}\n\n`;
        ended = STOP.has(e.event);
      }
      if (ended) frames += DONE;
      await send(frames);
    }
    if (!signal.aborted && !ended) await send(DONE);
  } catch (err) {
    request.log.warn({ err, run: runId }, 'run stream failed');
    const message =
      err instanceof Error && /was deleted/.test(err.message) ? err.message : 'The server had an error while streaming the run.';
    if (!signal.aborted)
      await send(`event: error\ndata: ${JSON.stringify({ code: 'server_error', message, param: null, type: 'server_error' })}\n\n`);
  } finally {
    raw.end();
  }
}
