import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { watchBody } from './body-timeout.js';

/** Whether a request's watch set the idle bound (300 ms) on its socket, and whether the server cut it. */
interface Seen {
  idleBoundSet: boolean;
  closedBy: 'server' | null;
}

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A server whose every request goes through `watchBody` (idle 300 ms, total 5 s) and is answered once its body ends. */
function serve(): Promise<{ port: number; seen: Promise<Seen> }> {
  let report: (s: Seen) => void;
  const seen = new Promise<Seen>((r) => (report = r));
  server = createServer((raw: IncomingMessage, res) => {
    const socket = raw.socket;
    const set = socket.setTimeout.bind(socket);
    let idleBoundSet = false;
    socket.setTimeout = (ms: number, ...rest: [(() => void)?]) => {
      if (ms === 300) idleBoundSet = true;
      return set(ms, ...rest);
    };
    watchBody({ raw } as FastifyRequest, 300, 5000);
    raw.on('close', () => report({ idleBoundSet, closedBy: raw.complete ? null : 'server' }));
    raw.resume();
    raw.on('end', () => res.end('ok'));
  });
  return new Promise((resolve) => server!.listen(0, '127.0.0.1', () => resolve({ port: (server!.address() as AddressInfo).port, seen })));
}

const head = (length: number) => `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('watchBody', () => {
  it('arms nothing for a body that came with its headers', async () => {
    const { port, seen } = await serve();
    const reply = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{"name":"a body in one packet"}' });
    expect(await reply.text()).toBe('ok');
    expect(await seen).toEqual({ idleBoundSet: false, closedBy: null });
  });

  it('arms the idle bound for a body still arriving, and cuts it when it goes silent', async () => {
    const { port, seen } = await serve();
    const socket = connect(port, '127.0.0.1', () => socket.write(head(100) + '{"name":'));
    socket.on('error', () => undefined);
    const started = performance.now();
    await new Promise((resolve) => socket.on('close', resolve));
    expect(performance.now() - started).toBeLessThan(3000);
    expect(await seen).toEqual({ idleBoundSet: true, closedBy: 'server' });
  });
});
