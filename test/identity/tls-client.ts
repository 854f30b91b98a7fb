import { request } from 'node:https';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/**
 * One HTTPS request over a fresh TLS connection, presenting `cert` (PEM chain, leaf first) and `key`; from
 * `localAddress` (any 127.x address on Linux), and with `proxyHeader` written before the TLS handshake, as a
 * balancer speaking the PROXY protocol does.
 */
export function tlsRequest(opts: {
  port: number;
  ca: string;
  method?: string;
  path?: string;
  body?: unknown;
  headers?: Record<string, string>;
  cert?: string;
  key?: string;
  localAddress?: string;
  proxyHeader?: string | Buffer;
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
        // No agent: a fresh connection each time, or (createConnection) the one made here.
        agent: opts.proxyHeader === undefined ? false : undefined,
        localAddress: opts.localAddress,
        ...(opts.proxyHeader === undefined
          ? {}
          : {
              createConnection: () => {
                const raw = connect({ host: '127.0.0.1', port: opts.port, localAddress: opts.localAddress });
                raw.write(opts.proxyHeader!);
                return tlsConnect({ socket: raw, ca: opts.ca, servername: 'localhost', cert: opts.cert, key: opts.key });
              },
            }),
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
