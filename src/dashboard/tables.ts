import type { Kysely, Migration } from 'kysely';

/** Sign-in links used and sessions signed out, until they would have expired anyway: every instance refuses them. */
export interface DashboardTables {
  dashboard_spent_tokens: {
    /** The token's random part. */
    nonce: string;
    /** `link` or `session`. */
    kind: string;
    /** When the token would have expired, real time (ms): then the row can go. */
    expires_at: number;
  };
}

export const dashboardMigrations: Record<string, Migration> = {
  '202611231410_dashboard_spent_tokens': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('dashboard_spent_tokens')
        .addColumn('nonce', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('dashboard_spent_tokens_expiry').on('dashboard_spent_tokens').columns(['expires_at']).execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends DashboardTables {}
}
