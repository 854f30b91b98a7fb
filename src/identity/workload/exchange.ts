import type { Permissions, PlatformPrincipal } from '../../core/auth.js';
import type { Ctx } from '../../core/module.js';
import { ApiError } from '../../core/errors.js';
import { newId, newSecret } from '../../core/ids.js';
import { hashSecret } from '../../core/secrets.js';
import { fromJson, toJson } from '../../store/db.js';
import { getServiceAccount } from '../service.js';
import { compileExpressions, evaluateExpressions, loadCel, matchesAttributes, type CompiledExpressions } from './cel.js';
import {
  ExchangeError,
  InvalidTarget,
  MappingResolutionFailed,
  MissingParameter,
  ProviderResolutionFailed,
  UnsupportedGrantType,
  UnsupportedTokenRequest,
} from './errors.js';
import { JwksCache, type JwksFetcher } from './jwks.js';
import { verifySubjectJwt } from './jwt.js';
import * as store from './store.js';
import type { Mapping, MtlsRoot, NewToken, Provider } from './store.js';
import { parseRoot, verifyClientChain, type TrustedRoot, type VerifiedClientCertificate } from './x509.js';

/**
 * Token exchange (RFC 8693 as the spec profiles it): request parsing, the JWT and X.509 flows, mapping
 * resolution, token minting, the audit log, and the resolver that turns minted tokens into principals.
 */
export const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const x509TokenType = (vendor: string) => `urn:${vendor}:params:oauth:token-type:x509`;
/** Longest life of a minted token, seconds. */
export const MAX_TOKEN_LIFETIME = 3600;
/** Prefix of minted access tokens (opaque; stored hashed). */
export const TOKEN_PREFIX = 'wit_';

export type ExchangeMode = 'jwt' | 'x509';
export type Endpoint = 'main' | 'mtls';

export interface ExchangeRequest {
  mode: ExchangeMode;
  subjectToken: string | null;
  providerId: string;
  serviceAccountId: string;
}

export interface TokenResponse {
  access_token: string;
  issued_token_type: typeof ACCESS_TOKEN_TYPE;
  token_type: 'Bearer';
  expires_in: number;
  scope?: string;
}

const COMMON = new Set([
  'grant_type',
  'subject_token_type',
  'identity_provider_id',
  'service_account_id',
  'scope',
  'requested_token_type',
  'audience',
  'resource',
]);

