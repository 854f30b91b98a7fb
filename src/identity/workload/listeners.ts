import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { constants, webcrypto } from 'node:crypto';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../core/module.js';
import { acceptProxied } from '../../core/proxy-protocol.js';
import { routerPath } from '../../core/route-path.js';
import { OAUTH_ERROR_HEADERS, type OAuthErrorBody } from './errors.js';
import { X509_LIMITS } from './x509.js';
import type * as X509 from '@peculiar/x509';
import { lazy } from '../../store/lazy.js';

const reflectMetadata = lazy<unknown>('reflect-metadata');
const x509Lib = lazy<typeof X509>('@peculiar/x509');

/**
 * The two mutual TLS listeners. Each is its own HTTPS server that asks for a client certificate in the
 * handshake (accepting any, so the verdict — against the roots of the organization named in the request —
 * is given by the token exchange with a proper OAuth error) and hands the requests it admits to the main
 * Fastify app, so hooks, logging and error rendering are the same as on the HTTP listener.
 *  - `auth`: POST /oauth/token only (X.509 exchange); anything else answers 403.
 *  - `api`: the `/v1` API, where X.509-minted tokens are accepted together with a client certificate.
 */
export type ListenerKind = 'auth' | 'api';

export interface ServerIdentity {
  cert: string;
  key: string;
  generated: boolean;
}

/** The configured server certificate (PEM text or a file path), or one generated for local use. */
export async function serverIdentity(settings: { tlsCert?: string; tlsKey?: string }): Promise<ServerIdentity> {
  if (settings.tlsCert || settings.tlsKey) {
    if (!settings.tlsCert || !settings.tlsKey) throw new Error('--tls-cert and --tls-key go together');
    const read = (v: string) => (v.includes('-----BEGIN') ? v : readFileSync(v, 'utf8'));
    return { cert: read(settings.tlsCert), key: read(settings.tlsKey), generated: false };
  }
  // Loaded here, from node_modules: only a generated server certificate needs them. (Not a dynamic import():
  // in the split bundle that hands a CommonJS package over as `default` only.)
  reflectMetadata();
  const x509 = x509Lib();
  x509.cryptoProvider.set(webcrypto as unknown as Crypto);
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  // Validity defaults to one year from the wall clock: TLS clients judge it by theirs, not Standin's.
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=localhost, O=Standin local mTLS',
    keys,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
  return { cert: cert.toString('pem'), key, generated: true };
}

export class MtlsListeners {
  private readonly kinds = new WeakMap<Socket, ListenerKind>();
  private readonly servers = new Map<ListenerKind, Server>();
  /** The client a balancer named in a connection's PROXY header, by the connection's peer address and port. */
  private readonly proxied = new Map<string, string>();
  private identity: ServerIdentity | null = null;

  constructor(private readonly ctx: Ctx) {}

  /** Which mTLS listener a request's socket came through, or null for the HTTP listener. */
  kindOf(socket: Socket | undefined | null): ListenerKind | null {
    return socket ? (this.kinds.get(socket) ?? null) : null;
  }

  /** DER certificates the client presented in the handshake, leaf first (never fetched, never from a store). */
  chainOf(socket: Socket): Buffer[] {
    const tls = socket as TLSSocket;
    if (typeof tls.getPeerCertificate !== 'function') return [];
    const leaf = tls.getPeerCertificate(true) as PeerCertificate & { issuerCertificate?: PeerCertificate };
    if (!leaf || !leaf.raw) return [];
    const out = [leaf.raw];
    const seen = new Set([leaf.fingerprint256]);
    let cur = leaf as PeerCertificate & { issuerCertificate?: PeerCertificate };
    while (
      cur.issuerCertificate &&
      cur.issuerCertificate.raw &&
      !seen.has(cur.issuerCertificate.fingerprint256) &&
      out.length < X509_LIMITS.maxPresented + 1
    ) {
      cur = cur.issuerCertificate as typeof cur;
      seen.add(cur.fingerprint256);
      out.push(cur.raw);
    }
    return out;
  }

  /** The server certificate (PEM) of the listeners, once one started. */
  serverCertificate(): string | null {
    return this.identity?.cert ?? null;
  }

