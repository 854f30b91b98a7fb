import { PostgresAdapter, type Kysely, type Migration } from 'kysely';

/** Uploaded files (`/v1/files`) and, on PostgreSQL, their bytes in parts every instance can read. */
export interface FilesTables {
  files: {
    id: string;
    project_id: string;
    filename: string;
    bytes: number;
    purpose: string;
    /** Unix seconds. */
    created_at: number;
    /** Unix seconds; null: kept until deleted. */
    expires_at: number | null;
  };
  /** The bytes of a file in order, about 1 MiB a row (storage/db.ts); unused by the data-folder storage. */
  file_parts: {
    file_id: string;
    seq: number;
    data: Buffer;
  };
}

export const filesMigrations: Record<string, Migration> = {
  '202611240100_files_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('files')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .execute();
      await db.schema.createIndex('files_project').on('files').columns(['project_id', 'id']).execute();
      // bytea on PostgreSQL, blob on SQLite.
      const binary = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
      await db.schema
        .createTable('file_parts')
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('data', binary, (c) => c.notNull())
        .addPrimaryKeyConstraint('file_parts_pk', ['file_id', 'seq'])
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends FilesTables {}
}
