import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimsFor, createIdp, type TestIdp } from './idp.js';
import { dialects, startTestStandin } from '../helpers.js';
import { GRANT, identityFixture, JWT_TYPE, type IdentityFixture } from './setup.js';

/**
 * Hardening of workload identity: a revoked token stays revoked; the endpoints rule 6 closes refuse a
 * workload token before they validate the request; a JWKS URL the outbound guard refuses is refused when
 * the provider is saved, not at every exchange.
 */
let f: IdentityFixture;
let idp: TestIdp;
const nowS = () => f.t.ctx.clock.nowSeconds();

describe.each(dialects())('workload identity hardening (%s)', (dialect) => {
  beforeAll(async () => {
    f = await identityFixture({ dialect });
    idp = await createIdp('https://hardening.example.test');
  });
  afterAll(async () => {
    await idp.close();
    await f.t.close();
  });

  const providers = () => `/admin/v1/organizations/${f.orgId}/identity_providers`;
  const provider = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    kind: 'jwt',
    name: id,
    issuer: idp.issuer,
    audiences: ['standin'],
    jwks: idp.jwks,
    mappings: [{ id: `idpmap_${id.slice(4)}`, name: 'm', service_account_id: f.sa, project_id: f.projectId }],
    ...extra,
  });
  async function create(id: string, extra: Record<string, unknown> = {}) {
    const res = await f.admin('POST', providers(), provider(id, extra));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  async function mint(providerId: string) {
    const res = await f.t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: {
        grant_type: GRANT,
        subject_token_type: JWT_TYPE,
        subject_token: await idp.sign(claimsFor(idp, nowS())),
        identity_provider_id: providerId,
        service_account_id: f.sa,
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    return JSON.parse(res.body).access_token as string;
  }
  const use = (token: string) => f.t.req('GET', '/v1/_probe/models', { key: token });
  async function expectRevoked(token: string) {
    const res = await use(token);
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    expect(res.body.error.code).toBe('token_revoked');
  }

  describe('a revoked token stays revoked', () => {
    it('disabling and enabling the provider', async () => {
      await create('idp_h_prov');
      const token = await mint('idp_h_prov');
      expect((await use(token)).status).toBe(200);
      expect((await f.admin('POST', `${providers()}/idp_h_prov`, { enabled: false })).status).toBe(200);
      await expectRevoked(token);
      expect((await f.admin('POST', `${providers()}/idp_h_prov`, { enabled: true })).status).toBe(200);
      await expectRevoked(token);
      expect((await use(await mint('idp_h_prov'))).status).toBe(200);
    });

    it('disabling and enabling the mapping, or moving it to another service account and back', async () => {
      await create('idp_h_map');
      const mapping = `${providers()}/idp_h_map/mappings/idpmap_h_map`;
      const token = await mint('idp_h_map');
      expect((await f.admin('POST', mapping, { enabled: false })).status).toBe(200);
      await expectRevoked(token);
      expect((await f.admin('POST', mapping, { enabled: true })).status).toBe(200);
      await expectRevoked(token);

      const second = await mint('idp_h_map');
      expect((await f.admin('POST', mapping, { service_account_id: f.reader })).status).toBe(200);
      await expectRevoked(second);
      expect((await f.admin('POST', mapping, { service_account_id: f.sa })).status).toBe(200);
      await expectRevoked(second);
      expect((await use(await mint('idp_h_map'))).status).toBe(200);
    });

    it('deleting the mapping and creating it again with the same id', async () => {
      await create('idp_h_del');
      const mappings = `${providers()}/idp_h_del/mappings`;
      const token = await mint('idp_h_del');
      expect((await f.admin('DELETE', `${mappings}/idpmap_h_del`)).status).toBe(200);
      await expectRevoked(token);
      const again = await f.admin('POST', mappings, { id: 'idpmap_h_del', name: 'm', service_account_id: f.sa, project_id: f.projectId });
      expect(again.status, JSON.stringify(again.body)).toBe(201);
      await expectRevoked(token);
      expect((await use(await mint('idp_h_del'))).status).toBe(200);
    });

    it('deleting the provider and creating it again with the same id', async () => {
      await create('idp_h_gone');
      const token = await mint('idp_h_gone');
      expect((await f.admin('DELETE', `${providers()}/idp_h_gone`)).status).toBe(200);
      expect((await use(token)).status).toBe(401);
      await create('idp_h_gone');
      await expectRevoked(token);
      expect((await use(await mint('idp_h_gone'))).status).toBe(200);
    });

    it('through the config file: a provider switched off and on again', async () => {
      const { applyConfig } = await import('../../src/admin/config-file.js');
      const config = (enabled: boolean) => ({
        organizations: [{ id: f.orgId, name: 'Demo organization', identity_providers: [provider('idp_h_cfg', { enabled })] }],
      });
      await applyConfig(f.t.ctx, f.t.modules, config(true));
      const token = await mint('idp_h_cfg');
      await applyConfig(f.t.ctx, f.t.modules, config(false));
      await expectRevoked(token);
      await applyConfig(f.t.ctx, f.t.modules, config(true));
      await expectRevoked(token);
      expect((await use(await mint('idp_h_cfg'))).status).toBe(200);
    });

    // Several instances share a store only on PostgreSQL.
    it.runIf(dialect === 'postgres')('the revocation is in the store: another instance on the same store sees it at once', async () => {
      await create('idp_h_two');
      const token = await mint('idp_h_two');
      const second = await startTestStandin({ dialect, seed: false, settings: { databaseUrl: f.t.ctx.settings.databaseUrl } });
      try {
        expect((await second.req('GET', '/v1/models', { key: token })).status).toBe(200);
        expect((await f.admin('POST', `${providers()}/idp_h_two`, { enabled: false })).status).toBe(200);
        expect((await f.admin('POST', `${providers()}/idp_h_two`, { enabled: true })).status).toBe(200);
        // The second instance may still hold the enabled provider in its one-second cache: the mark decides.
        const res = await second.req('GET', '/v1/models', { key: token });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('token_revoked');
      } finally {
        await second.close();
      }
    });
  });

  describe('the endpoints closed to workload tokens refuse them before they validate', () => {
    let token: string;
    beforeAll(async () => {
      await create('idp_h_rule6');
      token = await mint('idp_h_rule6');
    });
    const refused = (res: { status: number; body: any }) => {
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.error.code).toBe('workload_token_not_allowed');
    };

    it('POST /v1/images/request_audit: a missing, unknown or mistyped field, malformed JSON', async () => {
      refused(await f.t.req('POST', '/v1/images/request_audit', { key: token, body: {} }));
      refused(await f.t.req('POST', '/v1/images/request_audit', { key: token, body: { reason: 'x', extra: 1 } }));
      refused(await f.t.req('POST', '/v1/images/request_audit', { key: token, body: { reason: 42 } }));
      refused(await f.t.req('POST', '/v1/images/request_audit', { key: token, body: '{"reason":' }));
      // An API key still meets the validation.
      const key = await f.t.req('POST', '/v1/images/request_audit', { key: 'platform', body: {} });
      expect(key.status).toBe(400);
      expect(key.body.error.code).toBe('missing_required_parameter');
    });

    it('DELETE /v1/models/{id}: a malformed body', async () => {
      refused(await f.t.req('DELETE', '/v1/models/ft:gpt-4o-mini:acme:x:1', { key: token, body: '{"a":' }));
      expect((await f.t.req('DELETE', '/v1/models/ft:gpt-4o-mini:acme:x:1', { key: 'platform', body: '{"a":' })).status).toBe(400);
    });

    it('the Admin API: a body it would refuse', async () => {
      refused(await f.t.req('POST', '/admin/v1/organizations', { key: token, body: {} }));
    });

    it('an expired or unknown workload token is still a 401 there', async () => {
      const res = await f.t.req('POST', '/v1/images/request_audit', { key: `${token.slice(0, -4)}abcd`, body: {} });
      expect(res.status).toBe(401);
    });
  });

  describe('a JWKS URL the outbound guard refuses is refused when saved', () => {
    const refusedUrl = async (url: string, reason: string) => {
      const res = await f.admin(
        'POST',
        providers(),
        provider(`idp_h_url_${Math.random().toString(36).slice(2, 8)}`, { jwks: undefined, jwks_url: url }),
      );
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.param).toBe('jwks_url');
      expect(res.body.error.message).toContain(reason);
    };

    it('private, link-local, metadata and mapped addresses, on create', async () => {
      await refusedUrl('http://10.1.2.3/jwks', 'private');
      await refusedUrl('https://192.168.0.10:8443/keys', 'private');
      await refusedUrl('http://169.254.169.254/latest/meta-data', 'cloud metadata');
      await refusedUrl('http://[::ffff:10.1.2.3]/jwks', 'private');
      await refusedUrl('http://[fd00::1]/jwks', 'private');
      await refusedUrl('http://0.0.0.0/jwks', 'unspecified');
    });

    it('on update, leaving the provider as it was', async () => {
      await create('idp_h_upd');
      const url = `${providers()}/idp_h_upd`;
      const res = await f.admin('POST', url, { jwks: null, jwks_url: 'http://172.16.0.1/jwks' });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.param).toBe('jwks_url');
      const now = await f.admin('GET', url);
      expect(now.body.jwks_url).toBeNull();
      expect(now.body.jwks).not.toBeNull();
    });

    it('from the config file', async () => {
      const res = await f.admin('POST', '/admin/v1/config', {
        organizations: [
          {
            id: f.orgId,
            name: 'Demo organization',
            identity_providers: [provider('idp_h_cfgurl', { jwks: undefined, jwks_url: 'http://10.9.9.9/jwks' })],
          },
        ],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.message).toContain('jwks_url');
      expect((await f.admin('GET', `${providers()}/idp_h_cfgurl`)).status).toBe(404);
    });

    it('an address --outbound-allow lets through is accepted, and loopback while Standin listens on loopback', async () => {
      const allowed = await startTestStandin({ dialect, settings: { outboundAllow: '10.0.0.0/8, jwks.internal' } });
      try {
        const body = { kind: 'jwt', name: 'allowed', issuer: idp.issuer, audiences: ['standin'], jwks_url: 'http://10.1.2.3/jwks' };
        expect((await allowed.req('POST', '/admin/v1/organizations/org_demo/identity_providers', { key: 'admin', body })).status).toBe(201);
        const named = { ...body, name: 'named', jwks_url: 'http://jwks.internal/keys' };
        expect(
          (await allowed.req('POST', '/admin/v1/organizations/org_demo/identity_providers', { key: 'admin', body: named })).status,
        ).toBe(201);
      } finally {
        await allowed.close();
      }
      await create('idp_h_loop', { jwks: undefined, jwks_url: 'http://127.0.0.1:9/jwks' });
    });

    it('loopback, by address or by a name that resolves to it, while Standin listens elsewhere', async () => {
      const exposed = await startTestStandin({ dialect, settings: { host: '0.0.0.0' } });
      try {
        const save = (jwks_url: string) =>
          exposed.req('POST', '/admin/v1/organizations/org_demo/identity_providers', {
            key: 'admin',
            body: { kind: 'jwt', name: `p-${Math.random()}`, issuer: idp.issuer, audiences: ['standin'], jwks_url },
          });
        for (const url of ['http://127.0.0.1:9/jwks', 'http://[::1]:9/jwks', 'http://localhost:9/jwks']) {
          const res = await save(url);
          expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(400);
          expect(res.body.error.message).toContain('loopback');
        }
      } finally {
        await exposed.close();
      }
    });
  });
});
