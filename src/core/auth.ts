import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError, forbidden, invalid, unauthorized } from './errors.js';
import { lenientPath, routeConfigOf, routerPath } from './route-path.js';
import { sameSecret } from './secrets.js';

export type Access = 'read' | 'write';
export type Level = 'none' | 'read' | 'write';
/** Per resource group (the groups the /v1 routes need: models, assistants, threads, …) a level; null means all. */
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

/** The operator, holding the admin key of the control plane (`/admin/v1`). */
export interface AdminPrincipal {
  kind: 'admin';
  noCache?: boolean;
}

export type Principal = PlatformPrincipal | AdsPrincipal | AdminPrincipal;

/** A rule that refuses a credential on the control plane outright, before it is compared with the admin key. */
export type AdminRule = (credential: string) => ApiError | undefined;
/**
 * Recognises a signed-in browser (the dashboard's session cookie) on a request that carries no admin key:
 * true when it holds a valid session; throws ApiError to refuse it (a cross-site write).
 */
export type AdminSession = (request: FastifyRequest) => boolean;

export interface Need {
  /** Resource group, e.g. `threads`. */
  group: string;
  access: Access;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * What a `/v1` route needs (every one declares it): the front door authorizes the request for it
     * before the body is read or validated, so a 403 comes before any 400 or 404.
     */
    need?: Need;
    /**
     * The credential the route needs, set from its template as it is registered (`Auth.classify`):
     * `open`, `any` (any platform or ads key) or the one kind. The front door reads it, never the URL.
     */
    protection?: Protection;
  }
}

/** What a route needs before anything reads the request: nothing, any credential, or one kind. */
export type Protection = 'open' | 'any' | Principal['kind'];

/** The route `config` of a `/v1` route that needs `access` to `group`: `{ config: needs('files', 'read') }`. */
export const needs = (group: string, access: Access): { need: Need } => ({ need: { group, access } });

/** Turns a bearer credential into a principal, or null when it is not this resolver's kind. */
export type BearerResolver = (token: string, request: FastifyRequest) => Promise<Principal | null>;
/** A rule every platform request is held to (IP allowlists, endpoints closed to workload tokens …); throws ApiError to refuse. */
export type Policy = (principal: PlatformPrincipal, request: FastifyRequest, need: Need) => Promise<void> | void;

export interface Auth {
  addResolver(resolver: BearerResolver): void;
  /**
   * Puts every URL under `prefix` behind a credential (of `kind`, when given). The front door (`gate`)
   * authenticates such requests before anything else reads them.
   */
  protect(prefix: string, kind?: Principal['kind']): void;
  /**
   * Sets `config.protection` of a route being registered, from its template (the onRoute hook): the front
   * door then decides on the route that will run, whatever the spelling of the URL that reached it.
   */
  classify(route: RouteOptions): void;
  /**
   * The front door: authenticates a request for a protected route (for a request no route matched: under a
   * protected prefix of the path as the router reads it), or refuses it with a 401, then
   * holds it to the policies and permissions of its route's `need` (a 403), all before validation, so a
   * request without a valid key learns nothing about the API and one without the permission nothing about
   * the body it sent. Calls `done` synchronously when the key was resolved recently and no policy waits.
   */
  gate(request: FastifyRequest, done: (err?: Error) => void): void;
  /** Drops remembered credentials (after a key, token or mapping is revoked). */
  forget(): void;
  addPolicy(policy: Policy): void;
  /**
   * The principal of a `/v1` request, which the front door has authenticated and authorized for its
   * route's `need` (route `config`) before validation.
   */
  principalOf(request: FastifyRequest): PlatformPrincipal;
  /** The ad account of an `/ads/v1` request, which the front door has authenticated. */
  adAccountOf(request: FastifyRequest): string;
  /** Throws 401 unless the request carries the admin key (Authorization: Bearer, or x-admin-key). */
  admin(request: FastifyRequest): AdminPrincipal;
  /** The admin key in force. */
  adminKey(): string;
  setAdminKey(key: string): void;
  refuseAdmin(rule: AdminRule): void;
  /** Lets a browser session stand for the admin key (the dashboard's cookie). */
  addAdminSession(session: AdminSession): void;
  /** Records a resource group a `/v1` route needs (the server, as routes are added). */
  declareGroup(group: string): void;
  /** The resource groups of the `/v1` routes, sorted: what permissions may name. */
  groups(): string[];
  /** Refuses (400, naming `param.<group>`) permissions that name a group no route needs: a typo would deny silently. */
  checkPermissions(permissions: Permissions | null | undefined, param: string): void;
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
  const protectedPrefixes: { prefix: string; kind: Principal['kind'] | null }[] = [];
  const adminRules: AdminRule[] = [];
  const adminSessions: AdminSession[] = [];
  let adminKey = '';
  const ADMIN: AdminPrincipal = { kind: 'admin' };
  const groups = new Set<string>();
  const sortedGroups = () => [...groups].sort();