/** Checks a token request body (JSON object or parsed form) for `endpoint`; throws an ExchangeError. */
export function parseExchangeRequest(body: unknown, vendor: string, endpoint: Endpoint): ExchangeRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new UnsupportedTokenRequest('malformed_body', 'The request body must be a JSON object (or form-encoded parameters).');
  }
  const params = body as Record<string, unknown>;
  for (const [k, v] of Object.entries(params)) {
    if (typeof v !== 'string') throw new UnsupportedTokenRequest('invalid_parameter', `'${k.slice(0, 100)}' must be a string.`);
  }
  const p = params as Record<string, string>;
  const present = (k: string) => typeof p[k] === 'string' && p[k] !== '';
  if (!present('grant_type')) throw new MissingParameter('grant_type');
  if (p.grant_type !== GRANT_TYPE) throw new UnsupportedGrantType();
  if (!present('subject_token_type')) throw new MissingParameter('subject_token_type');
  let mode: ExchangeMode;
  if (p.subject_token_type === JWT_TOKEN_TYPE || p.subject_token_type === ID_TOKEN_TYPE) mode = 'jwt';
  else if (p.subject_token_type === x509TokenType(vendor)) mode = 'x509';
  else {
    throw new UnsupportedTokenRequest(
      'unsupported_token_type',
      `'subject_token_type' must be '${JWT_TOKEN_TYPE}', '${ID_TOKEN_TYPE}' or (on the mutual TLS token endpoint) '${x509TokenType(vendor)}'.`,
    );
  }
  if (mode === 'x509' && endpoint === 'main') {
    throw new UnsupportedTokenRequest(
      'wrong_endpoint',
      'X.509 exchange is served only on the mutual TLS token endpoint, with the client certificate presented in the TLS handshake.',
    );
  }
  if (mode === 'jwt' && endpoint === 'mtls') {
    throw new UnsupportedTokenRequest(
      'wrong_endpoint',
      `The mutual TLS token endpoint serves X.509 exchange only ('subject_token_type' '${x509TokenType(vendor)}').`,
    );
  }
  for (const k of Object.keys(p)) {
    if (COMMON.has(k) || (k === 'subject_token' && mode === 'jwt')) continue;
    if (k === 'subject_token') {
      throw new UnsupportedTokenRequest(
        'subject_token_not_allowed',
        "'subject_token' must be omitted for X.509 exchange: the identity comes only from the TLS connection.",
      );
    }
    if (k === 'actor_token' || k === 'actor_token_type')
      throw new UnsupportedTokenRequest('delegation_unsupported', `'${k}' is not supported: delegation is not offered.`);
    throw new UnsupportedTokenRequest(
      'unknown_parameter',
      `'${k.slice(0, 100)}' is not a parameter of ${mode === 'jwt' ? 'JWT' : 'X.509'} token exchange.`,
    );
  }
  if (present('requested_token_type') && p.requested_token_type !== ACCESS_TOKEN_TYPE) {
    throw new UnsupportedTokenRequest(
      'unsupported_requested_token_type',
      `'requested_token_type' must be '${ACCESS_TOKEN_TYPE}' (or omitted).`,
    );
  }
  for (const k of ['audience', 'resource']) if (k in p) throw new InvalidTarget(k);
  if (mode === 'jwt' && !present('subject_token')) throw new MissingParameter('subject_token');
  if (!present('identity_provider_id')) throw new MissingParameter('identity_provider_id');
  if (!present('service_account_id')) throw new MissingParameter('service_account_id');
  if (!/^idp_[A-Za-z0-9_-]{1,100}$/.test(p.identity_provider_id)) {
    throw new ProviderResolutionFailed('malformed', "'identity_provider_id' is malformed (an id such as 'idp_…').");
  }
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(p.service_account_id)) {
    throw new UnsupportedTokenRequest('malformed_service_account_id', "'service_account_id' is malformed (an id such as 'svc_acct_…').");
  }
  return {
    mode,
    subjectToken: mode === 'jwt' ? p.subject_token : null,
    providerId: p.identity_provider_id,
    serviceAccountId: p.service_account_id,
  };
}

/** What an exchange records in the audit log, filled in as the exchange proceeds. */
interface AuditDraft {
  organizationId: string | null;
  providerId: string | null;
  mappingId: string | null;
  serviceAccountId: string | null;
  subject: string | null;
  via: ExchangeMode | null;
  certificateSha256: string | null;
  clientIp: string | null;
}

/** Space-separated `group.level` of every granted group, or undefined when the mapping has no permissions. */
export function scopeOf(permissions: Permissions | null): string | undefined {
  if (!permissions) return undefined;
  return Object.entries(permissions)
    .filter(([, level]) => level !== 'none')
    .map(([group, level]) => `${group}.${level}`)
    .sort()
    .join(' ');
}

/** How long configuration read by an exchange is reused, wall-clock ms. */
const CONFIG_CACHE_MS = 1_000;

interface Snapshot {
  provider: Provider | null;
  candidates: Mapping[];
  serviceAccount: { project_id: string; organization_id: string } | null;
}

export interface ClientTls {
  /** DER certificates the client presented, leaf first. */
  chain: Buffer[];
}

/** The workload identity runtime of one process: caches (JWKS, compiled CEL, parsed roots) and the flows. */
export class WorkloadIdentity {
  readonly jwks: JwksCache;
  private readonly compiled = new Map<string, CompiledExpressions>();
  private readonly parsedRoots = new Map<string, TrustedRoot>();
  private readonly snapshots = new Map<string, { at: number; generation: number; snap: Snapshot }>();
  private readonly roots = new Map<string, { at: number; generation: number; roots: MtlsRoot[] }>();
  private generation = 0;
  private readonly commits: ReturnType<typeof store.exchangeWriter>;

  constructor(
    private readonly ctx: Ctx,
    fetcher: JwksFetcher,
  ) {
    this.commits = store.exchangeWriter(() => ctx.store.db);
    this.jwks = new JwksCache({
      fetch: fetcher,
      now: () => ctx.clock.now(),
      onFetchError: (source, err) =>
        ctx.log.warn({ provider: source.cacheKey.split(':')[0], reason: err.message }, 'fetching a JWKS failed'),
    });
  }

