import { request } from 'node:https';

/** One HTTPS request over a fresh TLS connection, presenting `cert` (PEM chain, leaf first) and `key`. */
export function tlsRequest(opts: {
  port: number;
  ca: string;
  method?: string;
  path?: string;
  body?: unknown;
  headers?: Record<string, string>;
  cert?: string;
  key?: string;
}): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const req = request(
      {
        host: '127.0.0.1',
        port: opts.port,
        method: opts.method ?? 'POST',
        path: opts.path ?? '/oauth/token',
        ca: opts.ca,
        servername: 'localhost',
        cert: opts.cert,
        key: opts.key,
        agent: false,
        headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
