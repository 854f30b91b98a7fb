import { describe, expect, it } from 'vitest';
import { evaluateExpressions, compileExpressions, loadCel } from './cel.js';
import {
  ExchangeError,
  InvalidTarget,
  MappingResolutionFailed,
  MissingParameter,
  ProviderResolutionFailed,
  UnsupportedGrantType,
  UnsupportedTokenRequest,
} from './errors.js';
import { GRANT_TYPE, JWT_TOKEN_TYPE, parseExchangeRequest, resolveMapping, scopeOf, x509TokenType } from './exchange.js';
import type { Mapping } from './store.js';

const jwtBody = (extra: Record<string, unknown> = {}) => ({
  grant_type: GRANT_TYPE,
  subject_token_type: JWT_TOKEN_TYPE,
  subject_token: 'a.b.c',
  identity_provider_id: 'idp_x',
  service_account_id: 'svc_acct_x',
  ...extra,
});

function refusal(body: unknown, endpoint: 'main' | 'mtls' = 'main', vendor = 'vendor'): ExchangeError {
  try {
    parseExchangeRequest(body, vendor, endpoint);
  } catch (err) {
    expect(err).toBeInstanceOf(ExchangeError);
    return err as ExchangeError;
  }
  throw new Error('accepted');
}

// compileExpressions needs the CEL library, which the service loads on first use; suites below compile as
// they are collected.
await loadCel();

describe('parseExchangeRequest', () => {
  it('accepts the JWT request and the X.509 request on their endpoints', () => {
    expect(parseExchangeRequest(jwtBody({ scope: 'anything' }), 'vendor', 'main')).toEqual({
      mode: 'jwt',
      subjectToken: 'a.b.c',
      providerId: 'idp_x',
      serviceAccountId: 'svc_acct_x',
    });
    const x = {
      grant_type: GRANT_TYPE,
      subject_token_type: x509TokenType('openai'),
      identity_provider_id: 'idp_x',
      service_account_id: 'svc_acct_x',
    };
    expect(parseExchangeRequest(x, 'openai', 'mtls').mode).toBe('x509');
    // The token type follows the vendor setting.
    expect(refusal({ ...x, subject_token_type: x509TokenType('vendor') }, 'mtls', 'openai')).toBeInstanceOf(UnsupportedTokenRequest);
  });

  it('maps each problem to its class and OAuth code', () => {
    expect(refusal(null)).toBeInstanceOf(UnsupportedTokenRequest);
    const { grant_type: _omitted, ...noGrant } = jwtBody();
    expect(refusal(noGrant)).toBeInstanceOf(MissingParameter);
    expect(refusal(jwtBody({ grant_type: 'password' })).code).toBe('unsupported_grant_type');
    expect(refusal(jwtBody({ grant_type: 'password' }))).toBeInstanceOf(UnsupportedGrantType);
    expect(refusal(jwtBody({ subject_token: '' }))).toBeInstanceOf(MissingParameter);
    expect(refusal(jwtBody({ audience: 'x' }))).toBeInstanceOf(InvalidTarget);
    expect(refusal(jwtBody({ audience: 'x' })).code).toBe('invalid_target');
    expect(refusal(jwtBody({ identity_provider_id: 'github' }))).toBeInstanceOf(ProviderResolutionFailed);
    expect(refusal(jwtBody({ identity_provider_id: 'github' })).code).toBe('invalid_request');
    expect(refusal(jwtBody({ service_account_id: 'x y' })).reason).toBe('malformed_service_account_id');
    expect(refusal(jwtBody({ extra: '1' })).reason).toBe('unknown_parameter');
    expect(refusal(jwtBody({ actor_token: 't' })).reason).toBe('delegation_unsupported');
    expect(refusal(jwtBody({ requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' })).reason).toBe(
      'unsupported_requested_token_type',
    );
    expect(refusal(jwtBody({ n: 1 })).reason).toBe('invalid_parameter');
    expect(refusal(jwtBody(), 'mtls').reason).toBe('wrong_endpoint');
    const x = {
      grant_type: GRANT_TYPE,
      subject_token_type: x509TokenType('vendor'),
      identity_provider_id: 'idp_x',
      service_account_id: 'svc_acct_x',
    };
    expect(refusal(x, 'main').reason).toBe('wrong_endpoint');
    expect(refusal({ ...x, subject_token: 'x' }, 'mtls').reason).toBe('subject_token_not_allowed');
  });

  it('never echoes the subject token in a description', () => {
    const secret = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
    for (const body of [jwtBody({ subject_token: secret, extra: '1' }), jwtBody({ subject_token: secret, audience: 'a' })]) {
      expect(refusal(body).message).not.toContain(secret);
    }
  });
});

describe('scopeOf', () => {
  it('lists granted groups, sorted, and is absent without permissions', () => {
    expect(scopeOf(null)).toBeUndefined();
    expect(scopeOf({ threads: 'write', models: 'read', files: 'none' })).toBe('models.read threads.write');
  });
});

describe('resolveMapping', () => {
  const compiled = compileExpressions(
    { attribute_mapping: { 'vendor.subject': 'assertion.sub', 'attribute.env': 'assertion.env' } },
    'vendor',
  );
  const claims = { sub: 's', env: 'prod' };
  const derived = evaluateExpressions(compiled, claims, 'vendor');
  const mapping = (id: string, over: Partial<Mapping> = {}): Mapping => ({
    id,
    object: 'organization.identity_provider.mapping',
    provider_id: 'idp_x',
    name: id,
    service_account_id: 'svc_acct_x',
    project_id: 'proj_x',
    enabled: true,
    attribute_match: {},
    permissions: null,
    created_at: 0,
    ...over,
  });
  const reason = (ms: Mapping[]) => {
    try {
      resolveMapping(ms, derived, claims, 'vendor', 'svc_acct_x');
    } catch (err) {
      expect(err).toBeInstanceOf(MappingResolutionFailed);
      return (err as MappingResolutionFailed).reason;
    }
    return 'resolved';
  };
  it('needs exactly one enabled matching mapping', () => {
    expect(reason([])).toBe('no_mapping');
    expect(reason([mapping('a', { enabled: false })])).toBe('mapping_disabled');
    expect(reason([mapping('a', { attribute_match: { 'attribute.env': 'dev' } })])).toBe('attributes_mismatch');
    expect(reason([mapping('a'), mapping('b', { attribute_match: { 'attribute.env': 'prod' } })])).toBe('ambiguous');
    expect(
      reason([
        mapping('a', { attribute_match: { 'attribute.env': 'prod' } }),
        mapping('b', { attribute_match: { 'attribute.env': 'dev' } }),
      ]),
    ).toBe('resolved');
    expect(reason([mapping('a'), mapping('b', { enabled: false })])).toBe('resolved');
  });
});
