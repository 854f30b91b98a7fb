import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Principal } from '../core/auth.js';
import type { Clock } from '../core/clock.js';
import { HEALTH_PATHS } from '../core/health.js';
import { jsonBodyTextOf } from '../core/json-body.js';
import { routeConfigOf } from '../core/route-path.js';
import { redactBody, redactHeaders, redactText, type ExtraSecrets } from './redact.js';

/** One request of the log as lists show it (method, path, status, duration, who), secrets redacted. */
export interface LoggedRequest {
  id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  at: number;
  /** The credential that made it (an API key, service account key, workload token, ads key), `admin`, or null. */
  credential_id: string | null;
  project_id: string | null;
  /** The `model` of the request body, when it named one. */
  model: string | null;
  /** The path template of the route that answered (`/v1/threads/{thread_id}/runs`); null when no route matched. */
  route: string | null;
}

/** A request with what it sent and got back (secrets redacted). */
export interface LoggedRequestDetail extends LoggedRequest {
  request: { headers: Record<string, string>; body: unknown };
  response: { headers: Record<string, string>; body: unknown };
}

/**
 * What the log keeps of a request besides the summary: references, redacted only when someone reads them.
 * The URL too: it is masked (`redactUrl`, regular expressions over the whole URL) the first time a list or
 * a filter reads its path, not in every request (most entries leave the log unread).
 */
interface Entry extends Omit<LoggedRequest, 'path' | 'duration_ms'> {
  url: string;
  /** `duration_ms` in hundredths, an integer: a fraction would be one more object kept per request. */
  duration: number;
  /** `url` masked, once read. */
  path?: string;
  reqHeaders: Record<string, unknown>;
  reqBody: unknown;
  resHeaders: Record<string, unknown>;
  resBody: string | null;
}

export interface RequestFilter {
  /** Part of the path. */
  path?: string;
  /** A status (`429`) or a class (`4xx`). */
  status?: string;
  credential_id?: string;
  /** Unix seconds, inclusive. */
  since?: number;
  until?: number;
  /** Only requests newer than this one (live views poll with it). */
  after?: string;
  limit?: number;
}

const SECRET_PARAMS = /([?&](?:key|api_key|token|access_token|secret|subject_token|client_secret|sig)=)[^&]*/gi;

const redactSpelled = (url: string, extra: readonly string[]) =>
  redactText(url.includes('=') ? url.replace(SECRET_PARAMS, '$1[redacted]') : url, extra);

/**
 * Removes secret-named query values from a URL, and anything shaped like a secret anywhere in it, also
 * when spelled with percent-escapes (`sk%2Dproj-…`, `api%5Fkey=`): such a URL is then shown decoded, masked.
 */
export function redactUrl(url: string, extra: readonly string[] = []): string {
  const out = redactSpelled(url, extra);
  if (!url.includes('%')) return out;
  let decoded: string;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    return out;
  }
  const masked = redactSpelled(decoded, extra);
  return masked === decoded ? out : masked;
}

/** Bodies larger than this are not kept (the log holds thousands of requests). */
export const MAX_KEPT_BODY = 8192;

/** An entry's path as the log shows it: its URL masked, once. */
const pathOf = (e: Entry): string => (e.path ??= redactUrl(e.url));

const summary = (e: Entry, extra: readonly string[]): LoggedRequest => ({
  id: e.id,
  method: e.method,
  path: pathOf(e),
  status: e.status,
  duration_ms: e.duration / 100,
  at: e.at,
  credential_id: e.credential_id,
  project_id: e.project_id,
  model: e.model === null ? null : redactText(e.model, extra),
  route: e.route,
});

/** Each route's template in the API's spelling, made once (routes are a bounded set: the app's own). */
const templates = new Map<string, string>();

