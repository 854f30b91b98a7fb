import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkloadIdentityService } from '../../src/identity/workload/module.js';
import { makeIntermediate, makeLeaf, makeRoot, type Issued } from './certs.js';
import { dialects } from '../helpers.js';
import { GRANT, identityFixture, JWT_TYPE, X509_TYPE, type IdentityFixture } from './setup.js';
import { tlsRequest } from './tls-client.js';

/**
 * X.509 exchange over real TLS connections with client certificates: the mTLS token endpoint, the chain
 * checks against the organization's active roots, the admission rules, CEL, the mappings, and the use of
 * X.509-minted tokens on the mTLS API listener.
 */
const DAY = 86_400_000;
let f: IdentityFixture;
let authPort: number;
let apiPort: number;
let ca: string;
let root: Issued;
let inter: Issued;
let otherRoot: Issued;
let otherInter: Issued;
const PROVIDER = 'idp_mtls';
const chain = (leaf: Issued, ...rest: Issued[]) => [leaf.pem, ...rest.map((c) => c.pem)].join('');

describe.each(dialects())('X.509 exchange (%s)', (dialect) => {
  beforeAll(async () => {
    f = await identityFixture({ dialect });
    const service = f.t.ctx.services.workloadIdentity as WorkloadIdentityService;
    authPort = await service.startListener('auth', 0);
    apiPort = await service.startListener('api', 0);
    ca = service.listeners.serverCertificate()!;
    root = await makeRoot('Acme Root');
    inter = await makeIntermediate(root, 'Acme Issuing');
    otherRoot = await makeRoot('Other Root');
    otherInter = await makeIntermediate(otherRoot, 'Other Issuing');
    const r1 = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/mtls_roots`, {
      id: 'mtlsroot_acme',
      name: 'acme',
      certificate: root.pem,
    });
    expect(r1.status, JSON.stringify(r1.body)).toBe(201);
    const r2 = await f.admin('POST', `/admin/v1/organizations/${f.other.orgId}/mtls_roots`, { name: 'other', certificate: otherRoot.pem });
    expect(r2.status, JSON.stringify(r2.body)).toBe(201);
    const p = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/identity_providers`, {
      id: PROVIDER,
      kind: 'x509',
      name: 'workers',
      attribute_mapping: {
        'vendor.subject': 'assertion.subject.dn.cn',
        'attribute.spiffe': 'assertion.san.uris.size() > 0 ? assertion.san.uris[0] : ""',
      },
      attribute_condition: 'assertion.subject.dn.o == "Acme"',
      mappings: [
        {
          id: 'idpmap_workers',
          name: 'workers',
          service_account_id: f.sa,
          project_id: f.projectId,
          attribute_match: { 'attribute.spiffe': 'spiffe://acme.test/worker' },
          permissions: { threads: 'write' },
        },
      ],
    });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
  });
  afterAll(async () => {
    await f.t.close();
  });

  const body = (extra: Record<string, unknown> = {}) => ({
    grant_type: GRANT,
    subject_token_type: X509_TYPE,
    identity_provider_id: PROVIDER,
    service_account_id: f.sa,
    ...extra,
  });
  const worker = (opts: Parameters<typeof makeLeaf>[1] = {}) =>
    makeLeaf(inter, { cn: 'worker-1', uris: ['spiffe://acme.test/worker'], ...opts });

  async function exchangeWith(leaf: Issued | null, pem: string | undefined, extra: Record<string, unknown> = {}) {
    return tlsRequest({ port: authPort, ca, body: body(extra), cert: pem, key: leaf?.keyPem });
  }

  async function refused(leaf: Issued | null, pem: string | undefined, code: string, extra: Record<string, unknown> = {}) {
    const res = await exchangeWith(leaf, pem, extra);
    expect(res.body.error, JSON.stringify(res.body)).toBe(code);
    expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(JSON.stringify(res.body)).not.toMatch(/BEGIN CERTIFICATE/);
    return res;
  }

  describe('a balancer in front of the mTLS listeners (PROXY protocol)', () => {
    const audited = async () => {
      const list = await f.admin('GET', `/admin/v1/organizations/${f.orgId}/workload_identity/exchanges?limit=1`);
      return list.body.data[0].client_ip as string;
    };
    const v2 = (family: number, src: number[]) => {
      const addresses = Buffer.from([...src, ...src.map(() => 0), 0x15, 0xb3, 0x01, 0xbb]);
      const head = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, family, 0, addresses.length]);
      return Buffer.concat([head, addresses]);
    };
    afterAll(() => f.t.ctx.services.proxyTrust.set([]));

    it('the client a trusted balancer names (v1 and v2) is the exchange’s client; without a header, the peer', async () => {
      f.t.ctx.services.proxyTrust.set(['127.0.0.1']);
      const leaf = await worker();
      const pem = chain(leaf, inter);
      const exchange = (proxyHeader?: string | Buffer) =>
        tlsRequest({ port: authPort, ca, body: body(), cert: pem, key: leaf.keyPem, proxyHeader });
      expect((await exchange('PROXY TCP4 198.51.100.7 127.0.0.1 5555 443\r\n')).status).toBe(200);
      expect(await audited()).toBe('198.51.100.7');
      expect((await exchange(v2(0x11, [203, 0, 113, 9]))).status).toBe(200);
      expect(await audited()).toBe('203.0.113.9');
      const v6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01];
      expect((await exchange(v2(0x21, v6))).status).toBe(200);
      expect(await audited()).toBe('2001:db8:0:0:0:0:0:1');
      // A health check's LOCAL header, and none at all: the peer is the client.
      const local = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x20, 0x00, 0, 0]);
      expect((await exchange(local)).status).toBe(200);
      expect(await audited()).toBe('127.0.0.1');
      expect((await exchange()).status).toBe(200);
      expect(await audited()).toBe('127.0.0.1');
      // The address is the connection's: an X-Forwarded-For on the mTLS listener still counts for nothing.
      const forged = await tlsRequest({
        port: authPort,
        ca,
        body: body(),
        cert: pem,
        key: leaf.keyPem,
        headers: { 'x-forwarded-for': '192.0.2.1' },
      });
      expect(forged.status).toBe(200);
      expect(await audited()).toBe('127.0.0.1');
    });

    it('a header from a peer that is not trusted, or one that cannot be read, ends the connection', async () => {
      const leaf = await worker();
      const exchange = (proxyHeader: string) =>
        tlsRequest({ port: authPort, ca, body: body(), cert: chain(leaf, inter), key: leaf.keyPem, proxyHeader });
      f.t.ctx.services.proxyTrust.set([]);
      await expect(exchange('PROXY TCP4 198.51.100.7 127.0.0.1 5555 443\r\n')).rejects.toThrow();
      f.t.ctx.services.proxyTrust.set(['127.0.0.1']);
      for (const bad of [
        'PROXY TCP4 not-an-ip 127.0.0.1 5555 443\r\n',
        'PROXY TCP6 198.51.100.7 127.0.0.1 5555 443\r\n',
        `PROXY ${'x'.repeat(120)}`,
      ])
        await expect(exchange(bad)).rejects.toThrow();
      // The listener still serves.
      expect((await tlsRequest({ port: authPort, ca, body: body(), cert: chain(leaf, inter), key: leaf.keyPem })).status).toBe(200);
    });
  });

  describe('X.509 exchange on the mTLS token endpoint', () => {
    it('mints a token for a valid chain; expires_in never exceeds the certificate', async () => {
      const leaf = await worker({ notAfter: new Date(Date.now() + 10 * 60_000) });
      const res = await exchangeWith(leaf, chain(leaf, inter));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'issued_token_type', 'scope', 'token_type']);
      expect(res.body.scope).toBe('threads.write');
      expect(res.body.expires_in).toBeLessThanOrEqual(600);
      expect(res.body.expires_in).toBeGreaterThan(590);
      const long = await worker();
      expect((await exchangeWith(long, chain(long, inter))).body.expires_in).toBe(3600);
    });

    it('refuses a subject_token, and JWT exchange, on this endpoint', async () => {
      const leaf = await worker();
      await refused(leaf, chain(leaf, inter), 'invalid_request', { subject_token: 'x' });
      await refused(leaf, chain(leaf, inter), 'invalid_request', { subject_token_type: JWT_TYPE, subject_token: 'a.b.c' });
    });

    it('any other method or path answers 403', async () => {
      const leaf = await worker();
      for (const [method, path] of [
        ['GET', '/oauth/token'],
        ['POST', '/v1/threads'],
        ['POST', '/oauth/token/x'],
        ['GET', '/admin/v1/organizations'],
      ]) {
        const res = await tlsRequest({ port: authPort, ca, method, path, cert: chain(leaf, inter), key: leaf.keyPem });
        expect(res.status, `${method} ${path}`).toBe(403);
      }
    });

    it('X.509 exchange is refused on the plain HTTP endpoint', async () => {
      const res = await f.t.req('POST', '/oauth/token', { body: body() });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    });

    it('refuses no certificate, a missing intermediate, and a chain to another organization’s root', async () => {
      await refused(null, undefined, 'invalid_subject_token');
      const leaf = await worker();
      await refused(leaf, chain(leaf), 'invalid_subject_token');
      const foreign = await makeLeaf(otherInter, { cn: 'worker-1', uris: ['spiffe://acme.test/worker'] });
      await refused(foreign, chain(foreign, otherInter), 'invalid_subject_token');
      // Presenting the other organization's root as well changes nothing: only active roots are trusted.
      await refused(foreign, chain(foreign, otherInter, otherRoot), 'invalid_subject_token');
    });

    it('refuses an expired or not-yet-valid leaf and a CA certificate as leaf', async () => {
      const expired = await worker({ notBefore: new Date(Date.now() - 10 * DAY), notAfter: new Date(Date.now() - DAY) });
      await refused(expired, chain(expired, inter), 'invalid_subject_token');
      const early = await worker({ notBefore: new Date(Date.now() + DAY), notAfter: new Date(Date.now() + 5 * DAY) });
      await refused(early, chain(early, inter), 'invalid_subject_token');
      const caLeaf = await worker({ ca: true });
      await refused(caLeaf, chain(caLeaf, inter), 'invalid_subject_token');
    });

    it('refuses by admission rules: no clientAuth EKU, a weak RSA key, a chain deeper than allowed', async () => {
      const serverOnly = await worker({ eku: ['1.3.6.1.5.5.7.3.1'] });
      await refused(serverOnly, chain(serverOnly, inter), 'invalid_subject_token');
      const weak = await worker({ alg: 'rsa-1024' });
      await refused(weak, chain(weak, inter), 'invalid_subject_token');
      const tight = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/mtls_roots/mtlsroot_acme`, {
        admission: { max_chain_depth: 0 },
      });
      expect(tight.status, JSON.stringify(tight.body)).toBe(200);
      const leaf = await worker();
      await refused(leaf, chain(leaf, inter), 'invalid_subject_token');
      await f.admin('POST', `/admin/v1/organizations/${f.orgId}/mtls_roots/mtlsroot_acme`, { admission: { max_chain_depth: 3 } });
      expect((await exchangeWith(leaf, chain(leaf, inter))).status).toBe(200);
    });

    it('attribute condition false → invalid_grant; attributes matching no mapping → invalid_grant', async () => {
      const leaf = await worker({ uris: ['spiffe://acme.test/batch'] });
      await refused(leaf, chain(leaf, inter), 'invalid_grant');
      // O=Acme is set by the factory; a provider condition on another O rejects.
      await f.admin('POST', `/admin/v1/organizations/${f.orgId}/identity_providers/${PROVIDER}`, {
        attribute_condition: 'assertion.subject.dn.o == "Initech"',
      });
      const ok = await worker();
      await refused(ok, chain(ok, inter), 'invalid_grant');
      await f.admin('POST', `/admin/v1/organizations/${f.orgId}/identity_providers/${PROVIDER}`, {
        attribute_condition: 'assertion.subject.dn.o == "Acme"',
      });
      expect((await exchangeWith(ok, chain(ok, inter))).status).toBe(200);
    });

    it('a disabled mapping and two matching mappings are refused', async () => {
      const base = `/admin/v1/organizations/${f.orgId}/identity_providers/${PROVIDER}/mappings`;
      const leaf = await worker();
      await f.admin('POST', `${base}/idpmap_workers`, { enabled: false });
      await refused(leaf, chain(leaf, inter), 'invalid_grant');
      await f.admin('POST', `${base}/idpmap_workers`, { enabled: true });
      const twin = await f.admin('POST', base, {
        id: 'idpmap_twin',
        name: 'twin',
        service_account_id: f.sa,
        project_id: f.projectId,
        attribute_match: { 'vendor.subject': 'worker-1' },
      });
      expect(twin.status, JSON.stringify(twin.body)).toBe(201);
      await refused(leaf, chain(leaf, inter), 'invalid_grant');
      await f.admin('DELETE', `${base}/idpmap_twin`);
      expect((await exchangeWith(leaf, chain(leaf, inter))).status).toBe(200);
    });

    it('roots are retired and added without a restart; a project root serves only its project', async () => {
      const leaf = await worker();
      const retire = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/mtls_roots/mtlsroot_acme/retire`);
      expect(retire.body.status).toBe('retired');
      await refused(leaf, chain(leaf, inter), 'invalid_subject_token');
      await f.admin('POST', `/admin/v1/organizations/${f.orgId}/mtls_roots/mtlsroot_acme`, { status: 'active' });
      expect((await exchangeWith(leaf, chain(leaf, inter))).status).toBe(200);

      // A root scoped to another project of the organization is not active for this mapping's project.
      const newRoot = await makeRoot('Project Root');
      const pLeaf = await makeLeaf(newRoot, { cn: 'worker-1', uris: ['spiffe://acme.test/worker'] });
      await refused(pLeaf, chain(pLeaf), 'invalid_subject_token');
      const proj = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/projects`, { id: 'proj_side', name: 'side' });
      expect([200, 201]).toContain(proj.status);
      const scoped = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/mtls_roots`, {
        name: 'side',
        certificate: newRoot.pem,
        project_id: 'proj_side',
      });
      expect(scoped.status, JSON.stringify(scoped.body)).toBe(201);
      await refused(pLeaf, chain(pLeaf), 'invalid_subject_token');
      await f.admin('POST', `/admin/v1/organizations/${f.orgId}/mtls_roots/${scoped.body.id}`, { project_id: f.projectId });
      expect((await exchangeWith(pLeaf, chain(pLeaf))).status).toBe(200);
    });

    it('records X.509 exchanges with the certificate fingerprint, never the certificate', async () => {
      const res = await f.admin('GET', `/admin/v1/organizations/${f.orgId}/workload_identity/exchanges?provider_id=${PROVIDER}&limit=50`);
      expect(res.status).toBe(200);
      const issued = res.body.data.find((e: any) => e.outcome === 'issued');
      expect(issued).toMatchObject({ via: 'x509', subject: 'worker-1', mapping_id: 'idpmap_workers' });
      expect(issued.certificate_sha256).toMatch(/^[0-9a-f]{64}$/);
      const reasons = new Set(res.body.data.map((e: any) => e.reason));
      for (const r of ['untrusted_chain', 'expired', 'not_yet_valid', 'admission', 'condition_false', 'mapping_disabled', 'ambiguous'])
        expect(reasons, r).toContain(r);
      expect(JSON.stringify(res.body)).not.toMatch(/BEGIN CERTIFICATE/);
    });
  });

  describe('X.509-minted tokens on the mTLS API listener', () => {
    let token: string;
    let leaf: Issued;
    beforeAll(async () => {
      leaf = await worker();
      const res = await exchangeWith(leaf, chain(leaf, inter));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      token = res.body.access_token;
    });

    it('are accepted with an accepted client certificate (any, not bound to the one used)', async () => {
      const res = await tlsRequest({
        port: apiPort,
        ca,
        method: 'POST',
        path: '/v1/_probe/threads',
        headers: { authorization: `Bearer ${token}` },
        cert: chain(leaf, inter),
        key: leaf.keyPem,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.principal).toMatchObject({ credentialType: 'workload_token', via: 'x509', serviceAccountId: f.sa });
      const another = await makeLeaf(inter, { cn: 'worker-2' });
      const res2 = await tlsRequest({
        port: apiPort,
        ca,
        method: 'GET',
        path: '/v1/_probe/threads',
        headers: { authorization: `Bearer ${token}` },
        cert: chain(another, inter),
        key: another.keyPem,
      });
      expect(res2.status, JSON.stringify(res2.body)).toBe(200);
    });

    it('are refused without a certificate, with a foreign one, and on the HTTP listener', async () => {
      const none = await tlsRequest({
        port: apiPort,
        ca,
        method: 'GET',
        path: '/v1/_probe/threads',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('invalid_client_certificate');
      const foreign = await makeLeaf(otherInter);
      const bad = await tlsRequest({
        port: apiPort,
        ca,
        method: 'GET',
        path: '/v1/_probe/threads',
        headers: { authorization: `Bearer ${token}` },
        cert: chain(foreign, otherInter),
        key: foreign.keyPem,
      });
      expect(bad.status).toBe(401);
      const plain = await f.t.req('GET', '/v1/_probe/threads', { key: token });
      expect(plain.status).toBe(401);
      expect(plain.body.error.code).toBe('mtls_required');
    });

    it('the mTLS API listener serves /v1 only, and API keys work there too', async () => {
      const admin = await tlsRequest({
        port: apiPort,
        ca,
        method: 'GET',
        path: '/admin/v1/organizations',
        headers: { authorization: `Bearer ${f.t.keys.admin}` },
        cert: chain(leaf, inter),
        key: leaf.keyPem,
      });
      expect(admin.status).toBe(404);
      const key = await tlsRequest({
        port: apiPort,
        ca,
        method: 'GET',
        path: '/v1/_probe/threads',
        headers: { authorization: `Bearer ${f.t.keys.platform}` },
      });
      expect(key.status).toBe(200);
    });
  });
});
