import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny load balancer for tests, with no stickiness at all: requests alternate between the backends, and a
 * request for something one backend made (a component document, an uploaded file) goes to another one.
 * `made` is shared by the proxies of one deployment (the main and the widget listener).
 */
export interface Balancer {
  url: string;
  /** Which backend (index) served each request, in order: `[method path, backend]`. */
  log: [string, number][];
  close(): Promise<void>;
}

/** Ids made by a backend (document ids, file ids), by id. */
export type Made = Map<string, number>;

export async function startBalancer(backends: string[], made: Made): Promise<Balancer> {
  let next = 0;
  const log: [string, number][] = [];
  const pick = (path: string): number => {
    const id = /^\/(?:w|apps\/files|_standin\/sandbox)\/([A-Za-z0-9_]+)/.exec(path)?.[1];
    const maker = id === undefined ? undefined : made.get(id);
    if (maker !== undefined) return (maker + 1) % backends.length;
    return next++ % backends.length;
  };
  const learn = (path: string, backend: number, body: Buffer) => {
    if (path !== '/apps/api/render' && path !== '/apps/api/files') return;
    try {
      const json = JSON.parse(body.toString('utf8')) as { url?: string; fileId?: string };
      const doc = json.url && /\/w\/([a-f0-9]+)$/.exec(json.url)?.[1];
      if (doc) made.set(doc, backend);
      if (json.fileId) made.set(json.fileId, backend);
    } catch {
      /* not JSON: nothing to learn */
    }
  };
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    const backend = pick(path.split('?')[0]);
    log.push([`${req.method} ${path.split('?')[0]}`, backend]);
    const target = new URL(backends[backend]);
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path, headers: req.headers, agent: false },
      (up: IncomingMessage) => {
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('end', () => {
          const body = Buffer.concat(chunks);
          learn(path.split('?')[0], backend, body);
          const headers = { ...up.headers };
          delete headers['transfer-encoding'];
          headers['content-length'] = String(body.length);
          res.writeHead(up.statusCode ?? 502, headers);
          res.end(body);
        });
      },
    );
    upstream.on('error', () => {
      res.writeHead(502).end('bad gateway');
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
