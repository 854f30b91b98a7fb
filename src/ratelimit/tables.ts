import type { Generated, Kysely, Migration } from 'kysely';

/** What every instance on one database shares: the injected faults and the catalog as the config file declared it. */
export interface RateLimitTables {
  /** Injected faults, shared by every instance on the store (ratelimit/fault-sync.ts). */
  rate_limit_faults: {
    id: string;
    path: string;
    /** `*` or an HTTP method. */
    method: string;
    status: number;
    type: string;
    code: string | null;
    message: string | null;
    /** Requests still to fail; the row is deleted when it reaches 0. */
    remaining: number;
    retry_after_ms: number | null;
    /** Standin clock, Unix seconds. */
    created_at: number;
    /** Chance a matching request is taken, (0, 1]. */
    probability: Generated<number>;
    /** Seed of repeatable rolls, or null. */
    seed: number | null;
    /** Matching requests rolled so far (seeded faults: the n of the roll). */
    matched: Generated<number>;
    /** Wall-clock delay of a taken request. */
    latency_ms: Generated<number>;
  };
  /** The config file's `rate_limits` sections. */
  rate_limit_config: {
    /** `root`, `organization:<id>` or `project:<id>`. */
    scope: string;
    /** The config section, JSON. */
    value: string;
    /** Standin clock, ms. */
    updated_at: number;
  };
  /** Rule 4: input tokens held by the pending batches of an organization, per limit key (batch-queue.ts). */
  rate_limit_batch_queue: {
    organization_id: string;
    limit_key: string;
    tokens: number;
  };
}

export const rateLimitMigrations: Record<string, Migration> = {
  '202611220500_ratelimit_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('rate_limit_config')
        .addColumn('scope', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '202611230500_ratelimit_faults': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('rate_limit_faults')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('code', 'text')
        .addColumn('message', 'text')
        .addColumn('remaining', 'integer', (c) => c.notNull())
        .addColumn('retry_after_ms', 'integer')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  // Delay-only faults keep the NOT NULL status and type columns (SQLite cannot relax them): status 0, type ''.
  '202611261300_ratelimit_fault_options': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('rate_limit_faults')
        .addColumn('probability', 'double precision', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema.alterTable('rate_limit_faults').addColumn('seed', 'bigint').execute();
      await db.schema
        .alterTable('rate_limit_faults')
        .addColumn('matched', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('rate_limit_faults')
        .addColumn('latency_ms', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  '202611250100_ratelimit_batch_queue': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('rate_limit_batch_queue')
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('limit_key', 'text', (c) => c.notNull())
        .addColumn('tokens', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('rate_limit_batch_queue_pk', ['organization_id', 'limit_key'])
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends RateLimitTables {}
}
