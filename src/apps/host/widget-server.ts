import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HostService } from './service.js';

/**
 * The second listener: the separate origin that serves component documents (each with its CSP header and the
 * bridge inlined). Nothing of the host page lives here, so a component cannot reach it.
 */
export async function startWidgetServer(service: HostService, host: string, port: number): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed');
    if (url.pathname === '/favicon.ico') return send(204, 'image/x-icon', '');
    // An empty page the host loads while a tool runs, so the browser has a process for this origin ready.
    if (url.pathname === '/_standin/warm')
      return send(200, 'text/html; charset=utf-8', '<!doctype html><title>warm</title>', {
        'content-security-policy': "default-src 'none'",
      });
    const m = /^\/w\/([a-f0-9]{24})$/.exec(url.pathname);
    // Documents are in the store: the widget listener of any instance serves any of them.
    (m ? service.doc(m[1], req.headers.host) : Promise.resolve(undefined)).then(
      (doc) => {
        if (!doc) return send(404, 'text/plain', 'no such component document (documents live for a day after the host page rendered them)');
        send(200, 'text/html; charset=utf-8', doc.html, { 'content-security-policy': doc.csp, 'referrer-policy': 'no-referrer' });
      },
      () => send(503, 'text/plain', 'the store did not answer; try again'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { server, origin: `http://${h === '[::1]' ? 'localhost' : h}:${addr.port}` };
}
