import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import type { Ctx } from '../../core/module.js';
import { createProxyTrust } from '../../core/proxy-trust.js';
import { makeIntermediate, makeLeaf, makeRoot, type Issued } from '../../../test/identity/certs.js';
import { tlsRequest } from '../../../test/identity/tls-client.js';
import { MtlsListeners, serverIdentity } from './listeners.js';

/** The mTLS listeners on their own: a small Fastify app behind them reports what the listener saw. */
let app: FastifyInstance;
let listeners: MtlsListeners;
let authPort: number;
let apiPort: number;
let server: Issued;
let root: Issued;
let inter: Issued;
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const sha = (der: Buffer) => createHash('sha256').update(der).digest('hex');

beforeAll(async () => {
  root = await makeRoot('Listener Root');
  inter = await makeIntermediate(root);
  // A configured server certificate (PEM text; a path works too) instead of the generated one.
  server = await makeLeaf(root, { cn: 'localhost', dns: ['localhost'], eku: ['1.3.6.1.5.5.7.3.1'] });
  const ctx = {
    settings: { host: '127.0.0.1', tlsCert: server.pem, tlsKey: server.keyPem },
    log: quiet,
    banner: [],
    listeners: {},
    services: { proxyTrust: createProxyTrust() },
  } as unknown as Ctx;
  listeners = new MtlsListeners(ctx);
  app = Fastify();
  const seen = (request: any) => ({ kind: listeners.kindOf(request.raw.socket), chain: listeners.chainOf(request.raw.socket).map(sha) });
  app.post('/oauth/token', async (request) => seen(request));
  app.get('/v1/thing', async (request) => seen(request));
  app.get('/admin/v1/thing', async () => ({ admin: true }));
  await app.ready();
  authPort = await listeners.start(app, 'auth', 0);
  apiPort = await listeners.start(app, 'api', 0);
});
afterAll(async () => {
  await listeners.stop();
  await app.close();
});

describe('MtlsListeners', () => {
  it('serves with the configured certificate and hands the presented chain (only) to the app', async () => {
    const leaf = await makeLeaf(inter);
    const res = await tlsRequest({ port: authPort, ca: root.pem, body: {}, cert: leaf.pem + inter.pem, key: leaf.keyPem });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ kind: 'auth', chain: [sha(leaf.der), sha(inter.der)] });
    expect(listeners.serverCertificate()).toBe(server.pem);
  });

  it('a client without a certificate still connects; the chain is empty', async () => {
    const res = await tlsRequest({ port: apiPort, ca: root.pem, method: 'GET', path: '/v1/thing' });
    expect(res.body).toEqual({ kind: 'api', chain: [] });
  });

  it('the token listener answers 403 to anything but POST /oauth/token; the API listener serves /v1 only', async () => {
    expect((await tlsRequest({ port: authPort, ca: root.pem, method: 'GET', path: '/oauth/token' })).status).toBe(403);
    expect((await tlsRequest({ port: authPort, ca: root.pem, method: 'GET', path: '/v1/thing' })).status).toBe(403);
    expect((await tlsRequest({ port: apiPort, ca: root.pem, method: 'GET', path: '/admin/v1/thing' })).status).toBe(404);
  });

  it('requests on the HTTP side are no mTLS requests', async () => {
    const res = await app.inject({ method: 'POST', url: '/oauth/token', payload: {} });
    expect(res.json()).toEqual({ kind: null, chain: [] });
  });
});

describe('serverIdentity', () => {
  it('generates a localhost certificate when none is configured, and wants cert and key together', async () => {
    const id = await serverIdentity({});
    expect(id.generated).toBe(true);
    expect(id.cert).toMatch(/BEGIN CERTIFICATE/);
    expect(id.key).toMatch(/BEGIN PRIVATE KEY/);
    await expect(serverIdentity({ tlsCert: server.pem })).rejects.toThrow(/together/);
  });
});
