import type { Kysely, Migration } from 'kysely';

/**
 * What a host session needs on whichever instance a request lands (no sticky sessions): the connections'
 * descriptions (each instance opens its own MCP client from them), the component documents the widget
 * listener serves, the uploaded files, and the key that signs download URLs.
 */
export interface AppHostTables {
  app_host_connections: {
    id: string;
    /** The server as the page gave it (URL, or a command line allowed on the command line). */
    server: string;
    locale: string;
    /** JSON: tools, findings, templates and serverInfo as read and linted at connect (or refresh). */
    state: string;
    /** Standin clock, ms. */
    updated_at: number;
  };
  app_host_documents: {
    id: string;
    html: string;
    csp: string;
    /** The host (name:port) the document must be requested on. */
    origin: string;
    /** Standin clock, ms. */
    created_at: number;
    /** The strict policy sent report-only beside a lenient one ('' under the strict profile). */
    csp_report_only: string;
    /** The connection and template the document was rendered from (CSP reports are recorded against them). */
    connection: string;
    uri: string;
  };
  /** What components needed that the strict CSP refuses, from their violation reports: one row per need. */
  app_host_csp_needs: {
    connection: string;
    uri: string;
    /** The directive and the source it would need, e.g. `script-src` `'unsafe-eval'`, `worker-src` `blob:`. */
    directive: string;
    source: string;
    /** 1 when the CSP in force refused it too (the component broke here), 0 when only the strict policy would. */
    blocked: number;
    /** Standin clock, ms. */
    created_at: number;
  };
  app_host_files: {
    id: string;
    file_name: string;
    mime_type: string;
    size: number;
    /** 1 when saved to the user's file library (offered by selectFiles). */
    library: number;
    /** The bytes, base64 (one text column on both stores; files are at most 20 MB). */
    bytes: string;
    /** Standin clock, ms. */
    created_at: number;
  };
  app_host_keys: {
    name: string;
    /** base64url. */
    value: string;
  };
}

export const appHostMigrations: Record<string, Migration> = {
  '202611231220_apps_host_state': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('app_host_connections')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server', 'text', (c) => c.notNull())
        .addColumn('locale', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('app_host_documents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('html', 'text', (c) => c.notNull())
        .addColumn('csp', 'text', (c) => c.notNull())
        .addColumn('origin', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('app_host_documents_created').on('app_host_documents').column('created_at').execute();
      await db.schema
        .createTable('app_host_files')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('library', 'integer', (c) => c.notNull())
        .addColumn('bytes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('app_host_keys')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '202611261600_apps_host_csp_reports': {
    async up(db: Kysely<any>) {
      for (const column of ['csp_report_only', 'connection', 'uri'])
        await db.schema
          .alterTable('app_host_documents')
          .addColumn(column, 'text', (c) => c.notNull().defaultTo(''))
          .execute();
      await db.schema
        .createTable('app_host_csp_needs')
        .addColumn('connection', 'text', (c) => c.notNull())
        .addColumn('uri', 'text', (c) => c.notNull())
        .addColumn('directive', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('blocked', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('app_host_csp_needs_pk', ['connection', 'uri', 'directive', 'source'])
        .execute();
    },
  },
};

declare module '../../store/schema.js' {
  interface DB extends AppHostTables {}
}
