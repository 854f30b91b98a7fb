import { randomBytes } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  type RouteOptions,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import pino, { type DestinationStream } from 'pino';
import { Type } from 'typebox';
import { createAuth, declareAuthFields, type Principal } from '../core/auth.js';
import { watchBody } from '../core/body-timeout.js';
import { createChanges } from '../core/changes.js';
import { declareQueuedHeaders, queuedHeadersOf, writePlatformHeaders } from '../core/reply-headers.js';
import type { App, Ctx, Instance, Module, Services } from '../core/module.js';
import { ApiError, invalid } from '../core/errors.js';
import { emptyBodyIsNoBody, installJsonBodyParser, nulInUrl } from '../core/json-body.js';
import { createJobQueue } from '../core/jobs.js';
import { healthRoutes, holdsAdminKey, publicReason } from '../core/health.js';
import { logDestination, logFormatOf } from '../core/log.js';
import type { InstanceEvent } from '../core/instance-events.js';
import { createProxyTrust, splitTrustProxy } from '../core/proxy-trust.js';
import { routeConfigOf, routePathOf } from '../core/route-path.js';
import { outboundFor } from '../core/outbound.js';
import { endV8StartTuning } from '../core/v8-start.js';
import { codeCacheOutcome } from '../core/code-cache.js';
import type { Settings } from '../core/settings.js';
import { absentBodyIsEmpty, refuseBody, serializerCompiler, toApiError, validatorCompiler } from '../core/validation.js';
import { openStore } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import { sendOAuthError } from '../identity/service.js';
import { modules as defaultModules } from './modules.js';
import { lazyOpenApi } from './openapi.js';
import { RequestLog, RequestLogController } from '../admin/request-log.js';
import { followClock, loadClock, saveClock } from '../admin/clock-store.js';
import { responseObserver } from '../metrics/observe.js';

export interface Standin extends Instance {
  app: App;
  modules: readonly Module[];
  requestLog: RequestLog;
  /** The OpenAPI document of the app's routes (GET /openapi.json), built on first use. */
  openapi(): Promise<unknown>;
  /**
   * Graceful stop: /readyz fails, connections close after their response, runs are handed back, no job is
   * claimed, in-flight requests and jobs finish (up to --shutdown-drain-ms, then handed back or cut), stores close.
   */
  close(): Promise<void>;
}

/** The platform API's prefix: it needs a platform credential, and its replies carry the /v1 headers. */
const PLATFORM = '/v1/';
/** The control plane's prefix: only the admin key reaches it. */
const ADMIN = '/admin/v1';
const API_PREFIXES = [PLATFORM, '/ads/v1/', `${ADMIN}/`];

