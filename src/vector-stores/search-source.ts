import type SQLiteType from 'better-sqlite3';
import type pgType from 'pg';
import { lazy } from '../store/lazy.js';
import { MAX_RUN } from './ingest-segments.js';

/**
 * The search worker's own reads of a store's files and chunks (search-worker.ts): a connection of its
 * own to the database the server uses, so loading an index reads and decodes no row on the server's
 * thread. SQLite: a read-only connection to the file (WAL readers do not block the writer); PostgreSQL:
 * one client. An in-memory SQLite store has no location another thread can open: the server's thread
 * reads for it (index-cache.ts).
 */
export type SourceLocation = { databaseUrl: string } | { sqliteFile: string };

/** A completed file of a store: id, name, attributes (JSON text). */
export type FileRow = [fileId: string, filename: string, attributes: string | null];
/** A chunk: file id, seq, text, embedding (float32 little-endian), embedder. */
export type ChunkRow = [fileId: string, seq: number, text: string, embedding: Uint8Array, embedder: string];
/** A chunk's key: where the next page starts after. */
export type ChunkKey = { fileId: string; seq: number };
/** A page of chunks: those of completed files among the rows read, and the last row's key (null: no rows are left after them). */
export type RowPage = { rows: ChunkRow[]; next: ChunkKey | null };

export interface Source {
  /** The completed files of a store (of some files only, when given). */
  files(storeId: string, fileIds?: readonly string[]): Promise<FileRow[]>;
  /**
   * The chunks of completed files among the next `limit` of a store's chunk rows after a key, in file and
   * chunk order (of some files only, when given).
   */
  chunks(storeId: string, after: ChunkKey | null, limit: number, fileIds?: readonly string[]): Promise<RowPage>;
  /** Which of these stores still exist (the sweep of saved indexes, index-file.ts). */
  existing(storeIds: readonly string[]): Promise<Set<string>>;
  close(): Promise<void>;
}

const sqliteLib = lazy<typeof SQLiteType>('better-sqlite3');
const pgLib = lazy<typeof pgType>('pg');

const FILES = 'SELECT file_id, filename, attributes FROM vector_store_files WHERE vector_store_id = $1 AND status = $2';
const EXISTING = 'SELECT id FROM vector_stores WHERE id = ANY($1)';
/** The status of a chunk row's file (`c`), looked up by key: the server's reads use it too (store.ts `fileStatus`). */
export const FILE_STATUS =
  '(SELECT f.status FROM vector_store_files f WHERE f.vector_store_id = c.vector_store_id AND f.file_id = c.file_id)';
/**
 * Chunk rows in the primary key's order, each with whether its file is completed: an ingestion writes a
 * file's rows over several transactions (ingest.ts), and only a completed file's count. The check is a
 * subquery per row read, not a condition: as a join (`file_id IN (…)`), PostgreSQL read every file's rows
 * after the key and sorted them on disk for each page (1 s a page of 2,000 at 100,000 chunks), and
 * SQLite scanned the chunks of every file before the key.
 * A chunk's text is its own, or its run of its file's text parts (tables.ts, `text_from`), joined in
 * order by each database's aggregate; empty if they are gone (the file changed: its next change brings it)
 * or the run is longer than MAX_RUN (ingest-segments.ts).
 */
const chunksSql = (joined: string) =>
  `SELECT file_id, seq, CASE WHEN c.text_from IS NULL THEN c.text WHEN c.text_to - c.text_from >= ${MAX_RUN} THEN '' ELSE COALESCE((SELECT ${joined} FROM vector_store_texts t` +
  " WHERE t.vector_store_id = c.vector_store_id AND t.file_id = c.file_id AND t.part BETWEEN c.text_from AND c.text_to), '') END," +
  ` embedding, embedder, ${FILE_STATUS} FROM vector_store_chunks c WHERE vector_store_id = $1`;
const CHUNKS_SQLITE = chunksSql("group_concat(t.text, '' ORDER BY t.part)");
const CHUNKS_PG = chunksSql("string_agg(t.text, '' ORDER BY t.part)");

export function openSource(at: SourceLocation): Source {
  return 'sqliteFile' in at ? sqliteSource(at.sqliteFile) : postgresSource(at.databaseUrl);
}

