import type { FastifyContextConfig, FastifyRequest } from 'fastify';

/**
 * The path of a request URL as Fastify's router (find-my-way, with the app's `routerOptions`) reads it:
 * the path of an absolute-form target (`http://host/…`), cut at `?` or `#`, percent-decoded as `decodeURI`
 * does with `%25` kept (reserved characters such as `%2F` stay encoded, so they never become a separator),
 * the trailing slash dropped (`ignoreTrailingSlash`). Null when the router cannot read it either (bad
 * percent-encoding, a fragment after an absolute form's host): no route runs for such a URL.
 *
 * Every decision about a request that no route matched is made on this, never on the raw URL: an encoded
 * letter (`/%61dmin/…`) or an absolute-form request line must not change the answer (docs/security.md).
 */
export function routerPath(url: string): string | null {
  let path = url;
  if (path.charCodeAt(0) !== 47 /* / */) {
    const absolute = pathOfAbsolute(path);
    if (absolute === null) return null;
    path = absolute;
  }
  const end = endOfPath(path);
  if (end !== path.length) path = path.slice(0, end);
  if (path.includes('%')) {
    try {
      path = decodeURI(path.replace(/%25/g, '%2525'));
    } catch {
      return null;
    }
  }
  return path.length > 1 && path.charCodeAt(path.length - 1) === 47 ? path.slice(0, -1) : path;
}

/**
 * For a URL the router cannot decode (`/%61dmin/v1/%zz`): its path with the escapes of ASCII characters
 * that `decodeURI` would decode undone, to judge which API it was meant for. Nothing runs for such a URL.
 */
export function lenientPath(url: string): string {
  const target = url.charCodeAt(0) === 47 ? url : (pathOfAbsolute(url) ?? url);
  return target.slice(0, endOfPath(target)).replace(/%([0-7][0-9A-Fa-f])/g, (escape, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return RESERVED.includes(c) ? escape : c;
  });
}
/** What `decodeURI` leaves encoded (and `%`, kept as the router keeps `%25`). */
const RESERVED = ';/?:@&=+$,#%';

/** Where the path of a target ends: its first `?` or `#`. */
function endOfPath(path: string): number {
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 63 /* ? */ || c === 35 /* # */) return i;
  }
  return path.length;
}

/** The router's reading of a target that does not start with `/`: an http(s) URL's path (and query), else the target itself. */
function pathOfAbsolute(url: string): string | null {
  const m = /^(https?):\/\/([^/?#]*)/i.exec(url);
  if (!m) return url;
  if (m[2] === '' || url.includes('#', m[0].length)) return null;
  const rest = url.slice(m[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * The path a request was routed by: its route's template (`/v1/files/:file_id`), or for a request no route
 * matched (the 404 handler, the router's own refusals) its path as the router reads it (`routerPath`).
 */
export function routePathOf(request: FastifyRequest): string | null {
  return request.is404 ? routerPath(request.url) : (routeConfigOf(request)?.url ?? null);
}

/** A route's config as Fastify keeps it: the route's own `config`, with its `url` (the template) and `method`. */
export type RouteConfig = FastifyContextConfig & { url?: string; method?: string };

/** The property under which Fastify's request holds its route's context; null: not found, read `routeOptions`. */
let contextKey: symbol | null | undefined;

/**
 * The config of the route a request runs (undefined for a request no route matched): what
 * `request.routeOptions.config` reads, without the object that getter builds at each read (a dozen fields;
 * the front door and the request log each read it on every request). Fastify's route context is found once,
 * by the name of its symbol; without it (another Fastify), the getter is read.
 */
export function routeConfigOf(request: FastifyRequest): RouteConfig | undefined {
  if (contextKey === undefined) contextKey = Object.getOwnPropertySymbols(request).find((s) => s.description === 'fastify.context') ?? null;
  const config = contextKey
    ? (request as unknown as Record<symbol, { config?: RouteConfig } | undefined>)[contextKey]?.config
    : (request.routeOptions.config as RouteConfig | undefined);
  // The 404 handler's context has a config without a url (Fastify's own `is404`).
  return config?.url === undefined ? undefined : config;
}
