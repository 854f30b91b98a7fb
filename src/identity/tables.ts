import type { Kysely, Migration } from 'kysely';

export interface IdentityTables {
  organizations: { id: string; name: string; created_at: number };
  projects: { id: string; organization_id: string; name: string; created_at: number };
  service_accounts: { id: string; organization_id: string; project_id: string; name: string; role: string; created_at: number };
  api_keys: {
    id: string;
    organization_id: string;
    project_id: string;
    /** Set for a service account's key. */
    service_account_id: string | null;
    name: string;
    hash: string;
    redacted: string;
    /** JSON Permissions, or null for all. */
    permissions: string | null;
    created_at: number;
  };
}

export const identityMigrations: Record<string, Migration> = {
  '202611220010_identity_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('projects')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('service_accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('service_account_id', 'text')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('redacted', 'text', (c) => c.notNull())
        .addColumn('permissions', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends IdentityTables {}
}