/** A route's template in the API's own spelling: Fastify's `/v1/threads/:thread_id` → `/v1/threads/{thread_id}`. */
export const routeTemplate = (url: string | undefined): string | null => {
  if (url === undefined) return null;
  let template = templates.get(url);
  if (template === undefined) templates.set(url, (template = url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')));
  return template;
};

function statusMatcher(status: string | undefined): (s: number) => boolean {
  if (!status) return () => true;
  const cls = /^([1-5])xx$/i.exec(status);
  if (cls) return (s) => Math.floor(s / 100) === Number(cls[1]);
  return (s) => s === Number(status);
}

export class RequestLog {
  private items: Entry[] = [];
  private next = 0;
  private secrets: ExtraSecrets = () => [];
  constructor(private readonly capacity = 1000) {}

  /** Secrets to mask verbatim in what the log shows, besides those it recognises by shape (the admin key in force). */
  maskAlso(secrets: ExtraSecrets): void {
    this.secrets = secrets;
  }

  add(item: Entry): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Newest first, until `visit` returns false. */
  private walk(visit: (e: Entry) => boolean): void {
    const n = this.items.length;
    const newest = n < this.capacity ? n - 1 : (this.next - 1 + n) % n;
    for (let i = 0; i < n; i++) if (!visit(this.items[(newest - i + n) % n])) return;
  }

  /** Newest first. */
  recent(limit = 100): LoggedRequest[] {
    return this.query({ limit });
  }

  /** Newest first, the requests that match every given filter. */
  query(f: RequestFilter): LoggedRequest[] {
    const out: LoggedRequest[] = [];
    const limit = f.limit ?? 100;
    const status = statusMatcher(f.status);
    const extra = this.secrets();
    this.walk((e) => {
      if (e.id === f.after) return false;
      if (f.until !== undefined && e.at > f.until) return true;
      // Not a stop: the Standin clock can be put back (reset), so times are not ordered in the log.
      if (f.since !== undefined && e.at < f.since) return true;
      if (f.path && !pathOf(e).includes(f.path)) return true;
      if (f.credential_id && e.credential_id !== f.credential_id) return true;
      if (!status(e.status)) return true;
      out.push(summary(e, extra));
      return out.length < limit;
    });
    return out;
  }

  /** One request with its headers and bodies, secrets redacted; undefined once it left the log. */
  get(id: string): LoggedRequestDetail | undefined {
    let found: Entry | undefined;
    this.walk((e) => (e.id === id ? ((found = e), false) : true));
    if (!found) return undefined;
    const extra = this.secrets();
    return {
      ...summary(found, extra),
      path: redactText(pathOf(found), extra),
      request: {
        headers: redactHeaders(found.reqHeaders, extra),
        body: found.reqBody === undefined ? null : redactBody(found.reqBody, extra),
      },
      response: {
        headers: redactHeaders(found.resHeaders, extra),
        body: found.resBody === null ? null : redactBody(found.resBody, extra),
      },
    };
  }

  /**
   * Visits the requests at or after `since` (Unix seconds, Standin clock; the whole log is read, as a reset
   * clock leaves times unordered), newest first, with a reader of their reply
   * headers: for views derived from the log (rate-limit use over time).
   */
  each(since: number, visit: (request: LoggedRequest, replyHeader: (name: string) => string | undefined) => void): void {
    const extra = this.secrets();
    this.walk((e) => {
      if (e.at < since) return true;
      const h = e.resHeaders;
      // The summary, not the entry: views derived from the log show what a list shows (secrets masked).
      visit(summary(e, extra), (name) => {
        const v = h[name];
        return v === undefined ? undefined : String(v);
      });
      return true;
    });
  }

  /** How many requests it holds. */
  get size(): number {
    return this.items.length;
  }

  clear(): void {
    this.items = [];
    this.next = 0;
  }
}

/** The symbols under which Fastify's reply keeps its headers and Node's response those set one by one; null: not found. */
let headerKeys: { reply: symbol; raw: symbol } | null | undefined;

/**
 * The headers a finished reply sent, as `reply.getHeaders()` answers them, without its two copies (of
 * Node's headers and Fastify's) when Node holds none of its own (nothing called `setHeader` on the raw
 * response): Fastify's own record of the reply's headers is kept as it is. It is not changed once the
 * reply is sent. The keys are found once, by the names of their symbols; without them, `getHeaders()`.
 */
export function sentHeadersOf(reply: FastifyReply): Record<string, unknown> {
  if (headerKeys === undefined) {
    const named = (o: object, name: string) => Object.getOwnPropertySymbols(o).find((s) => s.description === name);
    const own = named(reply, 'fastify.reply.headers');
    const raw = named(reply.raw, 'kOutHeaders');
    headerKeys = own && raw ? { reply: own, raw } : null;
  }
  if (headerKeys && (reply.raw as unknown as Record<symbol, unknown>)[headerKeys.raw] == null) {
    const own = (reply as unknown as Record<symbol, Record<string, unknown> | undefined>)[headerKeys.reply];
    if (own) return own;
  }
  return reply.getHeaders();
}

type Recorded = FastifyRequest & { principal?: Principal | null; loggedPayload?: string | null };

function credentialOf(p: Principal | null | undefined): { credential: string | null; project: string | null } {
  if (!p) return { credential: null, project: null };
  if (p.kind === 'admin') return { credential: 'admin', project: null };
  if (p.kind === 'ads') return { credential: p.credentialId, project: null };
  return { credential: p.credentialId, project: p.projectId };
}

/**
 * The request body when it is small enough to keep (bodies are parsed JSON or absent; uploads are streamed):
 * a JSON body as its text (one string kept per request, not the parsed objects; it reads the same), else the body.
 */
function keptBody(request: FastifyRequest): unknown {
  const length = Number(request.headers['content-length'] ?? 0);
  return length > 0 && length <= MAX_KEPT_BODY ? (jsonBodyTextOf(request) ?? request.body) : undefined;
}

/**
 * The dashboard's own reads: its pages and assets, and its calls to the control plane (its live views
 * poll). Not logged, or they would crowd out the traffic the log is for. Only GETs of /dashboard and
 * /admin/ routes (the template of the route that ran, not the URL), so no API request can hide.
 */
const dashboardRead = (request: FastifyRequest, route: string | undefined) =>
  request.method === 'GET' &&
  route !== undefined &&
  (route.startsWith('/dashboard') || (request.headers['x-standin-dashboard'] !== undefined && route.startsWith('/admin/')));

/**
 * Fastify's request logging, pointed at the request log: every completed request is recorded there, and
 * nothing is logged line by line. Fastify calls it for every finished reply when it has a logger, so the
 * log needs no onResponse hook (a hook costs more per request than the recording itself). The reply body
 * comes from the admin module's onSend hook (`loggedPayload`).
 */
export class RequestLogController extends LogController {
  constructor(
    private readonly requestLog: RequestLog,
    private readonly clock: Clock,
  ) {
    super({ disableRequestLogging: true });
  }

  /** Also told of every finished request (the request metrics and log line, src/metrics/observe.ts): no hook of its own. */
  observer?: (request: FastifyRequest, reply: FastifyReply, route: string | undefined) => void;

  override requestCompleted(_error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // A request no route matched has no template: it is always logged. Read once for the observer too.
    const route = routeConfigOf(request)?.url;
    this.observer?.(request, reply, route);
    if ((route !== undefined && HEALTH_PATHS.has(route)) || dashboardRead(request, route)) return;
    const r = request as Recorded;
    const who = credentialOf(r.principal);
    const body = keptBody(request);
    // The model from the parsed body (the kept body may be its text).
    const parsed = body === undefined ? undefined : request.body;
    const model = parsed && typeof parsed === 'object' && 'model' in parsed && typeof parsed.model === 'string' ? parsed.model : null;
    this.requestLog.add({
      id: request.id,
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      duration: Math.round(reply.elapsedTime * 100),
      at: this.clock.nowSeconds(),
      credential_id: who.credential,
      project_id: who.project,
      model,
      route: routeTemplate(route),
      reqHeaders: request.headers,
      reqBody: body,
      resHeaders: sentHeadersOf(reply),
      resBody: r.loggedPayload ?? null,
    });
  }
}
