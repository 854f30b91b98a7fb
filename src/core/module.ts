import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Migration } from 'kysely';
import type { Static, TSchema } from 'typebox';
import type { Exec, Store, Tx } from '../store/db.js';
import type { Auth } from './auth.js';
import type { Changes } from './changes.js';
import type { Clock } from './clock.js';
import type { JobDefinition, JobQueue } from './jobs.js';
import type { Outbound } from './outbound.js';
import type { RetentionRule } from './retention.js';
import type { Settings } from './settings.js';

export interface Logger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
}

/**
 * The services areas publish for each other, one typed entry per area. Each area declares its own entry
 * beside the code that builds it, by declaration merging:
 *
 *     declare module '../core/module.js' { interface Services { models: ModelRegistry } }
 *
 * and sets it in its module's `provide`, which runs for every module before any `init`: so whatever one
 * area publishes, another may use from its `init` on, whatever the order of the module list.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Services {}

/** The HTTP app as routes see it: TypeBox schemas type each handler's params, query and body. */
export type App = FastifyInstance<Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What every service function receives: settings, the store, the one clock, the job queue, a logger. */
export interface Ctx {
  settings: Settings;
  store: Store;
  clock: Clock;
  jobs: JobQueue;
  log: Logger;
  auth: Auth;
  /** Tells every instance on the store that a concern of in-memory state changed (core/changes.ts). */
  changes: Changes;
  /** The SSRF-guarded HTTP client of every outbound call (webhooks, JWKS, MCP servers of the app host). */
  outbound: Outbound;
  /**
   * Checks every request meets first, before authentication, as an edge proxy's would (fault injection).
   * Synchronous for a request no check has business with; a check may answer a Promise (a fault claimed
   * in the store) and the request waits for it. An Error refuses the request.
   */
  edge: ((request: FastifyRequest) => Error | undefined | Promise<Error | undefined>)[];
  /** Lines a module adds to the start banner (extra listeners and where to find them). */
  banner: string[];
  /** Every listener's address once it listens, by name (`http`, `widgets`, `mtls_token`, `mtls_api`). */
  listeners: Record<string, string>;
  /** Every module of this Standin, in start order (the control plane resets and configures them all). */
  modules: readonly Module[];
  /** What areas publish for each other (see `Services`). */
  services: Services;
}

/**
 * A feature area (ads, identity, webhooks, assistants …) plugs into Standin through this one shape.
 * `src/server/modules.ts` lists the modules; nothing else needs to know about them.
 */
export interface Module {
  name: string;
  /** Migrations keyed by a name that starts with a timestamp (`202611220100_ads_init`). Frozen once released. */
  migrations?: Record<string, Migration>;
  /** Parts of the declarative config file this module owns. */
  config?: ConfigSection[];
  /** Publishes this module's services in `ctx.services`; runs for every module before any `init`. */
  provide?(ctx: Ctx): Promise<void> | void;
  /** Called once after every module provided its services, before routes: resolvers, policies, edge checks. */
  init?(ctx: Ctx): Promise<void> | void;
  /** Registers HTTP routes on the main listener (`/v1`, `/ads/v1`, `/oauth`, pages). */
  routes?(app: App, ctx: Ctx): Promise<void> | void;
  /**
   * Registers control-plane routes. They are mounted under `/admin/v1` (so `app.get('/clock')` serves
   * `/admin/v1/clock`), tagged `admin`, and only the admin key reaches them (`ctx.auth`, kind `admin`).
   */
  adminRoutes?(app: App, ctx: Ctx): Promise<void> | void;
  /** Job kinds this module's workers run. */
  jobs?(ctx: Ctx): JobDefinition[];
  /** Records this module keeps for a while and then deletes (`core/retention.ts`; run by the retention area). */
  retention?: RetentionRule[];
  /** Starts extra listeners or timers once the HTTP server listens; stopped in reverse order. */
  start?(ctx: Ctx): Promise<void> | void;
  stop?(ctx: Ctx): Promise<void> | void;
  /**
   * Called as the instance starts draining, before in-flight requests finish: hand long-running work this
   * module executes outside the job queue back to the store, so another instance takes it over at once.
   */
  handBack?(ctx: Ctx): Promise<void> | void;
  /** First-start demo data (skipped with --no-seed or a config file). Returns lines to print. */
  seed?(ctx: Ctx, tx: Tx, demo: DemoIds): Promise<string[]> | string[];
  /** Deletes this module's state (admin reset). Tables are emptied by the core; this clears caches. */
  reset?(ctx: Ctx): Promise<void> | void;
  /** Real objects behind triggered events of this area's types (`standin trigger`, test events). */
  eventSamples?: EventSample[];
  /** Commands of the `standin` command line this module adds (`standin apps …`). */
  commands?: Record<string, CliCommand>;
  /** How a backend this module depends on is doing, for `/healthz` and `/readyz`. Synchronous and cheap: never a round trip. */
  health?(ctx: Ctx): HealthCheck;
}

/** One module's line in `/healthz`. */
export interface HealthCheck {
  status: 'ok' | 'down';
  /** What is wrong, for an operator. */
  detail?: string;
  /** The instance cannot serve while this is down: `/readyz` fails (the limiter's Redis when failing closed). */
  required?: boolean;
}

/** Ids the seed creates first, so every module can attach its demo data to them. */
export interface DemoIds {
  organizationId: string;
  projectId: string;
}

/**
 * A key of the config file. `at` says where it lives: the root, each organization or each project.
 * `apply` upserts what the file declares (applying the same file twice changes nothing).
 */
export interface ConfigSection<T = unknown> {
  at: 'root' | 'organization' | 'project';
  key: string;
  schema: TSchema;
  // The value has been validated against `schema` before apply is called.
  apply(ctx: Ctx, tx: Tx, value: T, parent: { organizationId?: string; projectId?: string }): Promise<void>;
  /**
   * What a value may hold in the config file on disk but not in one sent to the control plane (a path on
   * the server): each problem as `param: rule`. A request must not make Standin read the server's files.
   */
  controlPlaneProblems?(value: T): string[];
}

/** A config section whose `apply` receives the value typed by its schema. */
export function configSection<S extends TSchema>(section: Omit<ConfigSection<Static<S>>, 'schema'> & { schema: S }): ConfigSection {
  return section as ConfigSection;
}

/** What a triggered event asks of the area whose object it names. */
export interface SampleRequest {
  type: string;
  organizationId: string;
  projectId: string;
  /** What the caller pinned in the event's data (`--event-data`). */
  input: Record<string, unknown>;
}

/**
 * Makes the object a triggered event of one of `types` is about (a finished response for
 * `response.completed`, a safety case for `safety.warning_issued`), so that `data.id` can be retrieved.
 */
export interface EventSample {
  types: readonly string[];
  create(ctx: Ctx, tx: Exec, request: SampleRequest): Promise<Record<string, unknown>>;
}

/** A running (or ready) Standin, as a command sees it. */
export interface Instance {
  ctx: Ctx;
  /** Starts listening (and the workers); returns the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** What a command of the command line gets: the settings, and a way to build a Standin on them. */
export interface CliEnv {
  settings: Settings;
  boot(settings: Settings, opts?: { logger?: boolean }): Promise<Instance>;
}

export interface CliCommand {
  /** One line of `standin --help`, e.g. `trigger <event-type>       emit a webhook event`. */
  usage: string[];
  /** Loads the command's code when it runs, not at every start. Returns the exit code. */
  load(): Promise<(args: string[], env: CliEnv) => Promise<number>>;
}
