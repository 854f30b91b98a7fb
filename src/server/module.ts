import type { FastifyInstance } from 'fastify';
import type { Migration } from 'kysely';
import type { TSchema } from 'typebox';
import type { Ctx } from '../core/context.js';
import type { JobDefinition } from '../core/jobs.js';
import type { Tx } from '../store/db.js';

/**
 * A feature module (ads, identity, webhooks, assistants …) plugs into the server through this one shape.
 * `src/server/modules.ts` lists the modules; nothing else needs to know about them.
 */
export interface Module {
  name: string;
  /** Migrations keyed by a name that starts with a timestamp (`202611220100_ads_init`). */
  migrations?: Record<string, Migration>;
  /** Parts of the declarative config file this module owns. */
  config?: ConfigSection[];
  /** Called once after the store is ready, before routes: build services, register jobs, publish in ctx.services. */
  init?(ctx: Ctx): Promise<void> | void;
  /** Registers HTTP routes on the main listener. The module picks its prefixes (`/v1`, `/ads/v1`, `/admin/v1`). */
  routes?(app: FastifyInstance, ctx: Ctx): Promise<void> | void;
  /** Job kinds this module's workers run. */
  jobs?(ctx: Ctx): JobDefinition[];
  /** Starts extra listeners or timers once the HTTP server listens; stopped in reverse order. */
  start?(ctx: Ctx): Promise<void> | void;
  stop?(ctx: Ctx): Promise<void> | void;
  /** First-start demo data (skipped with --no-seed or a config file). Returns lines to print. */
  seed?(ctx: Ctx, tx: Tx, demo: DemoIds): Promise<string[]> | string[];
  /** Deletes this module's state (admin reset). Tables are emptied by the core; this clears caches. */
  reset?(ctx: Ctx): Promise<void> | void;
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
export interface ConfigSection {
  at: 'root' | 'organization' | 'project';
  key: string;
  schema: TSchema;
  apply(ctx: Ctx, tx: Tx, value: any, parent: { organizationId?: string; projectId?: string }): Promise<void>;
}
