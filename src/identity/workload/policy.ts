import type { BlockList } from 'node:net';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { bearerOf, type Policy, type PlatformPrincipal } from '../../core/auth.js';
import type { App, Ctx } from '../../core/module.js';
import { routePathOf } from '../../core/route-path.js';
import { ApiError, forbidden } from '../../core/errors.js';
import { getServiceAccount } from '../service.js';
import { CertificateVerificationFailed } from './errors.js';
import { TOKEN_PREFIX, type WorkloadIdentity } from './exchange.js';
import type { MtlsListeners } from './listeners.js';
import { allowlistOf, getAllowlist } from './service.js';

/**
 * The permission model every platform credential is held to (API keys, service account keys, workload
 * tokens): per-group levels (checked by the core), service account roles, project IP allowlists, and the
 * endpoints closed to workload identity tokens (authentication rule 6).
 */

/**
 * Endpoints of `/v1` that refuse workload identity tokens (rule 6), as `METHOD route-url`; the Admin API
 * refuses them too, by a rule of the admin guard (module.ts).
 */
export const CLOSED_TO_WORKLOAD_TOKENS = new Set(['DELETE /v1/models/:model', 'POST /v1/images/request_audit']);

const routeOf = (request: FastifyRequest) => `${request.method} ${routePathOf(request)}`;
const refusal = (request: FastifyRequest) =>
  forbidden(
    `Workload identity tokens are not accepted by ${routeOf(request).replace(':model', '{id}')}; use an API key.`,
    'workload_token_not_allowed',
  );

/** Refuses workload tokens on the endpoints of rule 6 (the front door holds every /v1 route to it). */
export const workloadEndpointPolicy: Policy = (principal, request) => {
  if (principal.credentialType === 'workload_token' && CLOSED_TO_WORKLOAD_TOKENS.has(routeOf(request))) throw refusal(request);
};

/**
 * The same refusal as an onRequest hook of the closed routes, before the body is read and validated (a
 * workload token gets its 403 whatever it sends), should the route's need or the policy ever go. It runs
 * after the front door, which has authenticated the bearer already: a `wit_` bearer here is a valid
 * workload token.
 */
const refuseWorkloadTokens: onRequestHookHandler = (request: FastifyRequest, _reply: FastifyReply, done) => {
  done(bearerOf(request)?.startsWith(TOKEN_PREFIX) ? refusal(request) : undefined);
};

/**
 * Puts `refuseWorkloadTokens` in front of each closed route that is registered after this call (the
 * module list has the workload module before the areas that own them). Should an area register one
 * earlier, the start fails rather than leave the endpoint open.
 */
export function closeEndpointsToWorkloadTokens(app: App): void {
  const guarded = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      const key = `${method} ${route.url}`;
      if (!CLOSED_TO_WORKLOAD_TOKENS.has(key)) continue;
      route.onRequest = [...(route.onRequest ? [route.onRequest].flat() : []), refuseWorkloadTokens];
      guarded.add(key);
    }
  });
  app.addHook('onReady', async () => {
    for (const key of CLOSED_TO_WORKLOAD_TOKENS) {
      const [method, url] = key.split(' ');
      if (!guarded.has(key) && app.hasRoute({ method, url })) {
        throw new Error(`${key} was registered before the workload identity module: list its module after workload_identity`);
      }
    }
  });
}

/** Role levels of service accounts in their project: readers may only read. */
export function rolePolicy(ctx: Ctx): Policy {
  return async (principal, _request, need) => {
    if (!principal.serviceAccountId || need.access !== 'write') return;
    const sa = await getServiceAccount(ctx.store.db, principal.serviceAccountId).catch(() => null);
    if (!sa)
      throw new ApiError('authentication_error', 'The service account of this credential no longer exists.', { code: 'invalid_api_key' });
    if (sa.role === 'reader') {
      throw forbidden(
        `Service account role 'reader' allows read access only. Missing: ${need.group}.write (needs role 'member' or 'owner').`,
        'insufficient_role',
      );
    }
  };
}

/** The allowlists a process read lately, by project: `at` (Standin clock, ms), `list` null when none is set. */
export type AllowlistCache = Map<string, { at: number; list: BlockList | null }>;

/** A project's IP allowlist, when set, admits requests only from those addresses, whatever the credential. */
export function ipAllowlistPolicy(ctx: Ctx): Policy {
  return async (principal, request) => {
    const cache = ctx.services.workloadIdentity.allowlists;
    const now = ctx.clock.now();
    let entry = cache.get(principal.projectId);
    // A short cache keeps the check off the database on hot paths; changes apply within a second.
    if (!entry || now - entry.at > 1_000) {
      const cidrs = await getAllowlist(ctx.store.db, principal.projectId);
      entry = { at: now, list: cidrs.length ? allowlistOf(cidrs) : null };
      if (cache.size >= 10_000) cache.clear();
      cache.set(principal.projectId, entry);
    }
    if (!entry.list) return;
    const ip = request.ip.startsWith('::ffff:') ? request.ip.slice(7) : request.ip;
    const family = ip.includes(':') ? 'ipv6' : 'ipv4';
    if (!entry.list.check(ip, family)) {
      throw forbidden(
        `Requests from ${ip} are not allowed: the address is not in the IP allowlist of project '${principal.projectId}'.`,
        'ip_not_allowed',
      );
    }
  };
}

/** Until when (Standin clock, ms) a connection's client certificate stands verified, by `organization:project`. */
export type VerifiedConnections = WeakMap<object, Map<string, number>>;

/**
 * The bearer resolver of minted tokens. A token minted by X.509 exchange is accepted only on the mTLS API
 * listener, with a client certificate that an active root of the token's organization (and project) accepts.
 */
export function workloadResolver(wi: WorkloadIdentity, listeners: MtlsListeners, verified: VerifiedConnections) {
  return async (token: string, request: FastifyRequest): Promise<PlatformPrincipal | null> => {
    const found = await wi.lookupToken(token);
    if (!found) return null;
    const p = found.principal;
    if (found.via === 'x509') {
      const socket = request.raw.socket;
      if (listeners.kindOf(socket) !== 'api') {
        throw new ApiError(
          'authentication_error',
          'A token minted by X.509 exchange is accepted only on the mutual TLS API listener, together with a client certificate.',
          {
            code: 'mtls_required',
          },
        );
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
            throw new ApiError('authentication_error', `The client certificate is not accepted: ${err.message}`, {
              code: 'invalid_client_certificate',
            });
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