/** Builds a Standin: store (migrated), clock, job queue, auth, modules and the HTTP app. */
export async function createStandin(
  settings: Settings,
  opts: { modules?: readonly Module[]; logger?: boolean; logStream?: DestinationStream } = {},
): Promise<Standin> {
  const modules = opts.modules ?? defaultModules;
  const logStream = opts.logStream ?? logDestination(logFormatOf(settings.logFormat), { batched: false });
  // The logger exists before the app, so the migrations (which come first) are logged too.
  const logger = pino(
    {
      level: opts.logger === false ? 'silent' : (settings.logLevel ?? 'warn'),
      redact: ['req.headers.authorization', 'req.headers["x-admin-key"]'],
    },
    logStream,
  );
  // No child logger per request (its allocation is a measurable share of a small read); the few
  // request-level log lines carry the request id themselves. The logger is its own child for Fastify's
  // per-request bindings (`reqId`), rather than a `childLoggerFactory` that answers it: Fastify checks the
  // logger a factory of the app's own returns at every request (seven methods looked up by name), and not
  // its own factory's (which calls `child`). Any other child keeps its bindings.
  const child = logger.child as (this: unknown, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => unknown;
  logger.child = function (this: unknown, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) {
    return 'reqId' in bindings ? this : child.call(this, bindings, options);
  } as typeof logger.child;
  const store = openStore({
    databaseUrl: settings.databaseUrl,
    dataDir: settings.data,
    poolSize: settings.dbPoolSize,
    pipelines: settings.dbPipelines,
  });
  const migrating = performance.now();
  const applied = await migrate(store, modules, undefined, () =>
    logger.info({ event: 'migrations.started' satisfies InstanceEvent, store: store.dialect }, 'migrating the store'),
  );
  if (applied.length)
    logger.info(
      { event: 'migrations.finished' satisfies InstanceEvent, applied, ms: Math.round(performance.now() - migrating) },
      `applied ${applied.length} migrations`,
    );

  const { clock, clamped } = await loadClock(store);
  const requestLog = new RequestLog(settings.requestLogSize);
  const proxyTrust = createProxyTrust(splitTrustProxy(settings.trustProxy));
  const logController = new RequestLogController(requestLog, clock);
  const serializer = serializerCompiler(settings.checkResponses);
  // Standin's own compilers (core/validation.ts), given to Fastify at its creation too: without them it loads
  // its default ones (ajv-compiler, fast-json-stringify) at every start, only for them to be replaced below.
  // The declared types are those of the default factories; Fastify only calls a factory for its compiler.
  const compilersFactory = { buildValidator: () => validatorCompiler, buildSerializer: () => serializer } as unknown as NonNullable<
    FastifyServerOptions['schemaController']
  >['compilersFactory'];
  const app = Fastify({
    schemaController: { compilersFactory },
    // Always a logger (silent when asked): Fastify reports finished requests to the log controller only then.
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: settings.bodyLimit,
    // Transport-level refusals (a malformed request line, oversized headers) in the envelope too.
    clientErrorHandler: clientError,
    genReqId: requestIds(),
    requestIdHeader: false,
    // Requests are recorded in the request log of the control plane, not logged line by line.
    logController,
    forceCloseConnections: 'idle',
    // A request that arrives while the instance closes (on a connection opened before) is served, with
    // `Connection: close` (trackInFlight), rather than refused with a 503 a balancer passes on to a client.
    return503OnClosing: false,
    // request.ip: the client a trusted load balancer names in X-Forwarded-For, else the peer (core/proxy-trust.ts).
    trustProxy: (address: string) => proxyTrust.trusts(address),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // A URL the router cannot read (bad percent-encoding, an over-long id) still meets the front door
    // and answers in the envelope.
    frameworkErrors: (error, request, reply) => framework.onError(error, request, reply),
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Set once the conventions are installed (they need ctx, which needs the app).
  const framework = { onError: (_error: FastifyError, _request: FastifyRequest, _reply: FastifyReply): void => undefined };
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializer);
  declareAuthFields(app);
  // Bodies are JSON; a text body is a client mistake worth a 415, not a confusing schema error.
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);

  const log = app.log;
  if (clamped) log.warn('the stored clock offset was out of range (over 100 years); it is set to the largest allowed');
  if (settings.leaseMs < 300) throw new Error(`--lease-ms must be at least 300, got ${settings.leaseMs}`);
  const jobs = createJobQueue(store, clock, log, { maxDeaths: settings.jobMaxDeaths, leaseMs: settings.leaseMs });
  const ctx: Ctx = {
    settings: { ...settings },
    store,
    clock,
    jobs,
    log,
    auth: createAuth(),
    changes: createChanges(store, log),
    outbound: outboundFor(settings),
    edge: [],
    banner: [],
    listeners: {},
    modules,
    // Filled by the modules' `provide` below; nothing reads it before.
    services: { requestLog, proxyTrust } as Services,
  };
  // The admin key in force is masked wherever it shows in the request log, whatever its form.
  requestLog.maskAlso(() => [ctx.auth.adminKey()]);
  // Every /v1 URL needs a platform API credential (and the permission its route declares as config.need);
  // the control plane needs the admin key.
  ctx.auth.protect(PLATFORM);
  ctx.auth.protect(`${ADMIN}/`, 'admin');

  // The clock is shared through the store, so every instance (and a restart) sees the moved time.
  // Each save is awaited by close(), so none is begun on a closed store.
  const clockSaves = new Set<Promise<void>>();
  clock.onChange(() => {
    const saving: Promise<void> = saveClock(ctx)
      .catch((err) => log.error({ err }, 'saving the clock failed'))
      .finally(() => clockSaves.delete(saving));
    clockSaves.add(saving);
  });

  framework.onError = installConventions(app, ctx);

  // @fastify/swagger loads on the first GET /openapi.json (./openapi.ts); the routes are noted from here on.
  const openapi = lazyOpenApi(app, {
    openapi: {
      info: { title: 'Standin', version: '0.1.0', description: 'A self-hostable stand-in for the platform.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });

  // Generations are read before any module loads its state: a change committed from here on is reloaded.
  await ctx.changes.start();
  // A revoked key (or changed permissions) must stop working on every instance, not only the one that revoked it.
  ctx.changes.on('credentials', () => ctx.auth.forget());
  // Other instances on the store may move the shared clock: follow them.
  followClock(ctx);
  for (const m of modules) await m.provide?.(ctx);
  for (const m of modules) await m.init?.(ctx);
  for (const m of modules) for (const def of m.jobs?.(ctx) ?? []) jobs.register(def);
  // The per-request log line and the request metrics (src/metrics), told by the log controller.
  if (ctx.services.metrics) logController.observer = responseObserver(ctx, app.log, logStream);

  // Modules report the backends they depend on (the rate limiter's Redis); any of them down: `degraded`.
  const HealthReply = Type.Object({
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
    checks: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('down')]), detail: Type.Optional(Type.String()) }),
      ),
    ),
  });
  app.get('/healthz', { schema: { hide: true, response: { 200: HealthReply } } }, async (request) => {
    // The causes name internal addresses (Redis, the database): only for the admin key.
    const full = holdsAdminKey(ctx, request);
    const checks = Object.fromEntries(
      modules.flatMap((m) => {
        const h = m.health?.(ctx);
        if (!h) return [];
        return [
          [
            m.name,
            h.detail === undefined ? { status: h.status } : { status: h.status, detail: full ? h.detail : publicReason(h.detail) },
          ] as const,
        ];
      }),
    );
    return Object.values(checks).every((c) => c.status === 'ok') ? { status: 'ok' as const } : { status: 'degraded' as const, checks };
  });
  const readiness = healthRoutes(app, ctx, modules);
  app.get('/openapi.json', { schema: { hide: true } }, openapi);
  for (const m of modules) await m.routes?.(app, ctx);
  await app.register(
    async (admin) => {
      admin.addHook('onRoute', (route) => void (route.schema = { tags: ['admin'], ...route.schema }));
      for (const m of modules) await m.adminRoutes?.(admin, ctx);
    },
    { prefix: ADMIN },
  );
  await app.ready();
  const inFlight = trackInFlight(app);

  return {
    app,
    ctx,
    modules,
    requestLog,
    openapi,
    async listen() {
      const address = await app.listen({ host: settings.host, port: settings.port });
      ctx.listeners.http = address;
      if (settings.workers) {
        // One serving process owns a SQLite folder's job queue: it may take back what a killed one had claimed.
        store.claim?.();
        store.checkpointInBackground?.(log);
        // The first poll of the queue comes a poll interval after listening, as each later one: claiming
        // every kind was a tenth of a start's CPU, before its first request. Work enqueued meanwhile (a run,
        // a webhook) wakes the queue at once.
        jobs.start({ firstPollInMs: 1000 });
      }
      for (const m of modules) await m.start?.(ctx);
      log.info(
        {
          event: 'instance.listening' satisfies InstanceEvent,
          listeners: ctx.listeners,
          public_url: settings.publicUrl ?? null,
          code_cache: codeCacheOutcome(),
        },
        `listening on ${address}`,
      );
      // Logs instance.ready (or not_ready, with the reasons) now and each change after.
      readiness.watch();
      // The start is over: V8 back to Node's defaults (tuned for the start by src/start.ts, core/v8-start.ts).
      endV8StartTuning();
      return address.replace('[::1]', 'localhost');
    },
    async close() {
      // Readiness fails first, so a balancer stops sending work while what it already sent finishes.
      const stopping = performance.now();
      const left = () => Math.max(0, settings.shutdownDrainMs - (performance.now() - stopping));
      readiness.drain();
      readiness.unwatch();
      log.info(
        { event: 'instance.draining' satisfies InstanceEvent, drain_ms: settings.shutdownDrainMs },
        'draining: /readyz fails, in-flight requests finish, work is handed back',
      );
      // No new connection: a balancer sends those to another instance (a refused connection is retried
      // elsewhere whatever the method: the request was never sent). Kept-alive connections (nginx keeps a
      // pool of them) would go on bringing requests: each response closes its connection from now on.
      inFlight.closeConnections();
      const changesStopped = ctx.changes.stop();
      // No job is claimed from here on (stop's first, synchronous step); a job still running when the drain
      // ends is handed back. Runs are handed back at once (the modules' handBack): another instance takes
      // them over now rather than after the drain.
      const jobsStopped = jobs.stop(settings.shutdownDrainMs);
      for (const m of modules) await m.handBack?.(ctx);
      await inFlight.settled(left());
      // The open connections get 1–2 s more to end by themselves: an idle one by its client (nginx's
      // upstream keepalive_timeout), a busy one after its response. Closing an idle connection ourselves
      // races a request the client may be sending on it.
      await inFlight.connectionsClosed(Math.min(Math.max(left(), 1000), 2000));
      for (const m of [...modules].reverse()) await m.stop?.(ctx);
      await jobsStopped;
      // What still holds a connection past the drain (a stream) is cut: the stop has a bound.
      const cut = setTimeout(() => app.server.closeAllConnections(), Math.max(left(), 500));
      await app.close();
      clearTimeout(cut);
      await ctx.outbound.close();
      // A reload of a change (another instance moved the clock, say) may still be reading or writing.
      await changesStopped;
      await Promise.all(clockSaves);
      await store.close();
      log.info({ event: 'instance.stopped' satisfies InstanceEvent, ms: Math.round(performance.now() - stopping) }, 'stopped');
    },
  };
}

