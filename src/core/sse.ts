import type { Writable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The stream writer the interfaces share (runs, responses): a server-sent events reply taken over from
 * Fastify, and frames written with back-pressure, so a slow reader holds the writer instead of memory.
 */

/** Event streams opened whose first frame has not been written yet. */
const unopened = new WeakSet<object>();

/**
 * Writes a frame; when the socket is full, waits for it to drain (or to close: nobody reads any more).
 * Node holds a response's writes (it corks the socket) until the next tick, and a tick lasts as long as
 * its chain of promises: a run on the built-in model and SQLite never leaves it, so its stream's first
 * frame went out with its last. A stream's first frame is sent at once, with its headers (the client
 * sees the stream open); later frames written in one chain still leave together when it ends, in one
 * write (one read for the client rather than one a frame).
 */
export async function writeFrame(
  raw: Pick<Writable, 'write' | 'once' | 'off'> & { socket?: Pick<Writable, 'uncork'> | null },
  frame: string,
): Promise<void> {
  const ok = raw.write(frame);
  // The socket's uncork, not the response's: ServerResponse.uncork() without a cork of its own leaves the
  // response counting itself corked on Node 22 and later, and buffers every later chunk (a broken stream).
  // Node's own uncork at the next tick then finds the socket uncorked already, and does nothing.
  if (unopened.delete(raw)) raw.socket?.uncork();
  if (ok) return;
  // Whichever comes first; the other listener goes too, or a long stream gathers one per slow write.
  await new Promise<void>((resolve) => {
    const done = () => {
      raw.off('drain', done).off('close', done);
      resolve();
    };
    raw.once('drain', done).once('close', done);
  });
}

/**
 * Takes the reply over and opens an event stream (status 200 and the /v1 headers); the returned signal
 * aborts when the client goes away.
 */
export function openEventStream(request: FastifyRequest, reply: FastifyReply, headers: Record<string, string> = {}): AbortSignal {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-request-id': request.id,
    'openai-processing-ms': String(Math.max(0, Math.round(reply.elapsedTime))),
  });
  unopened.add(raw);
  const ac = new AbortController();
  raw.on('close', () => ac.abort());
  return ac.signal;
}
