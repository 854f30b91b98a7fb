import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';

/**
 * Bounds how a request body arrives: no byte for `idleMs`, or not all of it within `totalMs`, and the
 * connection is closed (0 turns a bound off). A client that sends headers and part of a body then goes
 * silent, or trickles it, would otherwise hold the connection (and an upload's partial file) forever;
 * closing the request makes the reader of the body fail, and what it wrote is removed as for any failed
 * upload. Called by the front door, so it costs no hook of its own; a request without a body costs two
 * header reads.
 *
 * The front door runs while Node parses the request's headers, before the rest of the same packet: a
 * body that came with its headers (an ads create, most JSON, from the SDK's fetch as from `http.request`)
 * is complete once the packet is parsed, which the loop's next turn sees. So the watch is armed then
 * (`setImmediate`), only for a body still arriving: a small body costs one immediate, not three listeners,
 * a timer and the socket's timeout set and cleared.
 */
export function watchBody(request: FastifyRequest, idleMs: number, totalMs: number): void {
  const raw = request.raw;
  if (raw.complete) return;
  const headers = raw.headers;
  if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return;
  // An injected request (tests, `app.inject`) has no real socket, and its body is all there.
  const socket = raw.socket;
  if (typeof socket?.setTimeout !== 'function') return;
  setImmediate(arm, raw, socket, idleMs, totalMs);
}

function arm(raw: IncomingMessage, socket: Socket, idleMs: number, totalMs: number): void {
  if (raw.complete || raw.destroyed) return;
  const cut = () => {
    clear();
    raw.destroy();
  };
  // The socket's inactivity timer: any byte received restarts it (Node keeps it, no work per chunk here).
  if (idleMs > 0) {
    socket.setTimeout(idleMs);
    raw.once('timeout', cut);
  }
  const total = totalMs > 0 ? setTimeout(cut, totalMs) : undefined;
  function clear() {
    clearTimeout(total);
    if (idleMs > 0) {
      raw.off('timeout', cut);
      socket.setTimeout(0);
    }
  }
  raw.once('end', clear);
  raw.once('close', clear);
}
