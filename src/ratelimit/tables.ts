import type { Kysely, Migration } from 'kysely';

/** The rate-limit catalogue as the config file declared it, so every instance on one database sees it. */
export interface RateLimitTables {
  rate_limit_config: {
    /** `root`, `organization:<id>` or `project:<id>`. */
    scope: string;
    /** The config section, JSON. */
    value: string;
    /** Standin clock, ms. */
    updated_at: number;
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
};

declare module '../store/schema.js' {
  interface DB extends RateLimitTables {}
}