/**
 * Counts the HTTP requests being served, so a shutdown can wait for them (bounded) before closing the
 * listener; once `closeConnections` is called, each response closes its connection.
 */
function trackInFlight(app: App) {
  let count = 0;
  let closing = false;
  const open = new Set<ServerResponse>();
  const waiters = new Set<() => void>();
  // One listener for every response (a response closes once): no closure or once-wrapper per request.
  function closed(this: ServerResponse): void {
    open.delete(this);
    if (--count === 0) for (const w of waiters) w();
  }
  const track = (res: ServerResponse): void => {
    count++;
    open.add(res);
    if (closing) res.setHeader('Connection', 'close');
    res.on('close', closed);
  };
  // Run by Fastify's own listener rather than a second one: an event with two listeners copies their list at each emit.
  const [handle, ...others] = app.server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (handle && others.length === 0) {
    app.server.removeListener('request', handle);
    app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      handle.call(app.server, req, res);
      track(res);
    });
  } else app.server.on('request', (_req, res: ServerResponse) => track(res));
  return {
    /**
     * Closes the listener but not the connections (http.Server's close would cut the idle ones); from now
     * on every response closes its connection.
     */
    closeConnections(): void {
      closing = true;
      netClose.call(app.server);
      for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close');
    },
    /** Resolves once no connection is left, or after `maxMs`. */
    async connectionsClosed(maxMs: number): Promise<void> {
      const end = performance.now() + maxMs;
      const open = () => new Promise<number>((r) => app.server.getConnections((_err, n) => r(n ?? 0)));
      while ((await open()) > 0 && performance.now() < end) await new Promise((r) => setTimeout(r, 25));
    },
    /** Resolves once no request is in flight, or after `maxMs`. */
    settled(maxMs: number): Promise<void> {
      if (count === 0) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, maxMs);
        waiters.add(done);
      });
    },
  };
}

