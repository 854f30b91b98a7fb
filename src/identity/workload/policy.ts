import type { FastifyRequest } from 'fastify';
import type { Policy, PlatformPrincipal } from '../../core/auth.js';
import type { Ctx } from '../../core/module.js';
import { ApiError, forbidden } from '../../core/errors.js';
import { getServiceAccount } from '../service.js';
import { CertificateVerificationFailed } from './errors.js';
import type { WorkloadIdentity } from './exchange.js';
import type { MtlsListeners } from './listeners.js';
import { allowlistOf } from './service.js';
import * as store from './store.js';

/**
 * The permission model every platform credential is held to (API keys, service account keys, workload
 * tokens): per-group levels (checked by the core), service account roles, project IP allowlists, and the
 * endpoints closed to workload identity tokens (authentication rule 6).
 */

/** Endpoints that refuse workload identity tokens, as `METHOD route-url`. */
export const CLOSED_TO_WORKLOAD_TOKENS = new Set(['DELETE /v1/models/:model', 'POST /v1/images/request_audit']);

const routeOf = (request: FastifyRequest) => `${request.method} ${request.routeOptions?.url ?? request.url.split('?')[0]}`;

/** Refuses workload tokens on the endpoints of rule 6. */
export const workloadEndpointPolicy: Policy = (principal, request) => {
  if (principal.credentialType === 'workload_token' && CLOSED_TO_WORKLOAD_TOKENS.has(routeOf(request))) {
    throw forbidden(`Workload identity tokens are not accepted by ${routeOf(request).replace(':model', '{id}')}; use an API key.`, 'workload_token_not_allowed');
  }
};

/** Role levels of service accounts in their project: readers may only read. */
export function rolePolicy(ctx: Ctx): Policy {
  return async (principal, _request, need) => {
    if (!principal.serviceAccountId || need.access !== 'write') return;
    const sa = await getServiceAccount(ctx.store.db, principal.serviceAccountId).catch(() => null);
    if (!sa) throw new ApiError('authentication_error', 'The service account of this credential no longer exists.', { code: 'invalid_api_key' });
    if (sa.role === 'reader') {
      throw forbidden(`Service account role 'reader' allows read access only. Missing: ${need.group}.write (needs role 'member' or 'owner').`, 'insufficient_role');
    }
  };
}

/** A project's IP allowlist, when set, admits requests only from those addresses, whatever the credential. */
export function ipAllowlistPolicy(ctx: Ctx): Policy {
  const cache = new Map<string, { at: number; list: ReturnType<typeof allowlistOf> | null }>();
  return async (principal, request) => {
    const now = ctx.clock.now();
    let entry = cache.get(principal.projectId);
    // A short cache keeps the check off the database on hot paths; changes apply within a second.
    if (!entry || now - entry.at > 1_000) {
      const cidrs = await store.getAllowlist(ctx.store.db, principal.projectId);
      entry = { at: now, list: cidrs.length ? allowlistOf(cidrs) : null };
      cache.set(principal.projectId, entry);
    }
    if (!entry.list) return;
    const ip = request.ip.startsWith('::ffff:') ? request.ip.slice(7) : request.ip;
    const family = ip.includes(':') ? 'ipv6' : 'ipv4';
    if (!entry.list.check(ip, family)) {
      throw forbidden(`Requests from ${ip} are not allowed: the address is not in the IP allowlist of project '${principal.projectId}'.`, 'ip_not_allowed');
    }
  };
}

/**
 * The bearer resolver of minted tokens. A token minted by X.509 exchange is accepted only on the mTLS API
 * listener, with a client certificate that an active root of the token's organization (and project) accepts.
 */
export function workloadResolver(wi: WorkloadIdentity, listeners: MtlsListeners) {
  const verified = new WeakMap<object, Map<string, number>>();
  return async (token: string, request: FastifyRequest): Promise<PlatformPrincipal | null> => {
    const found = await wi.lookupToken(token);
    if (!found) return null;
    const p = found.principal;
    if (found.via === 'x509') {
      const socket = request.raw.socket;
      if (listeners.kindOf(socket) !== 'api') {
        throw new ApiError('authentication_error', 'A token minted by X.509 exchange is accepted only on the mutual TLS API listener, together with a client certificate.', {
          code: 'mtls_required',
        });
      }
      const key = `${p.organizationId}:${p.projectId}`;
      const byKey = verified.get(socket) ?? new Map<string, number>();
      const until = byKey.get(key);
      // One verification per connection and organization, redone every 30 s so retired roots take effect.
      if (until === undefined || until < wi.now()) {
        try {
          await wi.verifyApiClient(listeners.chainOf(socket), p.organizationId, p.projectId);
        } catch (err) {
          if (err instanceof CertificateVerificationFailed) {
            throw new ApiError('authentication_error', `The client certificate is not accepted: ${err.message}`, { code: 'invalid_client_certificate' });
          }
          throw err;
        }
        byKey.set(key, wi.now() + 30_000);
        verified.set(socket, byKey);
      }
    }
    // Workload tokens expire on the Standin clock and may be bound to the connection: check every request.
    return { ...p, noCache: true };
  };
}