  // The admin key is checked synchronously, on every request: it is one constant-time comparison.
  function admin(request: FastifyRequest): AdminPrincipal {
    const given = (request.headers['x-admin-key'] as string | undefined) ?? bearerOf(request);
    if (!given && adminSessions.some((session) => session(request))) return ((request as AuthFields).principal = ADMIN);
    if (given) {
      for (const rule of adminRules) {
        const refused = rule(given);
        if (refused) throw refused;
      }
    }
    if (!given || !adminKey || !sameSecret(given, adminKey)) {
      throw new ApiError('authentication_error', 'The control plane needs the admin key: "Authorization: Bearer <ADMIN_KEY>".', {
        code: 'invalid_admin_key',
      });
    }
    (request as AuthFields).principal = ADMIN;
    return ADMIN;
  }

  // Resolved keys are remembered for a second, by Authorization header: a key lookup per request is most
  // of a small read's cost.
  // Revoking a key (or a mapping) calls forget(); other instances see it within RECENT_MS.
  const recent = new Map<string, { principal: Principal; until: number }>();
  const RECENT_MS = 1000;
  const RECENT_MAX = 10_000;

  async function resolveUncached(token: string, request: FastifyRequest): Promise<Principal> {
    for (const r of resolvers) {
      const p = await r(token, request);
      if (p) {
        // Principals bound to the connection (X.509-minted tokens) are never reused across requests.
        if (!p.noCache) {
          if (recent.size >= RECENT_MAX) recent.clear();
          recent.set(request.headers.authorization as string, { principal: p, until: performance.now() + RECENT_MS });
        }
        return p;
      }
    }
    throw unauthorized('Incorrect API key provided.');
  }

  // The request's principal when it is known without waiting: resolved already, or its key remembered
  // (by the whole Authorization header, which saves parsing it).
  const known = (request: FastifyRequest): Principal | undefined => {
    const r = request as AuthFields;
    if (r.principal) return r.principal;
    const header = request.headers.authorization;
    const hit = typeof header === 'string' ? recent.get(header) : undefined;
    return hit && hit.until > performance.now() ? (r.principal = hit.principal) : undefined;
  };

  // Resolved once per request and remembered on it (the fields of `declareAuthFields`).
  const resolve = (request: FastifyRequest): Promise<Principal> => {
    const p = known(request);
    if (p) return Promise.resolve(p);
    const token = bearerOf(request);
    if (!token) return Promise.reject(unauthorized('You didn\'t provide an API key. Pass it as "Authorization: Bearer <API_KEY>".'));
    const r = request as AuthFields;
    return (r.authentication ??= resolveUncached(token, request).then((principal) => (r.principal = principal)));
  };

  // Compared with a route template or a router-decoded path only (never the raw URL: `/%61dmin/…`).
  const protectionOf = (path: string): Protection => {
    for (const e of protectedPrefixes) if (path.startsWith(e.prefix)) return e.kind ?? 'any';
    return 'open';
  };
  // Once a route is classified, a later prefix would leave it open: refused at start rather than silently.
  let classified = false;
  // A request no route matched: its path as the router read it. One it cannot read runs nothing, but
  // still needs a key under a protected prefix of its (leniently decoded) spelling: 401 before the router's 400.
  const unmatchedProtection = (url: string): Protection => protectionOf(routerPath(url) ?? lenientPath(url));
  const wrongKind = (kind: Principal['kind']) =>
    kind === 'ads'
      ? unauthorized('A platform API key is not valid on the ads API; use an ads API key of the ad account.')
      : unauthorized('An ads API key is not valid on the platform API.');
  const refusal = (p: Principal, kind: Protection) =>
    kind !== 'any' && p.kind !== kind ? wrongKind(kind as Principal['kind']) : undefined;
  const missingScope = (p: PlatformPrincipal, need: Need) =>
    allows(p.permissions, need)
      ? undefined
      : forbidden(`You have insufficient permissions for this operation. Missing scope: ${need.group}.${need.access}.`, 'missing_scope');

