import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicKey } from 'node:crypto';
const base64url = (s: string) => Buffer.from(s).toString('base64url');
import { createOutbound } from '../../core/outbound.js';
import { claimsFor, createIdp, type TestIdp } from '../../../test/identity/idp.js';
import { JwtVerificationFailed, KeysUnavailable } from './errors.js';
import { JwksCache, jwksFetcher, validateJwks, JwksError, type KeySource } from './jwks.js';
import { verifySubjectJwt, type JwtProvider } from './jwt.js';
import { parseSpiffeId } from './spiffe.js';

let idp: TestIdp;
let url: string;
let now = 1_800_000_000_000;
const nowS = () => Math.floor(now / 1000);
const outbound = createOutbound({ allowLoopback: true });

beforeAll(async () => {
  idp = await createIdp();
  url = await idp.serve();
});
afterAll(async () => {
  await idp.close();
  await outbound.close();
});

const inline = (): KeySource => ({ cacheKey: `inline:${Math.random()}`, jwksUrl: null, jwksInline: structuredClone(idp.jwks) });
const provider = (over: Partial<JwtProvider> = {}): JwtProvider => ({
  issuer: idp.issuer,
  audiences: ['standin'],
  algorithms: ['RS256', 'ES256'],
  spiffeTrustDomain: null,
  keys: inline(),
  ...over,
});
const cache = () => new JwksCache({ fetch: jwksFetcher(outbound), now: () => now, cooldownMs: 30_000 });

async function refusal(token: string, p = provider(), c = cache()): Promise<string> {
  try {
    await verifySubjectJwt(token, p, c, now);
  } catch (err) {
    if (err instanceof JwtVerificationFailed) {
      expect(err.code).toBe('invalid_subject_token');
      expect(err.status).toBe(401);
      expect(err.message).not.toContain(token);
      return err.reason;
    }
    throw err;
  }
  throw new Error('token accepted');
}

describe('verifySubjectJwt', () => {
  it('accepts a good token and reports its expiry', async () => {
    const token = await idp.sign(claimsFor(idp, nowS()));
    const v = await verifySubjectJwt(token, provider(), cache(), now);
    expect(v.claims.sub).toBe('repo:acme/api:ref:refs/heads/main');
    expect(v.expiresAt).toBe(nowS() + 600);
    expect(v.header.kid).toBe(idp.kid);
  });

  it("refuses alg 'none'", async () => {
    const unsigned = `${base64url(JSON.stringify({ alg: 'none', kid: idp.kid }))}.${base64url(JSON.stringify(claimsFor(idp, nowS())))}.`;
    expect(await refusal(unsigned)).toBe('unsupported_alg');
  });

  it('refuses HS256 signed with the public key', async () => {
    const pem = createPublicKey({ key: idp.publicJwk(), format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
    const token = await idp.sign(claimsFor(idp, nowS()), { alg: 'HS256', key: new TextEncoder().encode(pem) });
    expect(await refusal(token)).toBe('unsupported_alg');
    // Even a provider misconfigured to list HS256 never verifies HMAC against a JWKS.
    expect(await refusal(token, provider({ algorithms: ['RS256', 'HS256'] }))).toBe('unsupported_alg');
  });

  it('refuses an alg the provider does not allow, though the key could verify it', async () => {
    const token = await idp.sign(claimsFor(idp, nowS()));
    expect(await refusal(token, provider({ algorithms: ['ES256'] }))).toBe('unsupported_alg');
  });

  it('refuses a missing alg and a missing kid', async () => {
    const good = await idp.sign(claimsFor(idp, nowS()));
    const [, payload, sig] = good.split('.');
    expect(await refusal(`${base64url(JSON.stringify({ kid: idp.kid }))}.${payload}.${sig}`)).toBe('missing_alg');
    expect(await refusal(await idp.sign(claimsFor(idp, nowS()), { kid: null }))).toBe('missing_kid');
    expect(await refusal(`${base64url(JSON.stringify({ alg: 'RS256', kid: '' }))}.${payload}.${sig}`)).toBe('missing_kid');
  });

  it('refuses an unknown kid', async () => {
    const token = await idp.sign(claimsFor(idp, nowS()), { kid: 'nope' });
    const [h, p, s] = token.split('.');
    void h;
    expect(await refusal(`${base64url(JSON.stringify({ alg: 'RS256', kid: 'nope' }))}.${p}.${s}`)).toBe('unknown_kid');
  });

  it('refuses a bad signature and a malformed token', async () => {
    const token = await idp.sign(claimsFor(idp, nowS()));
    const other = await idp.sign(claimsFor(idp, nowS(), { sub: 'someone-else' }));
    const forged = `${token.split('.')[0]}.${other.split('.')[1]}.${token.split('.')[2]}`;
    expect(await refusal(forged)).toBe('bad_signature');
    expect(await refusal('not-a-jwt')).toBe('malformed');
    expect(await refusal('a.b.c')).toBe('malformed');
    expect(await refusal('x'.repeat(20_000))).toBe('too_large');
  });

  it('refuses expired, not yet valid and iat in the future', async () => {
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), { iat: nowS() - 700, exp: nowS() - 100 })))).toBe('expired');
    // Within the skew allowance jose would accept it; with no life left it is still refused.
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), { exp: nowS() - 5 })))).toBe('expired');
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), { nbf: nowS() + 600, exp: nowS() + 1200 })))).toBe('not_yet_valid');
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), { iat: nowS() + 3600, exp: nowS() + 7200 })))).toBe('iat_in_future');
  });

  it('refuses a wrong issuer or audience', async () => {
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), { iss: 'https://evil.test' })))).toBe('issuer_mismatch');
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), {}, 'someone-else')))).toBe('audience_mismatch');
    // Any one of several audiences suffices.
    const multi = await idp.sign(claimsFor(idp, nowS(), { aud: ['x', 'standin'] }));
    await expect(verifySubjectJwt(multi, provider(), cache(), now)).resolves.toBeTruthy();
  });

  it('refuses a claim holding NUL, which one store could not keep', async () => {
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), { sub: 'repo:a\u0000b' })))).toBe('invalid_claim');
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), { ref: 'refs/heads/\u0000' })))).toBe('invalid_claim');
  });

  it('refuses each missing claim', async () => {
    for (const claim of ['iss', 'aud', 'sub', 'exp', 'iat']) {
      const c = claimsFor(idp, nowS()) as Record<string, unknown>;
      delete c[claim];
      expect(await refusal(await idp.sign(c)), claim).toBe('missing_claim');
    }
  });

  it('SPIFFE JWT-SVIDs: sub must be a SPIFFE ID of the trust domain', async () => {
    const p = provider({ spiffeTrustDomain: 'acme.test' });
    const svid = await idp.sign(claimsFor(idp, nowS(), { sub: 'spiffe://acme.test/ns/prod/sa/api' }), { typ: 'JWT' });
    const v = await verifySubjectJwt(svid, p, cache(), now);
    expect(v.claims.sub).toBe('spiffe://acme.test/ns/prod/sa/api');
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), { sub: 'spiffe://other.test/x' })), p)).toBe('invalid_spiffe_id');
    expect(await refusal(await idp.sign(claimsFor(idp, nowS(), { sub: 'not-spiffe' })), p)).toBe('invalid_spiffe_id');
  });
});

