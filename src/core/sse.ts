import type { Writable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The stream writer the interfaces share (runs, responses): a server-sent events reply taken over from
 * Fastify, and frames written with back-pressure, so a slow reader holds the writer instead of memory.
 */

/** Writes a frame; when the socket is full, waits for it to drain (or to close: nobody reads any more). */
export async function writeFrame(raw: Pick<Writable, 'write' | 'once' | 'off'>, frame: string): Promise<void> {
  if (raw.write(frame)) return;
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
  const ac = new AbortController();
  raw.on('close', () => ac.abort());
  return ac.signal;
}
