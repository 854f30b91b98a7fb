import type { FastifyReply } from 'fastify';
import { toApiError } from '../../core/validation.js';

/**
 * Token exchange refusals, one class per failure category of the spec, in the style of jose's errors: each
 * carries the RFC 6749 §5.2 error `code` it is rendered with, the HTTP status, the spec's `category` and a
 * short machine `reason` for the audit log. Descriptions never contain the subject token, a certificate or
 * a claim value taken from the presented credential.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'unsupported_grant_type'
  | 'invalid_target'
  | 'invalid_subject_token'
  | 'invalid_grant'
  | 'temporarily_unavailable'
  | 'access_denied'
  | 'server_error';

/** The failure categories of the spec's token exchange errors (plus two of Standin's: target and upstream). */
export type ExchangeCategory =
  | 'missing_parameter'
  | 'unsupported_request'
  | 'invalid_target'
  | 'provider_resolution'
  | 'jwt_verification'
  | 'certificate_verification'
  | 'attribute_condition'
  | 'mapping_resolution'
  | 'keys_unavailable';

export interface OAuthErrorBody {
  error: OAuthErrorCode;
  error_description: string;
}

/** Headers of every error reply of the token endpoint: RFC 6749 §5.1 forbids caching its answers. */
export const OAUTH_ERROR_HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/**
 * The RFC 6749 §5.2 status and body of anything the token endpoint fails with: an exchange refusal as
 * it is, any other failure (malformed or oversized body, wrong content type, an edge check, a server error)
 * as `invalid_request`, `temporarily_unavailable` (503) or `server_error` with the API error's message.
 */
export function oauthError(err: unknown): { status: number; body: OAuthErrorBody } {
  if (err instanceof ExchangeError) return { status: err.status, body: err.toBody() };
  const api = toApiError(err);
  const error: OAuthErrorCode = api.status < 500 ? 'invalid_request' : api.status === 503 ? 'temporarily_unavailable' : 'server_error';
  return { status: api.status, body: { error, error_description: api.message } };
}

/** Answers `oauthError(err)`: the one error reply of `/oauth/` URLs (the token endpoint and the app's error handler). */
export function sendOAuthError(reply: FastifyReply, err: unknown): FastifyReply {
  const { status, body } = oauthError(err);
  return reply.headers(OAUTH_ERROR_HEADERS).code(status).send(body);
}

export abstract class ExchangeError extends Error {
  abstract readonly code: OAuthErrorCode;
  abstract readonly category: ExchangeCategory;
  readonly status: number = 400;
  /** Short machine reason recorded in the audit log (`expired`, `unknown_kid`, `ambiguous` …). */
  readonly reason: string;

  constructor(reason: string, description: string) {
    super(description);
    this.name = new.target.name;
    this.reason = reason;
  }

  toBody(): OAuthErrorBody {
    return { error: this.code, error_description: this.message };
  }
}

/** A required parameter is absent. */
export class MissingParameter extends ExchangeError {
  readonly code = 'invalid_request' as const;
  readonly category = 'missing_parameter' as const;
  constructor(readonly param: string) {
    super('missing_parameter', `'${param}' is required.`);
  }
}

/** `grant_type` is not token exchange. */
export class UnsupportedGrantType extends ExchangeError {
  readonly code = 'unsupported_grant_type' as const;
  readonly category = 'unsupported_request' as const;
  constructor() {
    super('unsupported_grant_type', "'grant_type' must be 'urn:ietf:params:oauth:grant-type:token-exchange'.");
  }
}

/** Unsupported subject_token_type, a field not accepted in this mode, a duplicate or malformed parameter, a malformed body. */
export class UnsupportedTokenRequest extends ExchangeError {
  readonly code = 'invalid_request' as const;
  readonly category = 'unsupported_request' as const;
  constructor(reason: string, description: string, override?: { status?: number }) {
    super(reason, description);
    if (override?.status) (this as { status: number }).status = override.status;
  }
}

/** `audience` or `resource` names a target Standin does not issue tokens for (RFC 8693 §2.2.2). */
export class InvalidTarget extends ExchangeError {
  readonly code = 'invalid_target' as const;
  readonly category = 'invalid_target' as const;
  constructor(param: string) {
    super('invalid_target', `'${param}' is not supported: tokens are issued only for this API; omit '${param}'.`);
  }
}

/** The provider id is malformed (invalid_request), or names no usable provider (invalid_grant). */
export class ProviderResolutionFailed extends ExchangeError {
  readonly code: 'invalid_request' | 'invalid_grant';
  readonly category = 'provider_resolution' as const;
  constructor(reason: 'malformed' | 'unknown' | 'disabled' | 'mode_mismatch', description: string) {
    super(reason, description);
    this.code = reason === 'malformed' ? 'invalid_request' : 'invalid_grant';
  }
}

/** The subject JWT failed verification: an authentication error (401). */
export class JwtVerificationFailed extends ExchangeError {
  readonly code = 'invalid_subject_token' as const;
  readonly category = 'jwt_verification' as const;
  override readonly status = 401;
  constructor(
    reason:
      | 'malformed'
      | 'too_large'
      | 'missing_kid'
      | 'missing_alg'
      | 'unsupported_alg'
      | 'bad_signature'
      | 'issuer_mismatch'
      | 'audience_mismatch'
      | 'missing_claim'
      | 'invalid_claim'
      | 'expired'
      | 'not_yet_valid'
      | 'iat_in_future'
      | 'unknown_kid'
      | 'invalid_spiffe_id',
    description: string,
  ) {
    super(reason, description);
  }
}

/** The provider's key set could not be fetched and no cached copy exists (503, the token may be fine). */
export class KeysUnavailable extends ExchangeError {
  readonly code = 'temporarily_unavailable' as const;
  readonly category = 'keys_unavailable' as const;
  override readonly status = 503;
  constructor() {
    super('jwks_unavailable', "The identity provider's keys could not be fetched; try again later.");
  }
}

/** The client certificate is missing, malformed, untrusted, outside validity or refused by an admission rule. */
export class CertificateVerificationFailed extends ExchangeError {
  readonly code = 'invalid_subject_token' as const;
  readonly category = 'certificate_verification' as const;
  override readonly status = 401;
  constructor(reason: 'missing' | 'malformed' | 'untrusted_chain' | 'expired' | 'not_yet_valid' | 'admission', description: string) {
    super(reason, description);
  }
}

/** The provider's attribute condition evaluated to false. */
export class AttributeConditionFailed extends ExchangeError {
  readonly code = 'invalid_grant' as const;
  readonly category = 'attribute_condition' as const;
  constructor() {
    super('condition_false', "The identity provider's attribute condition rejected the credential.");
  }
}

/** No single enabled mapping resolves, the attribute transformation fails, or the mapping's configuration is unusable. */
export class MappingResolutionFailed extends ExchangeError {
  readonly code = 'invalid_grant' as const;
  readonly category = 'mapping_resolution' as const;
  constructor(
    reason:
      | 'no_mapping'
      | 'mapping_disabled'
      | 'attributes_mismatch'
      | 'ambiguous'
      | 'transformation_failed'
      | 'subject_invalid'
      | 'root_not_active_for_project'
      | 'no_active_roots'
      | 'service_account_unavailable',
    description: string,
  ) {
    super(reason, description);
  }
}