  /** Runs one exchange; records it in the audit log whatever the outcome. Throws ExchangeError. */
  async exchange(req: ExchangeRequest, conn: { tls?: ClientTls; clientIp: string | null }): Promise<TokenResponse> {
    await loadCel();
    const audit: AuditDraft = {
      organizationId: null,
      providerId: null,
      mappingId: null,
      serviceAccountId: req.serviceAccountId,
      subject: null,
      via: req.mode,
      certificateSha256: null,
      clientIp: conn.clientIp,
    };
    try {
      const { response, token } = await this.run(req, conn, audit);
      // The token and its audit entry commit together (with those of concurrent exchanges).
      await this.record(audit, { outcome: 'issued', tokenId: token.id }, token);
      return response;
    } catch (err) {
      if (err instanceof ExchangeError) {
        await this.record(audit, { outcome: 'refused', error: err });
        this.ctx.log.info({ provider: audit.providerId, category: err.category, reason: err.reason }, 'token exchange refused');
      }
      throw err;
    }
  }

  /** Records a refusal that happened before the request could be parsed (no provider known yet). */
  async recordUnparsed(err: ExchangeError, clientIp: string | null): Promise<void> {
    await this.record(
      {
        organizationId: null,
        providerId: null,
        mappingId: null,
        serviceAccountId: null,
        subject: null,
        via: null,
        certificateSha256: null,
        clientIp,
      },
      { outcome: 'refused', error: err },
    );
  }

  private async run(
    req: ExchangeRequest,
    conn: { tls?: ClientTls },
    audit: AuditDraft,
  ): Promise<{ response: TokenResponse; token: NewToken }> {
    const snap = await this.snapshot(req.providerId, req.serviceAccountId);
    const provider = snap.provider;
    if (!provider) throw new ProviderResolutionFailed('unknown', `No identity provider '${req.providerId}'.`);
    audit.organizationId = provider.organization_id;
    audit.providerId = provider.id;
    if (!provider.enabled) throw new ProviderResolutionFailed('disabled', `Identity provider '${provider.id}' is disabled.`);
    if (provider.kind !== req.mode) {
      throw new ProviderResolutionFailed(
        'mode_mismatch',
        `Identity provider '${provider.id}' is a ${provider.kind} provider; it cannot serve ${req.mode === 'jwt' ? 'JWT' : 'X.509'} exchange.`,
      );
    }
    const nowMs = this.ctx.clock.now();
    const candidates = snap.candidates;

    let assertion: Record<string, unknown>;
    let expiresAt: number;
    let cert: VerifiedClientCertificate | null = null;
    if (req.mode === 'jwt') {
      const verified = await verifySubjectJwt(req.subjectToken!, this.jwtProvider(provider), this.jwks, nowMs);
      assertion = verified.claims;
      expiresAt = verified.expiresAt;
      audit.subject = verified.claims.sub;
    } else {
      const projects = new Set(candidates.map((m) => m.project_id));
      const roots = (await this.activeRoots(provider.organization_id)).filter((r) => r.project_id === null || projects.has(r.project_id));
      cert = await verifyClientChain(
        conn.tls?.chain ?? [],
        roots.map((r) => this.trusted(r)),
        nowMs,
      );
      audit.certificateSha256 = cert.fingerprint;
      assertion = cert.assertion as unknown as Record<string, unknown>;
      expiresAt = cert.expiresAt;
    }

    const vendor = this.ctx.settings.vendor;
    const derived = evaluateExpressions(this.expressions(provider), assertion, vendor);
    audit.subject = derived.subject;
    const mapping = resolveMapping(candidates, derived, assertion, vendor, req.serviceAccountId);
    audit.mappingId = mapping.id;
    if (cert && cert.root.projectId !== null && cert.root.projectId !== mapping.project_id) {
      throw new MappingResolutionFailed(
        'root_not_active_for_project',
        `The certificate's root is not active for project '${mapping.project_id}'.`,
      );
    }
    const sa = snap.serviceAccount;
    if (!sa || sa.project_id !== mapping.project_id || sa.organization_id !== provider.organization_id) {
      throw new MappingResolutionFailed(
        'service_account_unavailable',
        `Service account '${mapping.service_account_id}' is not available in project '${mapping.project_id}'.`,
      );
    }

    const nowS = Math.floor(nowMs / 1000);
    const expiresIn = Math.min(MAX_TOKEN_LIFETIME, expiresAt - nowS);
    if (expiresIn <= 0) throw new MappingResolutionFailed('transformation_failed', 'The subject credential has no lifetime left.');
    const value = newSecret(TOKEN_PREFIX);
    const token = {
      id: newId('wtok', this.ctx.clock),
      hash: hashSecret(value),
      organization_id: provider.organization_id,
      project_id: mapping.project_id,
      service_account_id: mapping.service_account_id,
      provider_id: provider.id,
      mapping_id: mapping.id,
      via: req.mode,
      permissions: toJson(mapping.permissions),
      subject: derived.subject.slice(0, 2048),
      expires_at: nowS + expiresIn,
      created_at: nowS,
    };
    const response: TokenResponse = {
      access_token: value,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: expiresIn,
    };
    const scope = scopeOf(mapping.permissions);
    if (scope !== undefined) response.scope = scope;
    return { response, token };
  }