/** net.Server's close: stops accepting and leaves the connections be (http.Server's own also cuts the idle ones). */
const netClose = NetServer.prototype.close;

/** Request ids: a random per-process prefix and a counter — unique, and cheaper than random bytes per request. */
function requestIds(): () => string {
  const prefix = randomBytes(8).toString('hex');
  let n = 0;
  return () => `req_${prefix}${(n++).toString(16).padStart(8, '0')}`;
}

/**
 * x-request-id, the edge checks and authentication, openai-processing-ms, the error envelope, 404s in
 * the envelope (the request log is kept by the log controller, `RequestLogController`). Each hook Fastify
 * runs costs more than the little work these do (measured: about 2 µs a request), so the front door is one
 * onRequest hook, the /v1 headers an onSend hook of /v1 routes only, and all take callbacks.
 */
function installConventions(app: App, ctx: Ctx) {
  const { auth, edge } = ctx;
  declareQueuedHeaders(app);
  const { bodyIdleTimeoutMs, bodyTimeoutMs } = ctx.settings;
  const frontDoor = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    reply.header('x-request-id', request.id);
    // Whatever becomes of the request, its body must keep arriving (uploads stream theirs in the handler).
    watchBody(request, bodyIdleTimeoutMs, bodyTimeoutMs);
    checkEdge(0);
    function checkEdge(from: number): void {
      for (let i = from; i < edge.length; i++) {
        const refused = edge[i](request);
        // Only a check with business with this request answers a Promise; the others stay synchronous.
        if (refused instanceof Promise) return void refused.then((err) => (err ? done(err) : checkEdge(i + 1)), done);
        if (refused) return done(refused);
      }
      // Authentication comes before validation: without a valid key, a request learns nothing about the API.
      if (request.url.includes('%00')) return auth.gate(request, (err) => done(err ?? nulInUrl(request.url)));
      auth.gate(request, done);
    }
  };
  app.addHook('onRequest', frontDoor);
  const platformHeaders = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    writePlatformHeaders(request, reply);
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    // The credential the route needs, from its template: the front door reads it, never the URL.
    auth.classify(route);
    const template = route.url; // a route's template, never a request's URL
    if (template.startsWith(PLATFORM)) {
      // The front door authorizes every /v1 request for its route's need before validation; a route
      // without one would be open to any key of any permission.
      if (!route.config?.need) throw new Error(`${[route.method].flat().join(',')} ${route.url} declares no config.need (auth.ts needs())`);
      ctx.auth.declareGroup(route.config.need.group);
      route.onSend = [...(route.onSend ? [route.onSend].flat() : []), platformHeaders];
    }
    if (takesBody(route.method)) installBodyRules(route);
  });
  app.setNotFoundHandler((request, reply) => {
    const err = new ApiError('not_found_error', `Invalid URL (${request.method} ${request.url.split('?')[0]})`, { code: 'unknown_url' });
    if (routePathOf(request)?.startsWith(PLATFORM)) writePlatformHeaders(request, reply);
    reply.code(404).send(err.toBody());
  });

  const replyError = errorReplier(ctx);
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => replyError(request, reply, error));
  // The front door first (a bad URL without a key is a 401, as any other), then the router's refusal.
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
    frontDoor(request, reply, (err) => replyError(request, reply, err ?? error));
}

