import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from './errors.js';

export type Access = 'read' | 'write';
export type Level = 'none' | 'read' | 'write';
/** Per resource group (models, assistants, threads, responses, files, webhooks, …) a level; null means all. */
export type Permissions = Record<string, Level>;

/** Who a `/v1` request acts for. */
export interface PlatformPrincipal {
  kind: 'platform';
  organizationId: string;
  projectId: string;
  credentialId: string;
  /** `api_key`: a project key; `service_account_key`: a service account's key; `workload_token`: minted by /oauth/token. */
  credentialType: 'api_key' | 'service_account_key' | 'workload_token';
  serviceAccountId: string | null;
  permissions: Permissions | null;
  /** For workload tokens: how the identity was proven. */
  via?: 'jwt' | 'x509';
  /** Resolved from the request's connection too: not to be remembered across requests. */
  noCache?: boolean;
}

/** Who an `/ads/v1` request acts for: one ad account. */
export interface AdsPrincipal {
  kind: 'ads';
  adAccountId: string;
  credentialId: string;
  noCache?: boolean;
}

export type Principal = PlatformPrincipal | AdsPrincipal;

export interface Need {
  /** Resource group, e.g. `threads`. */
  group: string;
  access: Access;
}

/** Turns a bearer credential into a principal, or null when it is not this resolver's kind. */
export type BearerResolver = (token: string, request: FastifyRequest) => Promise<Principal | null>;
/** A rule every platform request is held to (IP allowlists, endpoints closed to workload tokens …); throws ApiError to refuse. */
export type Policy = (principal: PlatformPrincipal, request: FastifyRequest, need: Need) => Promise<void> | void;

export interface Auth {
  addResolver(resolver: BearerResolver): void;
  /** Resolves the request's bearer once (cached on the request); throws 401. */
  authenticate(request: FastifyRequest): Promise<Principal>;
  /** Drops remembered credentials (after a key, token or mapping is revoked). */
  forget(): void;
  addPolicy(policy: Policy): void;
  /** Authenticates a `/v1` request and checks it may do `need`. */
  platform(request: FastifyRequest, need: Need): Promise<PlatformPrincipal>;
  /** Authenticates an `/ads/v1` request. */
  ads(request: FastifyRequest): Promise<AdsPrincipal>;
}

export function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/** Whether `permissions` allow `need`. */
export function allows(permissions: Permissions | null, need: Need): boolean {
  if (!permissions) return true;
  const level = permissions[need.group] ?? 'none';
  return level === 'write' || (level === 'read' && need.access === 'read');
}

export function createAuth(): Auth {
  const resolvers: BearerResolver[] = [];
  const policies: Policy[] = [];

  // Resolved once per request, remembered on the request (a property declared by `declareAuthFields`).
  const resolve = (request: FastifyRequest): Promise<Principal> => {
    const r = request as AuthFields;
    return (r.authentication ??= resolveUncached(request));
  };

  // Resolved keys are remembered for a second: a key lookup per request is most of a small read's cost.
  // Revoking a key (or a mapping) calls forget(); other instances see it within RECENT_MS.
  const recent = new Map<string, { principal: Principal; until: number }>();
  const RECENT_MS = 1000;
  const RECENT_MAX = 10_000;

  async function resolveUncached(request: FastifyRequest): Promise<Principal> {
    const token = bearerOf(request);
    if (!token) throw unauthorized('You didn\'t provide an API key. Pass it as "Authorization: Bearer <API_KEY>".');
    const now = performance.now();
    const hit = recent.get(token);
    if (hit && hit.until > now) return hit.principal;
    for (const r of resolvers) {
      const p = await r(token, request);
      if (p) {
        // Principals bound to the connection (X.509-minted tokens) are never reused across requests.
        if (!p.noCache) {
          if (recent.size >= RECENT_MAX) recent.clear();
          recent.set(token, { principal: p, until: now + RECENT_MS });
        }
        return p;
      }
    }
    throw unauthorized('Incorrect API key provided.');
  }

  return {
    addResolver: (r) => void resolvers.push(r),
    addPolicy: (p) => void policies.push(p),
    authenticate: resolve,
    forget: () => recent.clear(),
    async platform(request, need) {
      const p = await resolve(request);
      if (p.kind !== 'platform') throw unauthorized('An ads API key is not valid on the platform API.');
      for (const policy of policies) await policy(p, request, need);
      if (!allows(p.permissions, need)) {
        throw forbidden(`You have insufficient permissions for this operation. Missing scope: ${need.group}.${need.access}.`, 'missing_scope');
      }
      (request as AuthFields).principal = p;
      return p;
    },
    async ads(request) {
      const p = await resolve(request);
      if (p.kind !== 'ads') throw unauthorized('A platform API key is not valid on the ads API; use an ads API key of the ad account.');
      (request as AuthFields).principal = p;
      return p;
    },
  };
}

type AuthFields = FastifyRequest & { authentication: Promise<Principal> | null; principal: Principal | null };

/**
 * Declares the fields authentication sets on a request, so every request object has one shape from the
 * start (adding properties per request costs hidden-class transitions on the hot path).
 */
export function declareAuthFields(app: FastifyInstance): void {
  app.decorateRequest('authentication', null);
  app.decorateRequest('principal', null);
}