  /**
   * Provider, candidate mappings and service account of an exchange, cached for a second (wall time) and
   * dropped at once by any configuration change made through this process; another instance's change
   * takes effect here within that second.
   */
  private async snapshot(providerId: string, serviceAccountId: string): Promise<Snapshot> {
    const key = `${providerId}\u0000${serviceAccountId}`;
    const hit = this.snapshots.get(key);
    if (hit && hit.generation === this.generation && performance.now() - hit.at < CONFIG_CACHE_MS) return hit.snap;
    const generation = this.generation;
    const db = this.ctx.store.db;
    const provider = await store.findProvider(db, providerId);
    const candidates = provider ? await store.mappingsFor(db, provider.id, serviceAccountId) : [];
    const sa = candidates.length ? await getServiceAccount(db, serviceAccountId).catch(() => null) : null;
    const snap: Snapshot = {
      provider,
      candidates,
      serviceAccount: sa ? { project_id: sa.project_id, organization_id: sa.organization_id } : null,
    };
    if (this.snapshots.size > 10_000) this.snapshots.clear();
    this.snapshots.set(key, { at: performance.now(), generation, snap });
    return snap;
  }

  private async activeRoots(organizationId: string): Promise<MtlsRoot[]> {
    const hit = this.roots.get(organizationId);
    if (hit && hit.generation === this.generation && performance.now() - hit.at < CONFIG_CACHE_MS) return hit.roots;
    const generation = this.generation;
    const roots = await store.activeRoots(this.ctx.store.db, organizationId);
    if (this.roots.size > 10_000) this.roots.clear();
    this.roots.set(organizationId, { at: performance.now(), generation, roots });
    return roots;
  }

  /** Drops cached configuration (called by every configuration change). */
  invalidate(): void {
    this.generation++;
  }

  private jwtProvider(p: Provider) {
    return {
      issuer: p.issuer!,
      audiences: p.audiences ?? [],
      algorithms: p.algorithms ?? [],
      spiffeTrustDomain: p.spiffe_trust_domain,
      keys: { cacheKey: `${p.id}:${p.version}`, jwksUrl: p.jwks_url, jwksInline: p.jwks },
    };
  }

  private expressions(p: Provider): CompiledExpressions {
    const vendor = this.ctx.settings.vendor;
    const key = `${p.id}:${p.version}:${vendor}`;
    let c = this.compiled.get(key);
    if (!c) {
      // Stored expressions were checked when saved; a vendor change since then can make them unusable.
      try {
        c = compileExpressions({ attribute_condition: p.attribute_condition, attribute_mapping: p.attribute_mapping }, vendor);
      } catch {
        throw new MappingResolutionFailed(
          'transformation_failed',
          `The attribute mapping of identity provider '${p.id}' is not usable; fix its configuration.`,
        );
      }
      if (this.compiled.size > 1000) this.compiled.clear();
      this.compiled.set(key, c);
    }
    return c;
  }

  private trusted(r: MtlsRoot): TrustedRoot {
    const key = `${r.id}:${r.fingerprint_sha256}:${JSON.stringify(r.admission)}:${r.project_id}`;
    let t = this.parsedRoots.get(key);
    if (!t) {
      t = parseRoot({ id: r.id, pem: r.certificate, projectId: r.project_id, admission: r.admission });
      if (this.parsedRoots.size > 1000) this.parsedRoots.clear();
      this.parsedRoots.set(key, t);
    }
    return t;
  }

  /**
   * Verifies a client certificate presented on the mTLS API listener against the active roots of an
   * organization (for X.509-minted tokens). Throws CertificateVerificationFailed.
   */
  async verifyApiClient(chain: Buffer[], organizationId: string, projectId: string): Promise<VerifiedClientCertificate> {
    const roots = (await this.activeRoots(organizationId)).filter((r) => r.project_id === null || r.project_id === projectId);
    return verifyClientChain(
      chain,
      roots.map((r) => this.trusted(r)),
      this.ctx.clock.now(),
    );
  }

