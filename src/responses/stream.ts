import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import { openEventStream, writeFrame } from '../core/sse.js';
import { ENDS } from './event-log.js';
import type { StreamEvent } from './events.js';
import type { ResponseObject } from './schemas.js';
import { getResponse, type Streaming } from './service.js';
import { wasStreamed } from './store.js';
import { eventsAfter } from './stream-store.js';

/**
 * Server-sent events of `/v1/responses`: each frame is `event: <type>` and `data: <event JSON>`, the
 * events of the official document (`ResponseStreamEvent`) with their `sequence_number`; the stream ends
 * after the terminal event (`response.completed`, `response.incomplete`, `response.failed`, `error`), with
 * no `[DONE]` (the Responses stream has none).
 */

const frame = (e: { type: string }, data = JSON.stringify(e)) => `event: ${e.type}\ndata: ${data}\n\n`;
const IDLE_MS = 250;

/**
 * A response streamed as it runs in this request: the event stream opens with the first event (a refusal
 * before it is an ordinary HTTP error), frames are written in order with back-pressure, and a client that
 * goes away aborts the model call. Resolves with the final response (for the rate limiter).
 */
export async function streamInRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  headers: Record<string, string>,
  run: (streaming: Streaming) => Promise<ResponseObject>,
): Promise<ResponseObject> {
  const gone = new AbortController();
  let signal: AbortSignal | undefined;
  let writing = Promise.resolve();
  const held: string[] = [];
  const sink = (e: StreamEvent) => {
    if (!signal) {
      signal = openEventStream(request, reply, headers);
      signal.addEventListener('abort', () => gone.abort(), { once: true });
    }
    if (signal.aborted) return;
    const text = frame(e);
    // The terminal event waits for the response to be stored: a client that retrieves it on that event finds it.
    if (ENDS.has(e.type)) held.push(text);
    else writing = writing.then(() => (signal!.aborted ? undefined : writeFrame(reply.raw, text)));
  };
  try {
    const done = await run({ sink, signal: gone.signal });
    await writing;
    for (const text of held) if (!signal?.aborted) await writeFrame(reply.raw, text);
    return done;
  } catch (err) {
    if (!signal) throw err;
    request.log.warn({ err }, 'response stream failed');
    await writing;
    if (!signal.aborted) reply.raw.write(frame({ type: 'error' }, errorEvent('The server had an error while streaming the response.')));
    throw err;
  } finally {
    if (signal) reply.raw.end();
  }
}

const errorEvent = (message: string, seq = 0) =>
  JSON.stringify({ type: 'error', code: 'server_error', message, param: null, sequence_number: seq });

/**
 * `GET /v1/responses/{id}?stream=true&starting_after=N`: the stored events of a background response
 * created with `stream: true`, after N, then its new ones as the job writes them (any instance's), until
 * its terminal event. A cancelled response's stream ends when the cancel lands (the document has no event
 * for it). A client that goes away stops only its own reading.
 */
export async function followResponse(
  ctx: Ctx,
  request: FastifyRequest,
  reply: FastifyReply,
  projectId: string,
  id: string,
  after: number,
  headers: Record<string, string> = {},
): Promise<void> {
  const r = await getResponse(ctx, projectId, id);
  if (!r.background || !(await hasStream(ctx, id))) {
    // Streamed, but its events are gone: kept for a time after they were written (retention rule response_events).
    if (r.background && (await wasStreamed(ctx.store.db, projectId, id)))
      throw invalid(
        `The stream of the response ${id} is no longer kept: its events were dropped after their keep time (retention rule 'response_events'). Retrieve the response without 'stream' for its final state.`,
        'stream',
        'stream_expired',
      );
    throw invalid(
      `The response ${id} was not created with 'background' and 'stream' set to true: it has no stream to resume.`,
      'stream',
      'invalid_value',
    );
  }
  const signal = openEventStream(request, reply, headers);
  const bus = ctx.services.responses.bus;
  let last = after;
  let idle = 0;
  try {
    while (!signal.aborted) {
      const wake = bus.waiter(id, IDLE_MS, signal);
      const rows = await eventsAfter(ctx.store.db, id, last);
      if (rows.length) {
        wake.cancel();
        idle = 0;
        for (const row of rows) {
          last = Number(row.seq);
          const type = (JSON.parse(row.data) as { type: string }).type;
          await writeFrame(reply.raw, frame({ type }, row.data));
          if (ENDS.has(type)) return;
        }
        continue;
      }
      if (++idle % 4 === 0) {
        const now = await getResponse(ctx, projectId, id);
        // Ended without a terminal event to come (cancelled), or ended and its events purged: nothing more.
        if (!['queued', 'in_progress'].includes(now.status) && !(await eventsAfter(ctx.store.db, id, last, 1)).length) return;
      }
      await wake.promise;
    }
  } catch (err) {
    request.log.warn({ err, response: id }, 'response stream failed');
    const gone = (err as { status?: number }).status === 404;
    if (!signal.aborted)
      await writeFrame(
        reply.raw,
        frame(
          { type: 'error' },
          errorEvent(gone ? `The response ${id} was deleted.` : 'The server had an error while streaming the response.', last + 1),
        ),
      );
  } finally {
    reply.raw.end();
  }
}

const hasStream = async (ctx: Ctx, id: string) => (await eventsAfter(ctx.store.db, id, -1, 1)).length > 0;
