import type { Kysely, Migration } from 'kysely';

/** The objects behind safety events: cases (warnings, deactivations) and alerts. */
export interface SafetyTables {
  safety_cases: {
    id: string;
    organization_id: string;
    /** The project whose webhooks announced the case. */
    project_id: string;
    /** The case object, JSON. */
    payload: string;
    created_at: number;
  };
  safety_alerts: {
    id: string;
    organization_id: string;
    /** Null for an organization-wide (enterprise workspace) alert. */
    project_id: string | null;
    payload: string;
    created_at: number;
  };
}

export const safetyMigrations: Record<string, Migration> = {
  '202611220310_safety_init': {
    async up(db: Kysely<any>) {
      for (const table of ['safety_cases', 'safety_alerts']) {
        await db.schema
          .createTable(table)
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('organization_id', 'text', (c) => c.notNull())
          .addColumn('project_id', 'text', table === 'safety_cases' ? (c) => c.notNull() : (c) => c)
          .addColumn('payload', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
      }
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends SafetyTables {}
}
