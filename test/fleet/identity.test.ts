import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeIntermediate, makeLeaf, makeRoot, type Issued } from '../identity/certs.js';
import { claimsFor, createIdp, type TestIdp } from '../identity/idp.js';
import { GRANT, JWT_TYPE, X509_TYPE } from '../identity/setup.js';
import { tlsRequest } from '../identity/tls-client.js';
import { ensureBuilt, freePort } from '../process.js';
import { startInstances, until, type Instance } from './instances.js';

/**
 * Workload identity configuration made through instance A — providers, mappings, mTLS roots — is what
 * instance B exchanges and admits with: two real processes on one PostgreSQL database. B runs the mTLS
 * token endpoint; A does not even listen for it.
 */
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;
const ORG = '/admin/v1/organizations/org_demo';
const SA = 'svc_acct_fleet';

describe.runIf(databaseUrl)('workload identity across two instances', () => {
  let fleet: Awaited<ReturnType<typeof startInstances>>;
  let a: Instance;
  let b: Instance;
  let idp: TestIdp;
  let mtlsPort: number;
  let ca: string;

  beforeAll(async () => {
    ensureBuilt();
    mtlsPort = await freePort();
    fleet = await startInstances('fleet_identity', {
      env: (i): Record<string, string> => (i === 1 ? { STANDIN_MTLS_PORT: String(mtlsPort) } : {}),
    });
    [a, b] = fleet.instances;
    idp = await createIdp('https://fleet.example.test');
    const sa = await a.call('POST', '/admin/v1/projects/proj_demo/service_accounts', { id: SA, name: 'fleet', role: 'member' });
    expect(sa.status, JSON.stringify(sa.body)).toBe(201);
    const cert = await b.call('GET', '/admin/v1/mtls/server_certificate');
    expect(cert.status).toBe(200);
    ca = cert.body.certificate;
  }, 120_000);
  afterAll(async () => {
    await fleet?.close();
  });

  /** B's clock, which the subject tokens' iat and exp must fit. */
  const nowS = async () => (await b.call('GET', '/admin/v1/clock')).body.now as number;
  const exchangeJwt = async (i: Instance, provider: string) =>
    i.call('POST', '/oauth/token', {
      grant_type: GRANT,
      subject_token_type: JWT_TYPE,
      subject_token: await idp.sign(claimsFor(idp, await nowS())),
      identity_provider_id: provider,
      service_account_id: SA,
    });

  it('a JWT provider and its mapping added on A mint tokens on B; deleting the mapping on A revokes them on B', async () => {
    // B has been asked first, so it has looked the provider up (and found none) before A adds it.
    expect((await exchangeJwt(b, 'idp_fleet')).body.error_description).toMatch(/No identity provider/);
    const created = await a.call('POST', `${ORG}/identity_providers`, {
      id: 'idp_fleet',
      kind: 'jwt',
      name: 'fleet',
      issuer: idp.issuer,
      audiences: ['standin'],
      jwks: idp.jwks,
      mappings: [{ id: 'idpmap_fleet', name: 'fleet', service_account_id: SA, project_id: 'proj_demo' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    let token = '';
    await until(async () => {
      const r = await exchangeJwt(b, 'idp_fleet');
      token = r.body.access_token ?? '';
      return r.status === 200;
    });
    const onB = new OpenAI({ apiKey: token, baseURL: `${b.base}/v1`, maxRetries: 0 });
    expect((await onB.models.list()).data.length).toBeGreaterThan(0);

    const deleted = await a.call('DELETE', `${ORG}/identity_providers/idp_fleet/mappings/idpmap_fleet`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    // The token B minted (and has just admitted) is refused there within a second (A marks it revoked in
    // the store), and B mints no more within a second too (its cached configuration lives that long:
    // exchange.ts). Asked at once, B could still mint from its cache: that raced, and failed a CI run.
    await until(
      () =>
        onB.models.list().then(
          () => false,
          (err: { status?: number }) => err.status === 401,
        ),
      1_000,
    );
    let again = await exchangeJwt(b, 'idp_fleet');
    await until(async () => (again = await exchangeJwt(b, 'idp_fleet')).status !== 200, 1_500);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('a provider disabled on A refuses on B', async () => {
    const created = await a.call('POST', `${ORG}/identity_providers`, {
      id: 'idp_fleet2',
      kind: 'jwt',
      name: 'fleet2',
      issuer: idp.issuer,
      audiences: ['standin'],
      jwks: idp.jwks,
      mappings: [{ name: 'fleet2', service_account_id: SA, project_id: 'proj_demo' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await until(async () => (await exchangeJwt(b, 'idp_fleet2')).status === 200);
    expect((await a.call('POST', `${ORG}/identity_providers/idp_fleet2`, { enabled: false })).status).toBe(200);
    await until(async () => /is disabled/.test((await exchangeJwt(b, 'idp_fleet2')).body.error_description ?? ''), 1_000);
  });

  describe('mTLS roots', () => {
    let root: Issued;
    let inter: Issued;
    beforeAll(async () => {
      root = await makeRoot('Fleet Root');
      inter = await makeIntermediate(root, 'Fleet Issuing');
      const p = await a.call('POST', `${ORG}/identity_providers`, {
        id: 'idp_fleet_mtls',
        kind: 'x509',
        name: 'fleet-mtls',
        mappings: [{ name: 'workers', service_account_id: SA, project_id: 'proj_demo' }],
      });
      expect(p.status, JSON.stringify(p.body)).toBe(201);
    });

    const exchangeX509 = async () => {
      const leaf = await makeLeaf(inter, { cn: 'worker-1' });
      return tlsRequest({
        port: mtlsPort,
        ca,
        body: { grant_type: GRANT, subject_token_type: X509_TYPE, identity_provider_id: 'idp_fleet_mtls', service_account_id: SA },
        cert: [leaf.pem, inter.pem].join(''),
        key: leaf.keyPem,
      });
    };

    it('a root added on A is trusted by B; removed on A, B refuses its certificates', async () => {
      // Before the root exists B refuses the chain (and has read the organization's roots).
      expect((await exchangeX509()).status).not.toBe(200);
      const added = await a.call('POST', `${ORG}/mtls_roots`, { id: 'mtlsroot_fleet', name: 'fleet', certificate: root.pem });
      expect(added.status, JSON.stringify(added.body)).toBe(201);
      await until(async () => (await exchangeX509()).status === 200);
      expect((await a.call('DELETE', `${ORG}/mtls_roots/mtlsroot_fleet`)).status).toBe(200);
      await until(async () => (await exchangeX509()).status !== 200, 1_000);
      const refused = await exchangeX509();
      expect(refused.body.error_description, JSON.stringify(refused.body)).toMatch(/does not chain to an active mTLS root/);
    });
  });
});
