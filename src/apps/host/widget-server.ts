import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sandboxPage } from './sandbox-page.js';
import type { HostService } from './service.js';

/**
 * The second listener: the separate origin that serves component documents (each with its CSP header and the
 * bridge inlined). Nothing of the host page lives here, so a component cannot reach it.
 */
/** The proxy page's own policy: its inline script and style, and frames of its own origin (the component's). */
const SANDBOX_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src 'self'; object-src 'none'; base-uri 'none'";

/** The most bytes of one CSP violation report read (a report is a few hundred bytes). */
const MAX_REPORT_BYTES = 16 * 1024;

/** A `report-uri` POST: recorded against the document's connection and template; always 204, even when dropped. */
function cspReport(service: HostService, id: string, req: IncomingMessage, res: ServerResponse) {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > MAX_REPORT_BYTES) {
      res.writeHead(413, { 'content-type': 'text/plain' }).end('report too large');
      req.destroy();
    } else chunks.push(c);
  });
  req.on('end', () => {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('a CSP report is JSON');
    }
    service.recordCspReport(id, req.headers.host, body).then(
      () => res.writeHead(204).end(),
      () => res.writeHead(503, { 'content-type': 'text/plain' }).end('the store did not answer; try again'),
    );
  });
}

export async function startWidgetServer(service: HostService, host: string, port: number): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const report = /^\/_standin\/csp-report\/([a-f0-9]{24})$/.exec(url.pathname);
    // The browser marks its own reports (Sec-Fetch-Dest: report); a component's script on this origin cannot, and its
    // fetch says `empty`. A browser that sends no Fetch Metadata (or an origin it does not send them to) is believed.
    const dest = req.headers['sec-fetch-dest'];
    if (report && req.method === 'POST' && dest !== undefined && dest !== 'report')
      return send(403, 'text/plain', 'a CSP report is sent by the browser itself (Sec-Fetch-Dest: report), not by a script');
    if (report && req.method === 'POST') return void cspReport(service, report[1], req, res);
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed');
    if (url.pathname === '/favicon.ico') return send(204, 'image/x-icon', '');
    // An empty page the host loads while a tool runs, so the browser has a process for this origin ready.
    if (url.pathname === '/_standin/warm')
      return send(200, 'text/html; charset=utf-8', '<!doctype html><title>warm</title>', {
        'content-security-policy': "default-src 'none'",
      });
    // The sandbox proxy of a document, and (`/frame`) the empty page its inner frame loads and writes the document
    // into: that page carries the component's CSP (and the strict one report-only under the lenient profile).
    const proxy = /^\/_standin\/sandbox\/([a-f0-9]{24})(\/frame)?$/.exec(url.pathname);
    if (proxy)
      return void service.doc(proxy[1], req.headers.host).then(
        (doc) => {
          if (!doc)
            return send(404, 'text/plain', 'no such component document (documents live for a day after the host page rendered them)');
          if (!proxy[2]) return send(200, 'text/html; charset=utf-8', sandboxPage(), { 'content-security-policy': SANDBOX_CSP });
          send(200, 'text/html; charset=utf-8', '<!doctype html><title>component</title>', {
            'content-security-policy': doc.csp,
            ...(doc.cspReportOnly ? { 'content-security-policy-report-only': doc.cspReportOnly } : {}),
            'referrer-policy': 'no-referrer',
          });
        },
        () => send(503, 'text/plain', 'the store did not answer; try again'),
      );
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
