import type { FastifyReply, FastifyRequest } from 'fastify';

type PreParsing = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload?: never) => void) => void;

/**
 * A preParsing hook that bounds how a request body arrives: no byte for `idleMs`, or not all of it within
 * `totalMs`, and the connection is closed. A client that sends headers and part of a body then goes silent
 * would otherwise hold the connection (and an upload's partial file) forever; closing the request makes
 * the reader of the body fail, and what it wrote is removed as for any failed upload. A body that has
 * fully arrived by the time the hook runs (the common small JSON body) costs one property read.
 */
export function bodyTimeouts(idleMs: number, totalMs: number): PreParsing {
  return (request, _reply, _payload, done) => {
    const raw = request.raw;
    // An injected request (tests, `app.inject`) has no real socket, and its body is all there.
    if (raw.complete || typeof raw.socket?.setTimeout !== 'function') return done(null);
    const cut = () => {
      clear();
      raw.destroy();
    };
    // The socket's inactivity timer: any byte received restarts it (Node keeps it, no work per chunk here).
    raw.socket.setTimeout(idleMs);
    raw.once('timeout', cut);
    // 0 turns a bound off, as Node's own timeouts read it.
    const total = totalMs > 0 ? setTimeout(cut, totalMs) : undefined;
    function clear() {
      clearTimeout(total);
      raw.off('timeout', cut);
      raw.socket?.setTimeout(0);
    }
    raw.once('end', clear);
    raw.once('close', clear);
    done(null);
  };
}
