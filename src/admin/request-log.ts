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
 * A finished request as the log is given it: its summary's fields, its URL, headers and bodies. The log
 * copies it into its byte ring (`RequestLog`) and keeps no reference to it.
 */
interface Entry extends Omit<LoggedRequest, 'path' | 'duration_ms'> {
  url: string;
  /** `duration_ms` in hundredths. */
  duration: number;
  reqHeaders: Record<string, unknown>;
  reqBody: unknown;
  resHeaders: Record<string, unknown>;
  resBody: string | null;
}

/** An entry as read back from the ring: its texts (the headers as JSON), masked only when someone reads them. */
interface Kept extends Omit<Entry, 'reqHeaders' | 'resHeaders' | 'reqBody'> {
  reqHeaders: string;
  reqBody: string | null;
  resHeaders: string;
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

const summary = (e: Kept, extra: readonly string[]): LoggedRequest => ({
  id: e.id,
  method: e.method,
  path: redactUrl(e.url),
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

/** The texts of a record, in the order they are written; `null` is kept apart from the empty text. */
const TEXTS = 11;
const NULL = 0xffffffff;
/** Bytes of the ring per request the log holds (its texts: URL, headers, bodies of up to MAX_KEPT_BODY each way). */
export const BYTES_PER_REQUEST = 8192;
/** Requests the log holds at most, whatever `--request-log-size` asks (a ring of 800 MB). */
export const MAX_REQUESTS = 100_000;

/**
 * The last `capacity` requests, newest first. Each is copied, as bytes, into one ring of memory outside
 * V8's heap (a record of its texts: id, method, URL, credential, project, model, route, headers as JSON,
 * bodies) beside typed arrays of its numbers, so the log holds no object per request. Kept as objects,
 * thousands of entries with their headers and bodies outlived every young-generation collection: each
 * collection copied the newest of them and promoted them (2.2 of a scavenge's 4.9 ms under load on the
 * ads create, `--trace-gc-nvp`), and what they left in the old generation made the full collections.
 * The ring holds `capacity` × BYTES_PER_REQUEST bytes (at least 1 MB): past it the oldest requests leave
 * first, so a burst of large bodies holds fewer requests rather than more memory.
 */
export class RequestLog {
  private readonly bytes: Buffer;
  /** Per slot (the `capacity` newest requests, in a ring): where its record starts and ends in `bytes`. */
  private readonly start: Uint32Array;
  private readonly end: Uint32Array;
  private readonly status: Uint16Array;
  private readonly duration: Float64Array;
  private readonly at: Float64Array;
  /** The oldest request's slot, and how many are held. */
  private first = 0;
  private count = 0;
  /** Where the next record is written. */
  private pos = 0;
  private secrets: ExtraSecrets = () => [];

  private readonly capacity: number;

  /** `capacity`: 0 keeps none; at most MAX_REQUESTS. */
  constructor(capacity = 1000) {
    this.capacity = capacity = Math.min(Math.max(0, Math.floor(capacity)), MAX_REQUESTS);
    this.bytes = Buffer.allocUnsafeSlow(Math.max(1 << 20, capacity * BYTES_PER_REQUEST));
    this.start = new Uint32Array(capacity);
    this.end = new Uint32Array(capacity);
    this.status = new Uint16Array(capacity);
    this.duration = new Float64Array(capacity);
    this.at = new Float64Array(capacity);
  }

  /** Secrets to mask verbatim in what the log shows, besides those it recognises by shape (the admin key in force). */
  maskAlso(secrets: ExtraSecrets): void {
    this.secrets = secrets;
  }

  add(item: Entry): void {
    if (!this.capacity) return;
    const texts = [
      item.id,
      item.method,
      item.url,
      item.credential_id,
      item.project_id,
      item.model,
      item.route,
      JSON.stringify(item.reqHeaders),
      item.reqBody === undefined ? null : typeof item.reqBody === 'string' ? item.reqBody : JSON.stringify(item.reqBody),
      JSON.stringify(item.resHeaders),
      item.resBody,
    ];
    let length = 0;
    // UTF-8 takes at most 3 bytes a UTF-16 unit: the record's room, measured before anything is moved.
    for (const t of texts) length += 4 + (t === null ? 0 : 3 * t.length);
    if (length > this.bytes.length) return;
    let at = this.pos;
    if (at + length > this.bytes.length) {
      // The tail is too short: the requests written there are the oldest, and leave.
      while (this.count && this.start[this.first] >= at) this.dropOldest();
      at = 0;
    }
    // The oldest requests whose records the new one covers leave (they lie ahead of the write position).
    while (this.count && (this.count === this.capacity || (this.start[this.first] >= at && this.start[this.first] < at + length)))
      this.dropOldest();
    const slot = (this.first + this.count) % this.capacity;
    this.start[slot] = at;
    for (const t of texts) {
      if (t === null) {
        this.bytes.writeUInt32LE(NULL, at);
        at += 4;
        continue;
      }
      const written = this.bytes.write(t, at + 4, 'utf8');
      this.bytes.writeUInt32LE(written, at);
      at += 4 + written;
    }
    this.end[slot] = at;
    this.status[slot] = item.status;
    this.duration[slot] = item.duration;
    this.at[slot] = item.at;
    this.pos = at;
    this.count++;
  }

  private dropOldest(): void {
    this.first = (this.first + 1) % this.capacity;
    this.count--;
  }

  /** The request of `slot`, read back from the ring. */
  private read(slot: number): Kept {
    const texts: (string | null)[] = [];
    let at = this.start[slot];
    for (let i = 0; i < TEXTS; i++) {
      const length = this.bytes.readUInt32LE(at);
      at += 4;
      if (length === NULL) texts.push(null);
      else texts.push(this.bytes.toString('utf8', at, (at += length)));
    }
    const [id, method, url, credential_id, project_id, model, route, reqHeaders, reqBody, resHeaders, resBody] = texts;
    return {
      id: id!,
      method: method!,
      url: url!,
      credential_id,
      project_id,
      model,
      route,
      reqHeaders: reqHeaders!,
      reqBody,
      resHeaders: resHeaders!,
      resBody,
      status: this.status[slot],
      duration: this.duration[slot],
      at: this.at[slot],
    };
  }

  /** Newest first, until `visit` returns false. */
  private walk(visit: (e: Kept) => boolean): void {
    for (let i = this.count - 1; i >= 0; i--) if (!visit(this.read((this.first + i) % this.capacity))) return;
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
      if (f.credential_id && e.credential_id !== f.credential_id) return true;
      if (!status(e.status)) return true;
      const row = summary(e, extra);
      if (f.path && !row.path.includes(f.path)) return true;
      out.push(row);
      return out.length < limit;
    });
    return out;
  }

  /** One request with its headers and bodies, secrets redacted; undefined once it left the log. */
  get(id: string): LoggedRequestDetail | undefined {
    let found: Kept | undefined;
    this.walk((e) => (e.id === id ? ((found = e), false) : true));
    if (!found) return undefined;
    const extra = this.secrets();
    const row = summary(found, extra);
    return {
      ...row,
      path: redactText(row.path, extra),
      request: {
        headers: redactHeaders(JSON.parse(found.reqHeaders) as Record<string, unknown>, extra),
        body: found.reqBody === null ? null : redactBody(found.reqBody, extra),
      },
      response: {
        headers: redactHeaders(JSON.parse(found.resHeaders) as Record<string, unknown>, extra),
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
      const h = JSON.parse(e.resHeaders) as Record<string, unknown>;
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
    return this.count;
  }

  clear(): void {
    this.first = 0;
    this.count = 0;
    this.pos = 0;
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
