import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Behaviour = (n: number, req: Received) => { status: number; body?: string; delayMs?: number; headers?: Record<string, string> };

/** A local webhook receiver that records every request and answers as `behaviour` says (200 by default). */
export async function startReceiver(behaviour: Behaviour = () => ({ status: 200, body: 'ok' }), host = '127.0.0.1') {
  const received: Received[] = [];
  let current = behaviour;
  const pending = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() };
      received.push(r);
      const answer = current(received.length, r);
      const send = () => res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(answer.body ?? '');
      if (answer.delayMs) {
        const t = setTimeout(() => {
          pending.delete(t);
          if (!res.destroyed) send();
        }, answer.delayMs);
        pending.add(t);
      } else send();
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/hook`,
    port,
    received,
    set(b: Behaviour) {
      current = b;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const t of pending) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
