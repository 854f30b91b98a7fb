import { PostgresAdapter, sql, type ColumnType, type Kysely, type Migration } from 'kysely';

/** Vector stores, their files and file batches, the extracted text of each file and its chunks. */
export interface VectorStoreTables {
  vector_stores: {
    id: string;
    project_id: string;
    name: string;
    description: string | null;
    /** Unix seconds. */
    created_at: number;
    last_active_at: number;
    /** `{anchor: 'last_active_at', days}` JSON, or null. */
    expires_after: string | null;
    metadata: string | null;
    /** Grows with every change of the store's chunks or file attributes: search indexes are cached by it. */
    index_version: number;
    /**
     * The thread Standin made this store for (its `vector_stores` helper, its messages' file_search
     * attachments): the store is deleted with that thread. Null for a store the client created.
     */
    made_for_thread: string | null;
  };
  vector_store_files: {
    vector_store_id: string;
    file_id: string;
    project_id: string;
    /** The file's name when attached (search results name it even after the file is gone). */
    filename: string;
    status: 'in_progress' | 'completed' | 'cancelled' | 'failed';
    usage_bytes: number;
    created_at: number;
    /** `{code, message}` JSON, or null. */
    last_error: string | null;
    /** `{max_chunk_size_tokens, chunk_overlap_tokens}` JSON. */
    chunking: string;
    attributes: string | null;
    batch_id: string | null;
    /** The attachment this ingestion job serves: a job of an earlier attachment finds another one and does nothing. */
    ingest_id: string;
  };
  vector_store_file_batches: {
    id: string;
    vector_store_id: string;
    project_id: string;
    created_at: number;
    cancelled_at: number | null;
  };
  /**
   * The text extracted from an ingested file (`…/files/{id}/content`), in parts of at most TEXT_PART
   * characters (ingest-protocol.ts), numbered from 0: no single write or read of a large file's text holds SQLite
   * (which runs on the server's thread) for long. Since chunks are stored as runs of parts, the text is
   * also cut at every chunk's edges (ingest-segments.ts): a file's parts are then a chunk's half or so.
   */
  vector_store_texts: {
    vector_store_id: string;
    file_id: string;
    part: number;
    text: string;
  };
  vector_store_chunks: {
    vector_store_id: string;
    file_id: string;
    seq: number;
    /** The chunk's text; empty when `text_from` is set. */
    text: string;
    /**
     * The chunk's text as the parts `text_from` … `text_to` of its file's text (vector_store_texts), or
     * null when `text` holds it: an ingestion cuts the text at every chunk's edges so that each chunk is a
     * run of whole parts, and the chunks (auto chunking: every character in two) store no text of their
     * own. A chunk that is no slice of the text (a cut character, chunk.ts) keeps its text.
     */
    text_from: ColumnType<number | null, number | null | undefined, never>;
    text_to: ColumnType<number | null, number | null | undefined, never>;
    tokens: number;
    /** Float32 little-endian, L2-normalized. */
    embedding: Buffer;
    /** Which embedder made it (`builtin:…`, `upstream:<model>`): a query is compared only with vectors of its own embedder. */
    embedder: string;
  };
  /**
   * Which files each `index_version` of a store changed (chunks or attributes): an instance whose index is
   * at version v applies only the files changed after v. The last CHANGES_KEPT versions are kept.
   */
  vector_store_changes: {
    vector_store_id: string;
    version: number;
    file_id: string;
  };
}

export const vectorStoreMigrations: Record<string, Migration> = {
  '202611240200_vector_stores_init': {
    async up(db: Kysely<any>) {
      const binary = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
      await db.schema
        .createTable('vector_stores')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_active_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_after', 'text')
        .addColumn('metadata', 'text')
        .addColumn('index_version', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('vector_stores_project').on('vector_stores').columns(['project_id', 'id']).execute();
      await db.schema
        .createTable('vector_store_files')
        .addColumn('vector_store_id', 'text', (c) => c.notNull())
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('usage_bytes', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('chunking', 'text', (c) => c.notNull())
        .addColumn('attributes', 'text')
        .addColumn('batch_id', 'text')
        .addColumn('ingest_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('vector_store_files_pk', ['vector_store_id', 'file_id'])
        .execute();
      await db.schema.createIndex('vector_store_files_file').on('vector_store_files').columns(['project_id', 'file_id']).execute();
      await db.schema.createIndex('vector_store_files_batch').on('vector_store_files').columns(['batch_id']).execute();
      await db.schema
        .createTable('vector_store_file_batches')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('vector_store_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('cancelled_at', 'bigint')
        .execute();
      await db.schema
        .createTable('vector_store_texts')
        .addColumn('vector_store_id', 'text', (c) => c.notNull())
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('vector_store_texts_pk', ['vector_store_id', 'file_id'])
        .execute();
      await db.schema
        .createTable('vector_store_chunks')
        .addColumn('vector_store_id', 'text', (c) => c.notNull())
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('tokens', 'integer', (c) => c.notNull())
        .addColumn('embedding', binary, (c) => c.notNull())
        .addColumn('embedder', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('vector_store_chunks_pk', ['vector_store_id', 'file_id', 'seq'])
        .execute();
    },
  },
  '202611250300_vector_stores_made_for_thread': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('vector_stores').addColumn('made_for_thread', 'text').execute();
      await db.schema.createIndex('vector_stores_made_for_thread').on('vector_stores').columns(['made_for_thread']).execute();
    },
  },
  // An upgraded store has no changes logged yet: every instance loads a store's index whole at its first
  // search there, then follows the log.
  '202611281200_vector_store_changes': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('vector_store_changes')
        .addColumn('vector_store_id', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('vector_store_changes_pk', ['vector_store_id', 'version', 'file_id'])
        .execute();
    },
  },
  // A file's text in parts: the table made anew with `part` in its key (SQLite cannot change a key), each
  // text kept as its part 0. A snapshot made before keeps its rows: `part` takes its default there.
  '202611301200_vector_store_text_parts': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('vector_store_text_parts')
        .addColumn('vector_store_id', 'text', (c) => c.notNull())
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addColumn('part', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('text', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('vector_store_text_parts_pk', ['vector_store_id', 'file_id', 'part'])
        .execute();
      await sql`INSERT INTO vector_store_text_parts (vector_store_id, file_id, part, text) SELECT vector_store_id, file_id, 0, text FROM vector_store_texts`.execute(
        db,
      );
      await db.schema.dropTable('vector_store_texts').execute();
      await db.schema.alterTable('vector_store_text_parts').renameTo('vector_store_texts').execute();
    },
  },
  // Chunks as runs of their file's text parts (`text_from`, `text_to`). Rows written before keep their text.
  '202612010600_vector_store_chunk_spans': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('vector_store_chunks').addColumn('text_from', 'integer').execute();
      await db.schema.alterTable('vector_store_chunks').addColumn('text_to', 'integer').execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends VectorStoreTables {}
}
