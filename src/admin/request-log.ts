import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Principal } from '../core/auth.js';
import type { Clock } from '../core/clock.js';
import { HEALTH_PATHS } from '../core/health.js';
import { jsonBodyTextOf } from '../core/json-body.js';
import { routeConfigOf } from '../core/route-path.js';
import { redactBody, redactHeaders, redactText, type ExtraSecrets } from './redact.js';
import { DetailBytes, type RequestDetail } from './request-detail.js';

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
 * What the log keeps of a request: the numbers and shared strings of its summary as they are, the rest (its
 * id, URL, model, headers and bodies) as bytes (request-detail.ts), redacted only when someone reads them.
 * The URL is masked (`redactUrl`, regular expressions over the whole URL) the first time a list or a
 * filter reads its path, not in every request (most entries leave the log unread).
 */
interface Entry {
  method: string;
  status: number;
  /** `duration_ms` in hundredths, an integer: a fraction would be one more object kept per request. */
  duration: number;
  at: number;
  credential_id: string | null;
  project_id: string | null;
  route: string | null;
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
const pathOf = (e: Slot): string => (e.path ??= redactUrl(e.detail.head().url));

const summary = (e: Slot, extra: readonly string[]): LoggedRequest => {
  const { id, model } = e.detail.head();
  return {
    id,
    method: e.method,
    path: pathOf(e),
    status: e.status,
    duration_ms: e.duration / 100,
    at: e.at,
    credential_id: e.credential_id,
    project_id: e.project_id,
    model: model === null ? null : redactText(model, extra),
    route: e.route,
  };
};

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

/** A place in the log, written over by a newer request once the log is full (`RequestLog.add`). */
class Slot implements Entry {
  method = '';
  status = 0;
  duration = 0;
  at = 0;
  credential_id: string | null = null;
  project_id: string | null = null;
  route: string | null = null;
  /** The URL masked, once read. */
  path: string | undefined = undefined;
  readonly detail = new DetailBytes();
}

/**
 * The newest requests, in a ring of places written over, not replaced, each with its headers and bodies as
 * bytes: an object made per request and kept a while (a second or two of traffic) is the worst case for V8's
 * young generation (request-detail.ts; docs/operations.md has the figures). The places never leave the log:
 * what it answers is copied out of them.
 */
export class RequestLog {
  private items: Slot[] = [];
  private next = 0;
  private secrets: ExtraSecrets = () => [];
  constructor(private readonly capacity = 1000) {}

  /** Secrets to mask verbatim in what the log shows, besides those it recognises by shape (the admin key in force). */
  maskAlso(secrets: ExtraSecrets): void {
    this.secrets = secrets;
  }

  /** Records a request in the next place: its fields copied, its headers and bodies written as bytes (nothing of `item` is kept). */
  add(item: Entry & RequestDetail): void {
    let slot = this.items[this.next];
    if (slot === undefined) this.items.push((slot = new Slot()));
    slot.method = item.method;
    slot.status = item.status;
    slot.duration = item.duration;
    slot.at = item.at;
    slot.credential_id = item.credential_id;
    slot.project_id = item.project_id;
    slot.route = item.route;
    slot.path = undefined;
    slot.detail.write(item);
    this.next = (this.next + 1) % this.capacity;
  }

  /** Newest first, until `visit` returns false. */
  private walk(visit: (e: Slot) => boolean): void {
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
      if (f.after !== undefined && e.detail.isRequest(f.after)) return false;
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
    let found: Slot | undefined;
    this.walk((e) => (e.detail.isRequest(id) ? ((found = e), false) : true));
    if (!found) return undefined;
    const extra = this.secrets();
    const detail = found.detail.read();
    return {
      ...summary(found, extra),
      path: redactText(pathOf(found), extra),
      request: {
        headers: redactHeaders(detail.reqHeaders, extra),
        body: detail.reqBody === undefined ? null : redactBody(detail.reqBody, extra),
      },
      response: {
        headers: redactHeaders(detail.resHeaders, extra),
        body: detail.resBody === null ? null : redactBody(detail.resBody, extra),
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
      // The summary, not the entry: views derived from the log show what a list shows (secrets masked).
      visit(summary(e, extra), (name) => e.detail.replyHeader(name));
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
 * response): Fastify's own record of the reply's headers, read as it is. It is not changed once the
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
