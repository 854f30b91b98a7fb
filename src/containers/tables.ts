import { PostgresAdapter, type Kysely, type Migration } from 'kysely';

/** Containers (`/v1/containers`), their files, and the files' bytes in parts. */
export interface ContainersTables {
  containers: {
    id: string;
    project_id: string;
    name: string;
    /** Unix seconds. */
    created_at: number;
    /** Unix seconds: creation, then every execution and every change of its files. */
    last_active_at: number;
    /** `expires_after.minutes` (anchor `last_active_at`, the only one). */
    expires_minutes: number;
    /** `1g`, `4g`, `16g` or `64g`, as asked (the sandbox's bound is the code_interpreter config's). */
    memory_limit: string;
  };
  container_files: {
    id: string;
    container_id: string;
    project_id: string;
    /** Where it sits in the sandbox, under /mnt/data/. */
    path: string;
    bytes: number;
    /** `user` (uploaded or copied from a file) or `assistant` (written by code). */
    source: string;
    created_at: number;
  };
  /** The bytes of a container file in order, about 1 MiB a row. */
  container_file_parts: {
    container_file_id: string;
    seq: number;
    data: Buffer;
  };
}

export const containersMigrations: Record<string, Migration> = {
  '202611290100_containers_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('containers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_active_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_minutes', 'integer', (c) => c.notNull())
        .addColumn('memory_limit', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('containers_project').on('containers').columns(['project_id', 'id']).execute();
      await db.schema
        .createTable('container_files')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('container_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('container_files_container').on('container_files').columns(['container_id', 'id']).execute();
      await db.schema.createIndex('container_files_path').on('container_files').columns(['container_id', 'path']).unique().execute();
      const binary = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
      await db.schema
        .createTable('container_file_parts')
        .addColumn('container_file_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('data', binary, (c) => c.notNull())
        .addPrimaryKeyConstraint('container_file_parts_pk', ['container_file_id', 'seq'])
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends ContainersTables {}
}