describe('JWKS from a URL', () => {
  it('fetches once, caches, refetches an unknown kid once per cooldown', async () => {
    const c = cache();
    const p = provider({ keys: { cacheKey: 'url1', jwksUrl: url, jwksInline: null } });
    const before = idp.requests;
    await verifySubjectJwt(await idp.sign(claimsFor(idp, nowS())), p, c, now);
    await verifySubjectJwt(await idp.sign(claimsFor(idp, nowS())), p, c, now);
    expect(idp.requests - before).toBe(1);

    // A rotated key appears: the first token with it triggers a refetch (the cooldown has passed).
    now += 31_000;
    const kid2 = await idp.addKey('ES256');
    await verifySubjectJwt(await idp.sign(claimsFor(idp, nowS()), { kid: kid2 }), p, c, now);
    expect(idp.requests - before).toBe(2);

    // Unknown kids within the cooldown do not reach the IdP again.
    const bogus = await idp.sign(claimsFor(idp, nowS()));
    const [, pl, sig] = bogus.split('.');
    const withKid = (k: string) => `${base64url(JSON.stringify({ alg: 'RS256', kid: k }))}.${pl}.${sig}`;
    expect(await refusal(withKid('ghost1'), p, c)).toBe('unknown_kid');
    expect(await refusal(withKid('ghost2'), p, c)).toBe('unknown_kid');
    expect(idp.requests - before).toBe(2);
    now += 31_000;
    expect(await refusal(withKid('ghost3'), p, c)).toBe('unknown_kid');
    expect(idp.requests - before).toBe(3);
  });

  it('an unreachable JWKS with nothing cached is KeysUnavailable (503); a failed refresh keeps the last good set', async () => {
    const c = cache();
    const dead = provider({ keys: { cacheKey: 'dead', jwksUrl: 'http://127.0.0.1:1/jwks', jwksInline: null } });
    const token = await idp.sign(claimsFor(idp, nowS()));
    const err = await verifySubjectJwt(token, dead, c, now).catch((e) => e);
    expect(err).toBeInstanceOf(KeysUnavailable);
    expect(err.status).toBe(503);
  });

  it('the SSRF guard refuses private addresses', async () => {
    const guarded = createOutbound({ allowLoopback: false });
    await expect(jwksFetcher(guarded)(url)).rejects.toThrow(/refusing to connect/);
    await expect(jwksFetcher(guarded)('http://169.254.169.254/jwks')).rejects.toThrow(JwksError);
    await guarded.close();
  });

  it('refuses symmetric and private keys in a JWKS', () => {
    expect(() => validateJwks({ keys: [{ kty: 'oct', k: 'abc' }] })).toThrow(/symmetric/);
    expect(() => validateJwks({ keys: [{ kty: 'RSA', n: 'x', e: 'AQAB', d: 'secret' }] })).toThrow(/private/);
    expect(() => validateJwks({ nope: 1 })).toThrow(/keys/);
  });
});

describe('parseSpiffeId', () => {
  it('follows the SPIFFE ID rules', () => {
    expect(parseSpiffeId('spiffe://example.org/ns/default/sa/web')).toEqual({ trustDomain: 'example.org', path: '/ns/default/sa/web' });
    expect(parseSpiffeId('spiffe://example.org')).toEqual({ trustDomain: 'example.org', path: '' });
    for (const bad of [
      'spiffe://Example.org/x',
      'spiffe://example.org/',
      'spiffe://example.org/a/../b',
      'spiffe://ex:80/x',
      'spiffe://u@ex/x',
      'https://ex/x',
      'spiffe://ex/a?b',
      'spiffe:///x',
    ]) {
      expect(parseSpiffeId(bad), bad).toBeNull();
    }
  });
});
