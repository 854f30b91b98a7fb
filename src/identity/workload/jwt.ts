import { decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyResult } from 'jose';
import { dateAt } from './clock-dates.js';
import { JwtVerificationFailed, KeysUnavailable } from './errors.js';
import type { JwksCache, KeySource } from './jwks.js';
import { parseSpiffeId } from './spiffe.js';

/**
 * Verification of a subject JWT (an OIDC id_token or a SPIFFE JWT-SVID) against a `jwt` provider, every
 * check of authentication rule 2: a `kid` and a supported `alg` in the header; `iss`, `aud`, `sub`, `exp`,
 * `iat` present; issuer and audience match; signed by a key of the provider's JWKS. Algorithms are pinned to
 * the provider's asymmetric list, so `none` and HMAC-with-the-public-key are refused before any key is used.
 */
export const ASYMMETRIC_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
export const DEFAULT_ALGS = ['RS256', 'ES256'];
/** Largest subject token accepted (bytes of the compact form). */
export const MAX_SUBJECT_TOKEN = 16 * 1024;
/** Clock skew allowed on exp, nbf and iat, in seconds. */
export const CLOCK_SKEW_S = 60;

export interface JwtProvider {
  issuer: string;
  audiences: string[];
  algorithms: string[];
  /** When set, `sub` must be a SPIFFE ID in this trust domain (the token is a JWT-SVID). */
  spiffeTrustDomain: string | null;
  keys: KeySource;
}

export interface VerifiedJwt {
  claims: JWTPayload & { sub: string; exp: number; iat: number };
  header: { alg: string; kid: string };
  /** Standin clock seconds at which the subject token expires. */
  expiresAt: number;
}

const fail = (reason: ConstructorParameters<typeof JwtVerificationFailed>[0], description: string) =>
  new JwtVerificationFailed(reason, description);

/** Verifies `token` for `provider` at `nowMs` (Standin clock); throws JwtVerificationFailed or KeysUnavailable. */
export async function verifySubjectJwt(token: string, provider: JwtProvider, jwks: JwksCache, nowMs: number): Promise<VerifiedJwt> {
  if (token.length > MAX_SUBJECT_TOKEN) throw fail('too_large', `'subject_token' must be at most ${MAX_SUBJECT_TOKEN} bytes.`);
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token))
    throw fail('malformed', "'subject_token' is not a compact JWS (three base64url parts).");
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(token) as Record<string, unknown>;
  } catch {
    throw fail('malformed', "'subject_token' has a malformed header.");
  }
  if (header.alg === undefined) throw fail('missing_alg', "The subject token's header has no 'alg'.");
  if (typeof header.alg !== 'string' || header.alg === 'none' || !provider.algorithms.includes(header.alg)) {
    throw fail(
      'unsupported_alg',
      `The subject token's 'alg' is not allowed by this provider (allowed: ${provider.algorithms.join(', ')}).`,
    );
  }
  if (typeof header.kid !== 'string' || header.kid === '') throw fail('missing_kid', "The subject token's header has no 'kid'.");
  if (header.typ !== undefined && provider.spiffeTrustDomain && !['JWT', 'JOSE'].includes(String(header.typ))) {
    throw fail('malformed', "A JWT-SVID's 'typ' must be JWT or JOSE.");
  }
  const kid = header.kid;

  const found = await jwks.lookup(provider.keys, kid);
  if (found.kind === 'unavailable') throw new KeysUnavailable();
  if (found.kind === 'unknown_kid') throw fail('unknown_kid', "No key of the provider's JWKS has the subject token's 'kid'.");

  let result: JWTVerifyResult;
  const options = {
    algorithms: provider.algorithms,
    issuer: provider.issuer,
    audience: provider.audiences,
    requiredClaims: ['iss', 'aud', 'sub', 'exp', 'iat'],
    currentDate: dateAt(nowMs),
    clockTolerance: CLOCK_SKEW_S,
  };
  try {
    result = await verifyWithCandidates(token, found.getKey, options);
  } catch (err) {
    throw mapJoseError(err);
  }
  const claims = result.payload;
  if (typeof claims.sub !== 'string' || claims.sub === '')
    throw fail('invalid_claim', "The subject token's 'sub' must be a non-empty string.");
  // Claims reach the audit and the minted token's record: PostgreSQL cannot store NUL, SQLite can; both refuse it.
  if (JSON.stringify(claims).includes('\\u0000'))
    throw fail('invalid_claim', "The subject token's claims must not contain NUL (\\u0000) characters.");
  const nowS = Math.floor(nowMs / 1000);
  if (typeof claims.iat !== 'number' || claims.iat > nowS + CLOCK_SKEW_S)
    throw fail('iat_in_future', "The subject token's 'iat' is in the future.");
  // The skew allowance serves nbf and iat; a token at or past its exp has no life left to grant.
  if ((claims.exp as number) <= nowS) throw fail('expired', 'The subject token has expired.');
  if (provider.spiffeTrustDomain) {
    const id = parseSpiffeId(claims.sub);
    if (!id || id.trustDomain !== provider.spiffeTrustDomain) {
      throw fail('invalid_spiffe_id', `The subject token's 'sub' must be a SPIFFE ID in trust domain '${provider.spiffeTrustDomain}'.`);
    }
  }
  return {
    claims: claims as VerifiedJwt['claims'],
    header: { alg: header.alg, kid },
    expiresAt: claims.exp as number,
  };
}

// Two keys of one set may share a kid (a rotation overlap); jose then reports every candidate, tried in turn.
async function verifyWithCandidates(
  token: string,
  getKey: JWTVerifyGetKey,
  options: Parameters<typeof jwtVerify>[2],
): Promise<JWTVerifyResult> {
  try {
    return await jwtVerify(token, getKey, options);
  } catch (err) {
    const e = err as { code?: string; [Symbol.asyncIterator]?: () => AsyncIterator<CryptoKey> };
    if (e.code !== 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' || !e[Symbol.asyncIterator]) throw err;
    let last: unknown = err;
    for await (const key of e as AsyncIterable<CryptoKey>) {
      try {
        return await jwtVerify(token, key, options);
      } catch (inner) {
        last = inner;
        if ((inner as { code?: string }).code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') break;
      }
    }
    throw last;
  }
}

function mapJoseError(err: unknown): JwtVerificationFailed {
  const e = err as { code?: string; claim?: string; reason?: string };
  switch (e.code) {
    case 'ERR_JWT_EXPIRED':
      return fail('expired', 'The subject token has expired.');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (e.reason === 'missing') return fail('missing_claim', `The subject token has no '${e.claim}' claim.`);
      if (e.claim === 'iss') return fail('issuer_mismatch', "The subject token's 'iss' does not match the provider's issuer.");
      if (e.claim === 'aud') return fail('audience_mismatch', "The subject token's 'aud' does not name an audience of the provider.");
      if (e.claim === 'nbf') return fail('not_yet_valid', 'The subject token is not yet valid (nbf).');
      return fail('invalid_claim', `The subject token's '${e.claim}' claim is invalid.`);
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return fail('bad_signature', "The subject token's signature does not verify with the provider's key.");
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return fail('unsupported_alg', "The subject token's 'alg' is not supported for the provider's key.");
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return fail('unknown_kid', "No key of the provider's JWKS fits the subject token's 'kid' and 'alg'.");
    case 'ERR_JWT_INVALID':
      return fail('malformed', "The subject token's payload is not a valid JWT claims set.");
    default:
      return fail('malformed', 'The subject token could not be verified.');
  }
}