  /** Looks a minted token up; null when `token` is not one of ours. Throws 401 for expired or revoked tokens. */
  async lookupToken(token: string): Promise<{ principal: PlatformPrincipal; via: ExchangeMode } | null> {
    if (!token.startsWith(TOKEN_PREFIX)) return null;
    const row = await store.findTokenByHash(this.ctx.store.db, hashSecret(token));
    if (!row) return null;
    if (Number(row.expires_at) <= this.ctx.clock.nowSeconds()) {
      throw new ApiError('authentication_error', 'The access token has expired; exchange a fresh subject token.', {
        code: 'token_expired',
      });
    }
    const revoked = () =>
      new ApiError('authentication_error', 'The access token has been revoked (its identity mapping or service account changed).', {
        code: 'token_revoked',
      });
    // Disabling or deleting the provider or mapping marks its tokens revoked, for good (service.ts).
    if (row.revoked_at !== null) throw revoked();
    // The configuration as it is now holds too (a deleted service account has no marks to leave).
    const snap = await this.snapshot(row.provider_id, row.service_account_id);
    const mapping = snap.candidates.find((m) => m.id === row.mapping_id);
    if (!mapping?.enabled || !snap.provider?.enabled || !snap.serviceAccount) throw revoked();
    return {
      via: row.via,
      principal: {
        kind: 'platform',
        organizationId: row.organization_id,
        projectId: row.project_id,
        credentialId: row.id,
        credentialType: 'workload_token',
        serviceAccountId: row.service_account_id,
        permissions: fromJson<Permissions>(row.permissions),
        via: row.via,
      },
    };
  }

  private record(
    a: AuditDraft,
    outcome: { outcome: 'issued'; tokenId: string } | { outcome: 'refused'; error: ExchangeError },
    token: NewToken | null = null,
  ): Promise<void> {
    const err = outcome.outcome === 'refused' ? outcome.error : null;
    const exchange = {
      id: newId('wxchg', this.ctx.clock),
      organization_id: a.organizationId,
      provider_id: a.providerId,
      mapping_id: a.mappingId,
      service_account_id: a.serviceAccountId,
      subject: a.subject?.slice(0, 512) ?? null,
      via: a.via,
      outcome: outcome.outcome,
      error: err?.code ?? null,
      category: err?.category ?? null,
      reason: err?.reason ?? null,
      token_id: outcome.outcome === 'issued' ? outcome.tokenId : null,
      certificate_sha256: a.certificateSha256,
      client_ip: a.clientIp,
      created_at: this.ctx.clock.nowSeconds(),
    };
    return this.commits({ token, exchange });
  }

  /** Standin clock, ms. */
  now(): number {
    return this.ctx.clock.now();
  }

  clearCaches(): void {
    this.invalidate();
    this.snapshots.clear();
    this.roots.clear();
    this.jwks.clear();
    this.compiled.clear();
    this.parsedRoots.clear();
  }
}

/** Exactly one enabled mapping of the requested service account must match the credential's attributes. */
export function resolveMapping(
  candidates: Mapping[],
  derived: ReturnType<typeof evaluateExpressions>,
  assertion: Record<string, unknown>,
  vendor: string,
  serviceAccountId: string,
): Mapping {
  if (candidates.length === 0)
    throw new MappingResolutionFailed('no_mapping', `No mapping of this identity provider grants service account '${serviceAccountId}'.`);
  const enabled = candidates.filter((m) => m.enabled);
  if (enabled.length === 0)
    throw new MappingResolutionFailed('mapping_disabled', `The mapping for service account '${serviceAccountId}' is disabled.`);
  const matching = enabled.filter((m) => matchesAttributes(m.attribute_match, derived, assertion, vendor));
  if (matching.length === 0)
    throw new MappingResolutionFailed(
      'attributes_mismatch',
      `The credential's attributes match no enabled mapping for service account '${serviceAccountId}'.`,
    );
  if (matching.length > 1) {
    throw new MappingResolutionFailed(
      'ambiguous',
      `The credential matches ${matching.length} enabled mappings for service account '${serviceAccountId}'; exactly one must match.`,
    );
  }
  return matching[0];
}