  /** Starts one listener on `port` (0: a free one); returns the port. */
  async start(app: FastifyInstance, kind: ListenerKind, port: number, host = this.ctx.settings.host): Promise<number> {
    if (this.servers.has(kind)) throw new Error(`the mTLS ${kind} listener already runs`);
    this.identity ??= await serverIdentity(this.ctx.settings);
    const server = createServer(
      {
        key: this.identity.key,
        cert: this.identity.cert,
        // The store holds only our own certificate, so no issuer can be borrowed from it when Node links the chain.
        ca: [this.identity.cert],
        requestCert: true,
        rejectUnauthorized: false,
        minVersion: 'TLSv1.2',
        // Without resumption every connection carries its full chain through a full handshake.
        secureOptions: constants.SSL_OP_NO_TICKET,
        requestTimeout: 30_000,
        headersTimeout: 10_000,
      },
      (req, res) => {
        // As the router will read it: an absolute-form target or an encoded letter reaches the same route.
        const path = routerPath(req.url ?? '');
        if (kind === 'auth' && (req.method !== 'POST' || path !== '/oauth/token')) {
          // Answered before the app (no route matches here), in the token endpoint's error shape.
          const body: OAuthErrorBody = {
            error: 'access_denied',
            error_description: 'The mutual TLS token endpoint serves only POST /oauth/token.',
          };
          res.writeHead(403, { 'content-type': 'application/json', ...OAUTH_ERROR_HEADERS });
          res.end(JSON.stringify(body));
          return;
        }
        if (kind === 'api' && !path?.startsWith('/v1/')) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              error: { message: 'The mutual TLS API listener serves /v1 only.', type: 'not_found_error', param: null, code: 'unknown_url' },
            }),
          );
          return;
        }
        // A balancer in front of these listeners passes TLS through untouched (it cannot add headers), so
        // any X-Forwarded-* here came from the client: never believe it, whatever trust_proxy says. The
        // client a trusted balancer named in the connection's PROXY header is what it says instead (the
        // balancer is the peer, so request.ip believes it).
        delete req.headers['x-forwarded-for'];
        delete req.headers['x-forwarded-host'];
        delete req.headers['x-forwarded-proto'];
        const client = this.proxied.get(peerOf(req.socket));
        if (client) req.headers['x-forwarded-for'] = client;
        app.routing(req, res);
      },
    );
    server.on('secureConnection', (socket) => this.kinds.set(socket, kind));
    server.on('tlsClientError', () => {
      /* a failed handshake is the client's problem; nothing to log with secrets in it */
    });
    this.readProxyHeaders(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.servers.set(kind, server);
    const bound = (server.address() as AddressInfo).port;
    const line = `mutual TLS ${kind === 'auth' ? 'token endpoint' : 'API'}: https://${host}:${bound}${kind === 'auth' ? '/oauth/token' : '/v1'}`;
    this.ctx.log.info({ kind, port: bound }, line);
    this.ctx.banner.push(`  ${line}`);
    this.ctx.listeners[kind === 'auth' ? 'mtls_token' : 'mtls_api'] = `https://${host.includes(':') ? `[${host}]` : host}:${bound}`;
    return bound;
  }

  /**
   * Puts the PROXY header a trusted balancer sends (core/proxy-protocol.ts) before the TLS handshake: the
   * server's own handshake listener gets each connection once its header is read.
   */
  private readProxyHeaders(server: Server): void {
    const handshakes = server.listeners('connection') as ((raw: Socket) => void)[];
    if (handshakes.length !== 1) throw new Error('the mTLS listener expects one connection listener (Node.js tls.Server)');
    server.removeAllListeners('connection');
    server.on('connection', (raw: Socket) =>
      acceptProxied(
        raw,
        (address) => this.ctx.services.proxyTrust.trusts(address),
        (client) => {
          if (client) {
            const peer = peerOf(raw);
            this.proxied.set(peer, client);
            raw.once('close', () => this.proxied.delete(peer));
          }
          handshakes[0].call(server, raw);
        },
      ),
    );
  }

  async stop(): Promise<void> {
    for (const [kind, server] of this.servers) {
      // In-flight requests get a moment to finish; idle keep-alive connections go at once.
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), 2_000);
      await closed;
      clearTimeout(force);
      this.servers.delete(kind);
    }
  }
}

/** A connection's peer address and port: the same on the TCP socket and the TLS socket over it. */
const peerOf = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;