function sqliteSource(file: string): Source {
  const SQLite = sqliteLib();
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const statements = new Map<string, SQLiteType.Statement>();
  const prepare = (sql: string) => {
    let st = statements.get(sql);
    if (!st) {
      // A file list is a JSON array read by json_each; $n placeholders (each used once, in order) become ?.
      const text = sql.replace(/= ANY\(\$\d+\)/g, () => 'IN (SELECT value FROM json_each(?))').replace(/\$\d+/g, () => '?');
      st = db.prepare(text).raw(true);
      statements.set(sql, st);
    }
    return st;
  };
  return {
    files(storeId, fileIds) {
      const sql = FILES + (fileIds ? ' AND file_id = ANY($3)' : '');
      const args: unknown[] = [storeId, 'completed'];
      if (fileIds) args.push(JSON.stringify(fileIds));
      return Promise.resolve(prepare(sql).all(...args) as FileRow[]);
    },
    chunks(storeId, after, limit, fileIds) {
      const { sql, args } = chunkQuery(CHUNKS_SQLITE, storeId, after, limit, fileIds ? JSON.stringify(fileIds) : undefined);
      return Promise.resolve(pageOf(prepare(sql).all(...args) as ReadRow[], limit));
    },
    existing(storeIds) {
      return Promise.resolve(new Set((prepare(EXISTING).all(JSON.stringify(storeIds)) as [string][]).map((r) => r[0])));
    },
    close() {
      db.close();
      return Promise.resolve();
    },
  };
}

function postgresSource(url: string): Source {
  const pg = pgLib();
  let client: Promise<pgType.Client> | undefined;
  const connect = () =>
    (client ??= (async () => {
      const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, query_timeout: 120_000 });
      // A connection the server ends fails the query running on it; the next read opens a new one.
      c.on('error', () => {
        client = undefined;
      });
      await c.connect().catch((err: Error) => {
        client = undefined;
        throw err;
      });
      return c;
    })());
  const query = async <R>(text: string, values: unknown[]): Promise<R[]> => {
    const c = await connect();
    try {
      return (await c.query<R & unknown[]>({ text, values, rowMode: 'array' })).rows;
    } catch (err) {
      // A broken connection is not used again.
      if (client && !(err as { code?: string }).code) {
        client = undefined;
        void c.end().catch(() => {});
      }
      throw err;
    }
  };
  return {
    files: (storeId, fileIds) =>
      query<FileRow>(FILES + (fileIds ? ' AND file_id = ANY($3)' : ''), fileIds ? [storeId, 'completed', fileIds] : [storeId, 'completed']),
    async chunks(storeId, after, limit, fileIds) {
      const { setting, sql, args } = postgresPage(storeId, after, limit, fileIds);
      // Both queued at once: no other read of this connection comes between them.
      const [, read] = await Promise.all([query(setting, []), query<ReadRow>(sql, args)]);
      return pageOf(read, limit);
    },
    async existing(storeIds) {
      return new Set((await query<[string]>(EXISTING, [storeIds])).map((r) => r[0]));
    },
    async close() {
      const c = client;
      client = undefined;
      await (await c?.catch(() => undefined))?.end().catch(() => {});
    },
  };
}

/**
 * A page's read on PostgreSQL: a planner setting, then the page's SQL. A whole store is read in its
 * primary key's order, a page after the other. Left to its estimates (none yet for a store just filled
 * or restored), PostgreSQL read the rest of the store and sorted it on disk for every page: 0.36 s a page
 * at 100,000 chunks, against 28 ms in the key's order. So sorting is off for those pages; a delta's few
 * files are found by their ids, and sorted.
 */
export function postgresPage(storeId: string, after: ChunkKey | null, limit: number, fileIds?: readonly string[]) {
  return { setting: `SET enable_sort = ${fileIds ? 'on' : 'off'}`, ...chunkQuery(CHUNKS_PG, storeId, after, limit, fileIds) };
}

/** A chunk row as read: its file's status last. */
type ReadRow = [...ChunkRow, status: string | null];

/** The page of the rows read: those of completed files, and where the next page starts (none after a short read). */
function pageOf(read: ReadRow[], limit: number): RowPage {
  const last = read.at(-1);
  return {
    rows: read.filter((r) => r[5] === 'completed').map((r) => r.slice(0, 5) as ChunkRow),
    next: last && read.length >= limit ? { fileId: last[0], seq: last[1] } : null,
  };
}

/** The chunk page's SQL: a row comparison after the key, which both databases answer from the primary key's order. */
function chunkQuery(base: string, storeId: string, after: ChunkKey | null, limit: number, files: unknown) {
  let sql = base;
  const args: unknown[] = [storeId];
  if (files !== undefined) {
    args.push(files);
    sql += ` AND file_id = ANY($${args.length})`;
  }
  if (after) {
    args.push(after.fileId, after.seq);
    sql += ` AND (file_id, seq) > ($${args.length - 1}, $${args.length})`;
  }
  args.push(limit);
  sql += ` ORDER BY file_id, seq LIMIT $${args.length}`;
  return { sql, args };
}