const takesBody = (method: string | string[]) => [method].flat().some((m) => m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS');
const hooks = <T>(existing: T | T[] | undefined, hook: T): T[] => ([] as T[]).concat(existing ?? [], hook);

/**
 * The body rules of every route that may carry a body (docs/core.md, "What Standin refuses"):
 * - an empty body is no body, whatever its Content-Type (the 4.x SDK sends `application/json` on every
 *   DELETE and cancel; the platform accepts it);
 * - a route with an object body takes no body as `{}`: all optional, that is a valid call; with required
 *   members, validation then names the first one missing;
 * - an action endpoint (`POST …/cancel`) refuses a body it would ignore: the platform refuses what it does
 *   not understand.
 */
function installBodyRules(route: RouteOptions): void {
  const routeTemplate = route.url;
  route.preParsing = hooks(route.preParsing, emptyBodyIsNoBody);
  const body = route.schema?.body as { type?: unknown } | undefined;
  // A route with an object body takes no body as `{}`: in Standin's validator (core/validation.ts), with no
  // hook of its own; a route with a validator of its own (uploads) has the hook.
  if (body?.type === 'object') {
    if (route.validatorCompiler) route.preValidation = hooks(route.preValidation, absentBodyIsEmpty);
    return;
  }
  if (body === undefined && API_PREFIXES.some((p) => routeTemplate.startsWith(p)))
    route.preValidation = hooks(route.preValidation, refuseBody);
}

/**
 * Answers an error in the envelope of the URL's API (RFC 6749 §5.2 under /oauth/). Server errors are
 * logged; one of the store (a full disk) is logged once a minute with its cause, not once per request.
 */
function errorReplier(ctx: Ctx) {
  const countRefused = refusedRequestCounter(ctx);
  const lastLogged = new Map<string, number>();
  return (request: FastifyRequest, reply: FastifyReply, error: unknown) => {
    // The client went away before its body arrived (Node reports it as ECONNRESET, as a dropped database
    // connection): its own doing, told as such, and the answer has no one to reach.
    if (clientClosed(request, error)) {
      request.log.info({ err: error, reqId: request.id }, 'the client closed the connection before its request body arrived');
      return sendError(request, reply, CLIENT_CLOSED);
    }
    const apiError = toApiError(error);
    if (apiError.status >= 500) {
      const cause = apiError.code === 'storage_unavailable' ? apiError.message : undefined;
      const last = cause ? lastLogged.get(cause) : undefined;
      if (!cause || last === undefined || performance.now() - last > 60_000) {
        if (cause) lastLogged.set(cause, performance.now());
        request.log.error({ err: error, reqId: request.id }, cause ? `${cause} (logged once a minute while it lasts)` : 'request failed');
      }
    }
    const counting = countRefused(request, apiError);
    if (!counting) return sendError(request, reply, apiError);
    // A request refused before its admission still counts; once the limit is spent the answer is the 429.
    counting.then(
      () => sendError(request, reply, apiError),
      (limit: unknown) => sendError(request, reply, toApiError(limit)),
    );
  };
}

const CLIENT_CLOSED = new ApiError('invalid_request_error', 'The client closed the connection before the request body arrived.', {
  status: 400,
  code: 'client_closed_request',
});

/** Whether `error` is the request's own stream ending early (the client aborted), not a failure of Standin's. */
const clientClosed = (request: FastifyRequest, error: unknown): boolean =>
  request.raw.readableAborted && (error as { code?: string }).code === 'ECONNRESET';

/** Refusals that come after the front door and before a handler admits the request: bad input, an unknown object. */
const REFUSED_BEFORE_ADMISSION = new Set([400, 404, 409, 413, 415, 422]);

/**
 * For routes admitted by the model limiter (`config.rateLimit`), the count of a request refused before
 * its admission (src/ratelimit: failed requests count toward the per-minute limit); undefined when
 * there is nothing to count (another route, an admitted request, a refusal of the front door or the limiter).
 */
function refusedRequestCounter(ctx: Ctx) {
  return (request: FastifyRequest, error: ApiError): Promise<void> | undefined => {
    if (routeConfigOf(request)?.rateLimit !== 'model' || !REFUSED_BEFORE_ADMISSION.has(error.status)) return undefined;
    const limiter = ctx.services.ratelimit;
    if (!limiter || queuedHeadersOf(request)) return undefined;
    const principal = (request as FastifyRequest & { principal?: Principal | null }).principal;
    if (principal?.kind !== 'platform') return undefined;
    const model = (request.body as { model?: unknown } | undefined)?.model;
    // A name no model has (over-long) is counted with the requests that name none, under the default limits.
    return limiter.countRefused(request, principal, typeof model === 'string' && model.length <= 256 ? model : '');
  };
}

function sendError(request: FastifyRequest, reply: FastifyReply, apiError: ApiError) {
  for (const [k, v] of Object.entries(apiError.headers)) reply.header(k, v);
  const path = routePathOf(request);
  // An error of the 404 context (a 401 for an unknown /v1 URL) has no /v1 route to add these.
  if (path?.startsWith(PLATFORM)) writePlatformHeaders(request, reply);
  // The token endpoint speaks RFC 6749 §5.2 even for transport-level failures.
  if (path?.startsWith('/oauth/')) return sendOAuthError(reply, apiError);
  reply.code(apiError.status).send(apiError.toBody());
}

/** Node's refusals before a request reaches Fastify, written to the socket in the platform's envelope. */
function clientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new ApiError('invalid_request_error', 'The request did not arrive in time.', { status: 408, code: 'request_timeout' })
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError('invalid_request_error', 'The request headers are too large.', { status: 431, code: 'headers_too_large' })
        : invalid('The request is not valid HTTP.', null, 'invalid_request');
  const body = JSON.stringify(error.toBody());
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(err);
}