  // The policies in turn, then the permission levels. A policy that answers synchronously costs no
  // promise (the workload endpoint rule; the role and IP allowlist policies are async functions today).
  const authorize = (p: Principal, request: FastifyRequest, need: Need, done: (err?: Error) => void) => {
    if (p.kind !== 'platform') return done(wrongKind('platform'));
    let i = 0;
    const next = (): void => {
      while (i < policies.length) {
        let pending: Promise<void> | void;
        try {
          pending = policies[i++](p, request, need);
        } catch (err) {
          return done(err as Error);
        }
        if (pending) return void pending.then(next, done);
      }
      done(missingScope(p, need));
    };
    next();
  };
  const admit = (request: FastifyRequest, p: Principal, kind: Protection, need: Need | undefined, done: (err?: Error) => void) => {
    const refused = refusal(p, kind);
    if (refused) return done(refused);
    if (!need) return done();
    authorize(p, request, need, done);
  };

  return {
    addResolver: (r) => void resolvers.push(r),
    addPolicy: (p) => void policies.push(p),
    protect(prefix, kind) {
      if (classified) throw new Error(`auth.protect('${prefix}') after routes were registered: they would not be behind it`);
      protectedPrefixes.push({ prefix, kind: kind ?? null });
    },
    classify(route) {
      classified = true;
      route.config = { ...route.config, protection: protectionOf(route.url) };
    },
    gate(request, done) {
      // The route's config (undefined when no route matched) gives both the protection and the need.
      const config = routeConfigOf(request);
      const kind = config?.protection ?? (config ? protectionOf(config.url ?? '') : unmatchedProtection(request.url));
      if (kind === 'open') return done();
      if (kind === 'admin') {
        try {
          admin(request);
        } catch (err) {
          return done(err as Error);
        }
        return done();
      }
      const p = known(request);
      const need = config?.need;
      if (p) return admit(request, p, kind, need, done);
      resolve(request).then((principal) => admit(request, principal, kind, need, done), done);
    },
    forget: () => recent.clear(),
    principalOf(request) {
      const p = (request as AuthFields).principal;
      if (p?.kind !== 'platform') throw wrongKind('platform');
      return p;
    },
    adAccountOf(request) {
      const p = (request as AuthFields).principal;
      if (p?.kind !== 'ads') throw wrongKind('ads');
      return p.adAccountId;
    },
    admin,
    adminKey: () => adminKey,
    setAdminKey: (key) => {
      adminKey = key;
    },
    refuseAdmin: (rule) => void adminRules.push(rule),
    addAdminSession: (session) => void adminSessions.push(session),
    declareGroup: (group) => void groups.add(group),
    groups: sortedGroups,
    checkPermissions(permissions, param) {
      for (const group of Object.keys(permissions ?? {}))
        if (!groups.has(group))
          throw invalid(
            `'${group}' is not a permission group; the groups are: ${sortedGroups().join(', ')}.`,
            `${param}.${group}`,
            'unknown_permission_group',
          );
    },
  };
}

/** `principal`: whom the request's credential names, once resolved; `authentication`: that resolution while it runs. */
type AuthFields = FastifyRequest & { authentication: Promise<Principal> | null; principal: Principal | null };

/**
 * Declares the fields authentication sets on a request, so every request object has one shape from the
 * start (adding properties per request costs hidden-class transitions on the hot path).
 */
export function declareAuthFields(app: FastifyInstance): void {
  app.decorateRequest('authentication', null);
  app.decorateRequest('principal', null);
}
