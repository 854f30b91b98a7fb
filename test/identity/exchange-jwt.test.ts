import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicKey } from 'node:crypto';
import { claimsFor, createIdp, type TestIdp } from './idp.js';
import { dialects } from '../helpers.js';
import { createApiKey, upsertServiceAccount } from '../../src/identity/service.js';
import { makeRoot } from './certs.js';
import { GRANT, ID_TOKEN_TYPE, identityFixture, JWT_TYPE, X509_TYPE, type IdentityFixture } from './setup.js';

/**
 * JWT / id_token exchange end to end: jose plays the IdP with a JWKS served on loopback, Standin fetches it
 * through the SSRF guard, every failure category is tried, and minted tokens are used on /v1.
 */
let f: IdentityFixture;
let idp: TestIdp;
let jwksUrl: string;
const PROVIDER = 'idp_ci';
const b64 = (s: string) => Buffer.from(s).toString('base64url');
const nowS = () => f.t.ctx.clock.nowSeconds();

describe.each(dialects())('JWT exchange (%s)', (dialect) => {
  beforeAll(async () => {
    f = await identityFixture({ dialect });
    idp = await createIdp('https://ci.example.test');
    jwksUrl = await idp.serve();
    const res = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/identity_providers`, {
      id: PROVIDER,
      kind: 'jwt',
      name: 'ci',
      issuer: idp.issuer,
      audiences: ['standin'],
      algorithms: ['RS256', 'ES256'],
      jwks_url: jwksUrl,
      attribute_mapping: { 'vendor.subject': 'assertion.sub', 'attribute.repo': 'assertion.repo', 'attribute.ref': 'assertion.ref' },
      attribute_condition: 'assertion.repo.startsWith("acme/")',
      mappings: [
        {
          id: 'idpmap_main',
          name: 'main',
          service_account_id: f.sa,
          project_id: f.projectId,
          attribute_match: { 'attribute.ref': 'refs/heads/main' },
          permissions: { threads: 'write', models: 'read' },
        },
        {
          id: 'idpmap_any',
          name: 'any-branch',
          service_account_id: f.reader,
          project_id: f.projectId,
          attribute_match: { 'attribute.repo': 'acme/api' },
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
  afterAll(async () => {
    await idp.close();
    await f.t.close();
  });

  const good = (extra: Record<string, unknown> = {}) => claimsFor(idp, nowS(), { repo: 'acme/api', ref: 'refs/heads/main', ...extra });

  async function exchange(body: Record<string, unknown> | string, contentType = 'application/json') {
    const res = await f.t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': contentType },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers };
  }

  const request = (token: string, extra: Record<string, unknown> = {}) => ({
    grant_type: GRANT,
    subject_token_type: JWT_TYPE,
    subject_token: token,
    identity_provider_id: PROVIDER,
    service_account_id: f.sa,
    ...extra,
  });

  async function refused(body: Record<string, unknown> | string, code: string, status = 400, contentType?: string) {
    const res = await exchange(body, contentType);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
    expect(res.body.error).toBe(code);
    expect(res.headers['cache-control']).toBe('no-store');
    if (typeof body !== 'string' && typeof body.subject_token === 'string')
      expect(JSON.stringify(res.body)).not.toContain(body.subject_token);
    return res.body.error_description as string;
  }

  describe('JWT exchange: success', () => {
    it('returns exactly the spec response, no-store, scope from the mapping, no refresh token', async () => {
      const token = await idp.sign(good());
      const res = await exchange(request(token, { scope: 'everything admin' }));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'issued_token_type', 'scope', 'token_type']);
      expect(res.body.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');
      expect(res.body.token_type).toBe('Bearer');
      // The scope in the body granted nothing: the scope is the mapping's permissions.
      expect(res.body.scope).toBe('models.read threads.write');
      // The subject token lives 600 s: the access token never outlives it.
      expect(res.body.expires_in).toBeGreaterThan(590);
      expect(res.body.expires_in).toBeLessThanOrEqual(600);
    });

    it('caps expires_in at 3600 and omits scope when the mapping has no permissions; id_token type works', async () => {
      const token = await idp.sign(good({ ref: 'refs/heads/feature', exp: nowS() + 7200 }));
      const res = await exchange(request(token, { subject_token_type: ID_TOKEN_TYPE, service_account_id: f.reader }));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.expires_in).toBe(3600);
      expect('scope' in res.body).toBe(false);
      expect('refresh_token' in res.body).toBe(false);
    });

    it('accepts a form-encoded body (RFC 8693 clients) and refuses a repeated parameter', async () => {
      const token = await idp.sign(good());
      const form = new URLSearchParams(request(token) as Record<string, string>).toString();
      const res = await exchange(form, 'application/x-www-form-urlencoded');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await refused(`${form}&service_account_id=${f.reader}`, 'invalid_request', 400, 'application/x-www-form-urlencoded');
    });

    it('the form parser exists only on the token endpoint', async () => {
      const res = await f.t.app.inject({
        method: 'POST',
        url: '/v1/_probe/threads',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${f.t.keys.platform}` },
        payload: 'a=b',
      });
      expect(res.statusCode).toBe(415);
    });
  });

  describe('JWT exchange: every failure category', () => {
    it('missing parameters → invalid_request, naming the parameter', async () => {
      const token = await idp.sign(good());
      for (const p of ['grant_type', 'subject_token_type', 'subject_token', 'identity_provider_id', 'service_account_id']) {
        const body = request(token) as Record<string, unknown>;
        delete body[p];
        expect(await refused(body, 'invalid_request'), p).toContain(`'${p}'`);
      }
    });

    it('unsupported requests: grant type, token type, unknown or mode-foreign fields, non-string values, bad bodies', async () => {
      const token = await idp.sign(good());
      await refused(request(token, { grant_type: 'client_credentials' }), 'unsupported_grant_type');
      await refused(request(token, { subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' }), 'invalid_request');
      await refused(request(token, { subject_token_type: X509_TYPE }), 'invalid_request');
      await refused(request(token, { client_secret: 'x' }), 'invalid_request');
      await refused(request(token, { actor_token: 'x', actor_token_type: JWT_TYPE }), 'invalid_request');
      await refused(request(token, { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }), 'invalid_request');
      await refused(request(token, { service_account_id: 42 }), 'invalid_request');
      await refused('[1,2]', 'invalid_request');
      await refused('{"grant_type":', 'invalid_request');
      await refused('grant_type=x', 'invalid_request', 415, 'text/plain');
      await refused(request('x'.repeat(70_000)), 'invalid_request', 413);
      await refused(request(token, { audience: 'https://elsewhere' }), 'invalid_target');
      await refused(request(token, { resource: 'https://elsewhere' }), 'invalid_target');
    });

    it('provider resolution: malformed, unknown, disabled, mode-incompatible', async () => {
      const token = await idp.sign(good());
      await refused(request(token, { identity_provider_id: 'not an id' }), 'invalid_request');
      await refused(request(token, { identity_provider_id: 'idp_nope' }), 'invalid_grant');
      const x = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/identity_providers`, {
        id: 'idp_certs',
        kind: 'x509',
        name: 'certs',
      });
      expect(x.status, JSON.stringify(x.body)).toBe(201);
      await refused(request(token, { identity_provider_id: 'idp_certs' }), 'invalid_grant');
      const off = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/identity_providers`, {
        id: 'idp_off',
        kind: 'jwt',
        name: 'off',
        enabled: false,
        issuer: idp.issuer,
        audiences: ['standin'],
        jwks: idp.jwks,
      });
      expect(off.status, JSON.stringify(off.body)).toBe(201);
      expect(await refused(request(token, { identity_provider_id: 'idp_off' }), 'invalid_grant')).toMatch(/disabled/);
    });

    it('JWT verification: alg none, HS256 with the public key, missing and unknown kid, bad signature', async () => {
      const claims = good();
      const none = `${b64(JSON.stringify({ alg: 'none', kid: idp.kid }))}.${b64(JSON.stringify(claims))}.`;
      expect(await refused(request(none), 'invalid_subject_token', 401)).toMatch(/alg/);
      const pem = createPublicKey({ key: idp.publicJwk(), format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
      const hs = await idp.sign(claims, { alg: 'HS256', key: new TextEncoder().encode(pem) });
      expect(await refused(request(hs), 'invalid_subject_token', 401)).toMatch(/alg/);
      expect(await refused(request(await idp.sign(claims, { kid: null })), 'invalid_subject_token', 401)).toMatch(/kid/);
      const signed = await idp.sign(claims);
      const [, payload, sig] = signed.split('.');
      expect(
        await refused(request(`${b64(JSON.stringify({ alg: 'RS256', kid: 'ghost' }))}.${payload}.${sig}`), 'invalid_subject_token', 401),
      ).toMatch(/kid/);
      const other = await idp.sign(good({ sub: 'someone-else' }));
      expect(await refused(request(`${signed.split('.')[0]}.${other.split('.')[1]}.${sig}`), 'invalid_subject_token', 401)).toMatch(
        /signature/,
      );
      await refused(request('garbage'), 'invalid_subject_token', 401);
    });

    it('JWT verification: expired, iat in the future, wrong aud or iss, a missing claim', async () => {
      await refused(request(await idp.sign(good({ iat: nowS() - 1000, exp: nowS() - 100 }))), 'invalid_subject_token', 401);
      expect(
        await refused(request(await idp.sign(good({ iat: nowS() + 3600, exp: nowS() + 7200 }))), 'invalid_subject_token', 401),
      ).toMatch(/iat/);
      expect(await refused(request(await idp.sign(good({ aud: 'other-api' }))), 'invalid_subject_token', 401)).toMatch(/aud/);
      expect(await refused(request(await idp.sign(good({ iss: 'https://evil.example' }))), 'invalid_subject_token', 401)).toMatch(/iss/);
      const noIat = good() as Record<string, unknown>;
      delete noIat.iat;
      expect(await refused(request(await idp.sign(noIat)), 'invalid_subject_token', 401)).toMatch(/iat/);
    });

    it('a JWKS that cannot be fetched (nothing cached) → 503 temporarily_unavailable', async () => {
      const res = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/identity_providers`, {
        id: 'idp_dead',
        kind: 'jwt',
        name: 'dead',
        issuer: idp.issuer,
        audiences: ['standin'],
        jwks_url: 'http://127.0.0.1:1/jwks',
        mappings: [{ name: 'm', service_account_id: f.sa, project_id: f.projectId }],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      await refused(request(await idp.sign(good()), { identity_provider_id: 'idp_dead' }), 'temporarily_unavailable', 503);
    });

    it('attribute condition false → invalid_grant', async () => {
      await refused(request(await idp.sign(good({ repo: 'evil/api' }))), 'invalid_grant');
    });

    it('mapping resolution: no mapping, attributes mismatch, transformation failure', async () => {
      await refused(request(await idp.sign(good()), { service_account_id: f.other.sa }), 'invalid_grant');
      expect(await refused(request(await idp.sign(good({ ref: 'refs/heads/dev' }))), 'invalid_grant')).toMatch(/match no enabled mapping/);
      const noRef = good() as Record<string, unknown>;
      delete noRef.ref;
      expect(await refused(request(await idp.sign(noRef)), 'invalid_grant')).toMatch(/attribute\.ref/);
    });

    it('a disabled mapping, then two matching mappings, are refused', async () => {
      const base = `/admin/v1/organizations/${f.orgId}/identity_providers/${PROVIDER}/mappings`;
      expect((await f.admin('POST', `${base}/idpmap_main`, { enabled: false })).status).toBe(200);
      expect(await refused(request(await idp.sign(good())), 'invalid_grant')).toMatch(/disabled/);
      expect((await f.admin('POST', `${base}/idpmap_main`, { enabled: true })).status).toBe(200);
      const twin = await f.admin('POST', base, {
        id: 'idpmap_twin',
        name: 'twin',
        service_account_id: f.sa,
        project_id: f.projectId,
        attribute_match: { 'assertion.repo': 'acme/api' },
      });
      expect(twin.status, JSON.stringify(twin.body)).toBe(201);
      expect(await refused(request(await idp.sign(good())), 'invalid_grant')).toMatch(/exactly one/);
      expect((await f.admin('DELETE', `${base}/idpmap_twin`)).status).toBe(200);
      expect((await exchange(request(await idp.sign(good())))).status).toBe(200);
    });
  });

  describe('minted tokens at work', () => {
    async function mint(sa = f.sa, claims = good()) {
      const res = await exchange(request(await idp.sign(claims), { service_account_id: sa }));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.access_token as string;
    }

    it('authorize like the service account in its project, narrowed by the mapping', async () => {
      const token = await mint();
      const ok = await f.t.req('POST', '/v1/_probe/threads', { key: token });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.principal).toMatchObject({
        credentialType: 'workload_token',
        serviceAccountId: f.sa,
        projectId: f.projectId,
        organizationId: f.orgId,
        via: 'jwt',
      });
      expect((await f.t.req('GET', '/v1/_probe/models', { key: token })).status).toBe(200);
      const denied = await f.t.req('POST', '/v1/_probe/models', { key: token });
      expect(denied.status).toBe(403);
      expect(denied.body.error.message).toContain('models.write');
      expect((await f.t.req('GET', '/v1/_probe/files', { key: token })).status).toBe(403);
    });

    it("without mapping permissions, the service account's role decides (reader: read only)", async () => {
      const token = await mint(f.reader, good({ ref: 'refs/heads/x' }));
      expect((await f.t.req('GET', '/v1/_probe/files', { key: token })).status).toBe(200);
      const denied = await f.t.req('POST', '/v1/_probe/files', { key: token });
      expect(denied.status).toBe(403);
      expect(denied.body.error.message).toMatch(/reader.*files\.write/);
    });

    it('are refused by the Admin API, DELETE /v1/models/{id} and POST /v1/images/request_audit; API keys are not', async () => {
      const token = await mint();
      const admin = await f.t.req('GET', '/admin/v1/organizations', { key: token });
      expect(admin.status).toBe(403);
      expect(admin.body.error.code).toBe('workload_token_not_allowed');
      const del = await f.t.req('DELETE', '/v1/models/ft:gpt-4o-mini:acme:x:1', { key: token });
      expect(del.status).toBe(403);
      expect(del.body.error.code).toBe('workload_token_not_allowed');
      const audit = await f.t.req('POST', '/v1/images/request_audit', { key: token, body: { reason: 'check' } });
      expect(audit.status).toBe(403);
      expect(audit.body.error.code).toBe('workload_token_not_allowed');

      const delKey = await f.t.req('DELETE', '/v1/models/ft:gpt-4o-mini:acme:x:1', { key: 'platform' });
      // Standin trains no models: a served base model is not deletable (403), an unknown one is not found (404).
      expect([403, 404], JSON.stringify(delKey.body)).toContain(delKey.status);
      expect(['model_not_deletable', 'model_not_found']).toContain(delKey.body.error.code);
      const auditKey = await f.t.req('POST', '/v1/images/request_audit', {
        key: 'platform',
        body: { reason: 'check', image_ids: ['img_1'] },
      });
      expect(auditKey.status, JSON.stringify(auditKey.body)).toBe(201);
      expect(auditKey.body).toMatchObject({ object: 'image.audit_request', status: 'received', image_ids: ['img_1'] });
      expect((await f.t.req('POST', '/v1/images/request_audit', { key: 'platform', body: { reason: 'x', extra: 1 } })).status).toBe(400);
    });

    it('a token past its life is refused; disabling the mapping revokes tokens for good', async () => {
      const token = await mint();
      f.t.ctx.clock.advance(601_000);
      const late = await f.t.req('GET', '/v1/_probe/models', { key: token });
      expect(late.status).toBe(401);
      expect(late.body.error.code).toBe('token_expired');

      const fresh = await mint();
      const base = `/admin/v1/organizations/${f.orgId}/identity_providers/${PROVIDER}/mappings/idpmap_main`;
      await f.admin('POST', base, { enabled: false });
      const revoked = await f.t.req('GET', '/v1/_probe/models', { key: fresh });
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.code).toBe('token_revoked');
      await f.admin('POST', base, { enabled: true });
      // Enabling the mapping again revives none of the tokens it minted before; a new exchange works.
      const still = await f.t.req('GET', '/v1/_probe/models', { key: fresh });
      expect(still.status).toBe(401);
      expect(still.body.error.code).toBe('token_revoked');
      expect((await f.t.req('GET', '/v1/_probe/models', { key: await mint() })).status).toBe(200);
    });

    it('DELETE /v1/models needs the owner role for service account keys', async () => {
      const db = f.t.ctx.store.db;
      await createApiKey(f.t.ctx, db, {
        projectId: f.projectId,
        name: 'member key',
        serviceAccountId: f.sa,
        value: `sk-svcacct-member-${dialect}-0000000000`,
      });
      const member = await f.t.req('DELETE', '/v1/models/ft:x', { key: `sk-svcacct-member-${dialect}-0000000000` });
      expect(member.status).toBe(403);
      expect(member.body.error.code).toBe('insufficient_role');
      const owner = await upsertServiceAccount(f.t.ctx, db, f.projectId, { id: 'svc_acct_owner', name: 'owner', role: 'owner' });
      await createApiKey(f.t.ctx, db, {
        projectId: f.projectId,
        name: 'owner key',
        serviceAccountId: owner.id,
        value: `sk-svcacct-owner-${dialect}-00000000000`,
      });
      const res = await f.t.req('DELETE', '/v1/models/ft:x', { key: `sk-svcacct-owner-${dialect}-00000000000` });
      expect(['model_not_deletable', 'model_not_found']).toContain(res.body.error.code);
    });

    it('expired tokens are purged an hour after they lapse', async () => {
      await mint();
      const db = f.t.ctx.store.db;
      const count = async () => (await db.selectFrom('workload_tokens').select('id').execute()).length;
      const before = await count();
      expect(before).toBeGreaterThan(0);
      f.t.ctx.clock.advance(2 * 3_600_000);
      const sweep = await f.admin('POST', '/admin/v1/retention/sweep');
      expect(sweep.body.rules.find((r: { name: string }) => r.name === 'workload_tokens')).toMatchObject({ keep: '1h', deleted: before });
      expect(await count()).toBe(0);
    });

    it('the project IP allowlist holds every credential', async () => {
      const token = await mint();
      const set = await f.admin('PUT', `/admin/v1/projects/${f.projectId}/ip_allowlist`, { cidrs: ['203.0.113.0/24'] });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      f.t.ctx.clock.advance(2_000);
      for (const key of [token, f.t.keys.platform]) {
        const res = await f.t.req('GET', '/v1/_probe/models', { key });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('ip_not_allowed');
        expect(res.body.error.message).toContain('127.0.0.1');
      }
      const inside = await f.t.app.inject({
        method: 'GET',
        url: '/v1/_probe/models',
        headers: { authorization: `Bearer ${token}` },
        remoteAddress: '203.0.113.9',
      });
      expect(inside.statusCode).toBe(200);
      expect((await f.admin('PUT', `/admin/v1/projects/${f.projectId}/ip_allowlist`, { cidrs: ['nope/99'] })).status).toBe(400);
      await f.admin('PUT', `/admin/v1/projects/${f.projectId}/ip_allowlist`, { cidrs: [] });
      f.t.ctx.clock.advance(2_000);
      expect((await f.t.req('GET', '/v1/_probe/models', { key: token })).status).toBe(200);
    });
  });

  describe('SPIFFE JWT-SVIDs', () => {
    it('exchanges a JWT-SVID whose sub is a SPIFFE ID of the trust domain', async () => {
      const res = await f.admin('POST', `/admin/v1/organizations/${f.orgId}/identity_providers`, {
        id: 'idp_spire',
        kind: 'jwt',
        name: 'spire',
        issuer: 'https://spire.acme.test',
        audiences: ['standin'],
        jwks: idp.jwks,
        spiffe_trust_domain: 'acme.test',
        mappings: [
          {
            name: 'api',
            service_account_id: f.sa,
            project_id: f.projectId,
            attribute_match: { 'vendor.subject': 'spiffe://acme.test/ns/prod/sa/api' },
          },
        ],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const svid = (sub: string) =>
        idp.sign({ iss: 'https://spire.acme.test', aud: 'standin', sub, iat: nowS(), exp: nowS() + 300 }, { typ: 'JWT' });
      const body = async (sub: string) => request(await svid(sub), { identity_provider_id: 'idp_spire' });
      expect((await exchange(await body('spiffe://acme.test/ns/prod/sa/api'))).status).toBe(200);
      await refused(await body('spiffe://other.test/ns/prod/sa/api'), 'invalid_subject_token', 401);
      await refused(await body('spiffe://acme.test/ns/prod/sa/web'), 'invalid_grant');
    });
  });

  describe('configuration, limits and the audit log', () => {
    it('refuses bad provider configuration naming the field', async () => {
      const url = `/admin/v1/organizations/${f.orgId}/identity_providers`;
      const bad = async (body: Record<string, unknown>, param: string) => {
        const res = await f.admin('POST', url, {
          kind: 'jwt',
          name: `bad-${Math.random()}`,
          issuer: 'https://x',
          audiences: ['a'],
          jwks: idp.jwks,
          ...body,
        });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.error.param).toBe(param);
      };
      await bad({ algorithms: ['HS256'] }, 'algorithms[0]');
      await bad({ algorithms: ['none'] }, 'algorithms[0]');
      await bad({ jwks_url: 'https://x/jwks' }, 'jwks_url');
      await bad({ attribute_mapping: { 'attribute.x': 'assertion.sub' } }, 'attribute_mapping');
      await bad({ attribute_condition: 'assertion.sub ==' }, 'attribute_condition');
      await bad({ jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, 'jwks');
      await bad({ mappings: [{ name: 'm', service_account_id: f.other.sa, project_id: f.projectId }] }, 'mappings[0].service_account_id');
      const x = await f.admin('POST', url, { kind: 'x509', name: 'x-bad', issuer: 'https://x' });
      expect(x.status).toBe(400);
      expect(x.body.error.param).toBe('issuer');
    });

    it('updates a provider: null clears a field, the key source can switch, kind cannot change', async () => {
      const url = `/admin/v1/organizations/${f.orgId}/identity_providers/${PROVIDER}`;
      const cleared = await f.admin('POST', url, { attribute_condition: null });
      expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
      expect(cleared.body.attribute_condition).toBeNull();
      // Without the condition, a repo outside acme/ passes (the mapping only asks for the main branch).
      expect((await exchange(request(await idp.sign(good({ repo: 'evil/api' }))))).status).toBe(200);
      expect((await f.admin('POST', url, { jwks: idp.jwks })).status).toBe(400);
      const inline = await f.admin('POST', url, { jwks: idp.jwks, jwks_url: null });
      expect(inline.status, JSON.stringify(inline.body)).toBe(200);
      expect(inline.body.jwks_url).toBeNull();
      expect((await exchange(request(await idp.sign(good())))).status).toBe(200);
      const back = await f.admin('POST', url, { jwks: null, jwks_url: jwksUrl, attribute_condition: 'assertion.repo.startsWith("acme/")' });
      expect(back.status, JSON.stringify(back.body)).toBe(200);
      expect((await f.admin('POST', url, { kind: 'x509' })).status).toBe(400);
    });

    it('enforces 50 providers per organization and 50 mappings per provider', async () => {
      const url = `/admin/v1/organizations/${f.other.orgId}/identity_providers`;
      const provider = (i: number) => ({ kind: 'jwt', name: `p${i}`, issuer: 'https://x', audiences: ['a'], jwks: idp.jwks });
      for (let i = 0; i < 50; i++) expect((await f.admin('POST', url, provider(i))).status).toBe(201);
      const over = await f.admin('POST', url, provider(50));
      expect(over.status).toBe(400);
      expect(over.body.error.code).toBe('limit_exceeded');

      const first = (await f.admin('GET', url)).body.data[0].id;
      const murl = `${url}/${first}/mappings`;
      for (let i = 0; i < 50; i++)
        expect((await f.admin('POST', murl, { name: `m${i}`, service_account_id: f.other.sa, project_id: f.other.projectId })).status).toBe(
          201,
        );
      const overM = await f.admin('POST', murl, { name: 'm50', service_account_id: f.other.sa, project_id: f.other.projectId });
      expect(overM.status).toBe(400);
      expect(overM.body.error.code).toBe('limit_exceeded');
    });

    it('records every exchange (provider, mapping, subject, outcome, reason), never a token', async () => {
      const token = await idp.sign(good());
      const ok = await exchange(request(token));
      await exchange(request(await idp.sign(good({ aud: 'nope' }))));
      const res = await f.admin('GET', `/admin/v1/organizations/${f.orgId}/workload_identity/exchanges?limit=5`);
      expect(res.status).toBe(200);
      const [refusedEntry, issued] = res.body.data;
      expect(refusedEntry).toMatchObject({
        outcome: 'refused',
        provider_id: PROVIDER,
        error: 'invalid_subject_token',
        category: 'jwt_verification',
        reason: 'audience_mismatch',
      });
      expect(issued).toMatchObject({
        outcome: 'issued',
        provider_id: PROVIDER,
        mapping_id: 'idpmap_main',
        subject: 'repo:acme/api:ref:refs/heads/main',
        via: 'jwt',
      });
      const text = JSON.stringify(res.body);
      expect(text).not.toContain(token);
      expect(text).not.toContain(ok.body.access_token);
      const unresolved = await f.admin('GET', '/admin/v1/workload_identity/exchanges?outcome=refused&limit=100');
      expect(unresolved.body.data.some((e: any) => e.reason === 'unknown' && e.provider_id === null)).toBe(true);
    });

    it('logs refusals without the subject token', async () => {
      const lines: string[] = [];
      const original = f.t.ctx.log;
      const capture = (obj: unknown, msg?: string) => void lines.push(JSON.stringify(obj) + (msg ?? ''));
      f.t.ctx.log = { info: capture, warn: capture, error: capture, debug: capture };
      try {
        const token = await idp.sign(good({ iss: 'https://evil.example' }));
        await exchange(request(token));
        expect(lines.length).toBeGreaterThan(0);
        expect(lines.join('\n')).not.toContain(token);
      } finally {
        f.t.ctx.log = original;
      }
    });

    it('applies identity_providers and ip_allowlist from the config file, twice without change', async () => {
      const { applyConfig } = await import('../../src/admin/config-file.js');
      const root = await makeRoot('Config Root');
      const config = {
        organizations: [
          {
            id: 'org_cfg',
            name: 'Configured',
            projects: [
              { id: 'proj_cfg', name: 'cfg', service_accounts: [{ id: 'svc_acct_cfg', name: 'deployer' }], ip_allowlist: ['10.0.0.0/8'] },
            ],
            mtls_roots: [{ id: 'mtlsroot_cfg', name: 'cfg root', certificate: root.pem, admission: { max_chain_depth: 1 } }],
            identity_providers: [
              {
                id: 'idp_cfg',
                kind: 'jwt',
                name: 'gha',
                issuer: idp.issuer,
                audiences: ['standin'],
                jwks_url: jwksUrl,
                mappings: [
                  {
                    id: 'idpmap_cfg',
                    name: 'deploy',
                    service_account_id: 'svc_acct_cfg',
                    project_id: 'proj_cfg',
                    permissions: { models: 'read' },
                  },
                ],
              },
            ],
          },
        ],
      };
      await applyConfig(f.t.ctx, f.t.modules, config);
      const before = (await f.admin('GET', '/admin/v1/organizations/org_cfg/identity_providers/idp_cfg')).body;
      await applyConfig(f.t.ctx, f.t.modules, config);
      const after = (await f.admin('GET', '/admin/v1/organizations/org_cfg/identity_providers/idp_cfg')).body;
      expect(after).toEqual(before);
      expect(after.mappings).toHaveLength(1);
      expect((await f.admin('GET', '/admin/v1/projects/proj_cfg/ip_allowlist')).body.cidrs).toEqual(['10.0.0.0/8']);
      const roots = (await f.admin('GET', '/admin/v1/organizations/org_cfg/mtls_roots')).body.data;
      expect(roots).toHaveLength(1);
      expect(roots[0]).toMatchObject({
        id: 'mtlsroot_cfg',
        status: 'active',
        admission: { max_chain_depth: 1, require_digital_signature: true },
      });
      const res = await exchange(request(await idp.sign(good()), { identity_provider_id: 'idp_cfg', service_account_id: 'svc_acct_cfg' }));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.scope).toBe('models.read');
    });
  });
});
