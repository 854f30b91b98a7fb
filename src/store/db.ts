import { claimFolder, folderError, prepareFolder } from './folder.js';
import { join } from 'node:path';
import {
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  SqliteDialect,
  type Compilable,
  type CompiledQuery,
  type PostgresPool,
  type PostgresPoolClient,
  type Transaction,
} from 'kysely';
import SQLite from 'better-sqlite3';
import type pg from 'pg';
import { lazy } from './lazy.js';
import type { DB } from './schema.js';
import { SnapshotReader } from './reader.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';
import { Pipeline } from './pipeline.js';
import { CopyData, copyIn } from './copy.js';
import { applyFreshSchema, type FreshSchema } from './fresh-schema.js';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;
/** A query executor: the database or a transaction inside it. */
export type Exec = Db | Tx;

export interface Store {
  db: Db;
  dialect: Dialect;
  /** With PostgreSQL, a dedicated client for LISTEN/NOTIFY; undefined on SQLite. */
  pgPool?: pg.Pool;
  /** With PostgreSQL, the pipelined connections of statements that need no transaction (store/pipeline.ts). */
  pipeline?: Pipeline;
  /**
   * Where another thread may open a connection of its own (the search worker reads chunks this way):
   * the PostgreSQL URL, or the SQLite file on disk; undefined for an in-memory SQLite store.
   */
  location?: { databaseUrl: string } | { sqliteFile: string };
  /** SQLite on disk: moves WAL checkpoints to a worker thread (store/checkpointer.ts) until close. */
  checkpointInBackground?(log: { warn(o: unknown, msg: string): void }): void;
  /** SQLite on disk: claims the folder for this process's workers until close (store/folder.ts). */
  claim?(): void;
  /** SQLite: makes a fresh store's schema in one transaction (store/fresh-schema.ts); false when it cannot. */
  createFresh?(migrations: readonly string[], schema: FreshSchema): boolean;
  close(): Promise<void>;
}

const pgLib = lazy<typeof pg>('pg');
const isPostgres = (adapter: object) => adapter instanceof PostgresAdapter;

/**
 * A value PostgreSQL keeps out of line (a file's part, a file's text, a chunk's text: over about 2 KB) is
 * compressed with lz4 where the server has it (PostgreSQL 14 and later, built with lz4, as Debian's and
 * the official images are), not with its default pglz: about the same size for half the server's CPU
 * (docs/deploy.md, section 2). One statement a new connection, that changes nothing elsewhere.
 * Not on the pipelined connections (store/pipeline.ts): they write short rows only.
 */
export const LZ4_TOAST = `select set_config('default_toast_compression', 'lz4', false) from pg_settings
  where name = 'default_toast_compression' and 'lz4' = any(enumvals)`;

/**
 * Statements compiled once (`precompiled` and its kin, `precompiledRows`): a fixed set of shapes, each
 * prepared by name on a pool connection the first time it runs there, so PostgreSQL parses and plans it
 * once a connection instead of at every run: 64–69 µs of PostgreSQL's CPU a short statement instead of
 * 110–130 (an indexed read and an update, one connection). The pipelined connections name every
 * statement themselves (store/pipeline.ts).
 */
const namedStatements = new Map<string, string>();
/** Distinct statements named at most (each a prepared statement on every pool connection that runs it). */
const MAX_NAMED = 1000;
/** Names a compiled statement's SQL for the pool's connections (PostgreSQL's SQL only: SQLite caches its own). */
function nameStatement(sql: string): void {
  if (!namedStatements.has(sql) && namedStatements.size < MAX_NAMED) namedStatements.set(sql, `standin_p${namedStatements.size}`);
}

/**
 * The pool as Kysely sees it: a named statement runs as a prepared statement of its connection. Another
 * instance changing a table under a prepared `SELECT *` (a newer version's migration) makes PostgreSQL
 * refuse it on that connection from then on ("cached plan must not change result type"): the statement
 * fails once, and the connection is dropped when released rather than kept with its stale statements.
 */
function withNamedStatements(pool: pg.Pool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let stale = false;
      const query = (sql: string | object, values?: readonly unknown[]) => {
        // A COPY's one parameter is its rows' bytes (copy.ts).
        if (values?.length === 1 && values[0] instanceof CopyData) return copyIn(client, sql as string, values[0]);
        const name = typeof sql === 'string' ? namedStatements.get(sql) : undefined;
        // A cursor (one argument) and any statement not compiled once go as they are.
        if (!name) return values === undefined ? client.query(sql as pg.Submittable) : client.query(sql as string, [...values]);
        return client.query({ text: sql as string, values: [...values!], name }).catch((err: unknown) => {
          if ((err as { code?: string }).code === '0A000') stale = true;
          throw err;
        });
      };
      return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release(stale || undefined) };
    },
    end: () => pool.end(),
  };
}

/** Opens the store: PostgreSQL when `databaseUrl` is set, else SQLite (WAL) in `dataDir`. */
export function openStore(opts: { databaseUrl?: string; dataDir: string; poolSize?: number; pipelines?: number }): Store {
  if (opts.databaseUrl) {
    const pgm = pgLib();
    // int8 columns (timestamps, micros) come back as numbers: every value Standin stores fits in 2^53.
    pgm.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
    // Bounded waits: a database that stops answering fails requests (503) instead of hanging them.
    const config = { connectionString: opts.databaseUrl, connectionTimeoutMillis: 5_000, query_timeout: 30_000 };
    const pool = new pgm.Pool({ ...config, max: opts.poolSize ?? 10 });
    // An idle connection the server ends (a restart, a failover, pg_terminate_backend, idle_session_timeout)
    // is an 'error' of the pool, which has already dropped it: the next checkout opens a new one. Unheard,
    // that event would end the process.
    pool.on('error', () => {});
    pool.on('connect', (client) => {
      // A checked-out connection has no listener of the pool's: its end (a network cut) already fails the
      // query it runs, and unheard it would also end the process. The pool drops it at release.
      client.on('error', () => {});
      // Queued ahead of the statement the connection was opened for. A broken connection fails that one too.
      void client.query(LZ4_TOAST).catch(() => {});
    });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: withNamedStatements(pool) }) });
    const pipeline = new Pipeline(() => new pgm.Client({ ...config, pipeline: true }), opts.pipelines ?? 1);
    pipelines.set(db, pipeline);
    return {
      db,
      dialect: 'postgres',
      pgPool: pool,
      pipeline,
      location: { databaseUrl: opts.databaseUrl },
      async close() {
        await pipeline.close();
        await db.destroy();
      },
    };
  }
  const file = opts.dataDir === ':memory:' ? ':memory:' : join(prepareFolder(opts.dataDir), 'standin.db');
  let sqlite: SQLite.Database;
  try {
    sqlite = new SQLite(file);
  } catch (err) {
    throw folderError(opts.dataDir, err);
  }
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const createFresh = (migrations: readonly string[], schema: FreshSchema) => applyFreshSchema(sqlite, schema, migrations);
  if (file === ':memory:') {
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
    return { db, dialect: 'sqlite', createFresh, close: () => db.destroy() };
  }
  const readConnection = new SQLite(file, { readonly: true });
  readConnection.pragma('busy_timeout = 5000');
  const reader = new SnapshotReader(readConnection);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, reader.end) }) });
  readers.set(db, reader);
  let checkpointer: Checkpointer | undefined;
  let release: (() => void) | undefined;
  return {
    db,
    dialect: 'sqlite',
    createFresh,
    location: { sqliteFile: file },
    checkpointInBackground(log) {
      checkpointer ??= startCheckpointer(sqlite, file, log);
    },
    claim() {
      release ??= claimFolder(opts.dataDir);
    },
    async close() {
      // The writer closes last: as the last connection it checkpoints and removes the WAL.
      await checkpointer?.stop();
      release?.();
      reader.close();
      await db.destroy();
    },
  };
}

/** A statement that does nothing, for a ROLLBACK SQLite already did. */
const NO_OP = { reader: false, run: () => ({ changes: 0, lastInsertRowid: 0 }), all: () => [] } as unknown as SQLite.Statement;

/** The read connection of each SQLite store (store/reader.ts). */
const readers = new WeakMap<object, SnapshotReader>();
/** The pipelined connections of each PostgreSQL store (store/pipeline.ts). */
const pipelines = new WeakMap<object, Pipeline>();

/**
 * Kysely prepares every query anew; preparing costs as much as running a small query. Queries are built
 * from a fixed set of shapes, so caching prepared statements by their SQL text is bounded and safe.
 * `beforeStatement` runs before each statement (Kysely prepares right before it runs one).
 */
function withStatementCache(sqlite: SQLite.Database, beforeStatement?: () => void): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  return new Proxy(sqlite, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (source: string) => {
          // SQLite rolls a transaction back itself on some errors (SQLITE_FULL, SQLITE_IOERR). Kysely's
          // ROLLBACK after that would fail with "no transaction is active" and hide the real cause.
          if (source === 'rollback' && !target.inTransaction) return NO_OP;
          beforeStatement?.();
          let stmt = cache.get(source);
          if (!stmt) {
            stmt = target.prepare(source);
            if (cache.size > 2000) cache.clear();
            cache.set(source, stmt);
          }
          return stmt;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Runs one statement outside any transaction (a statement is atomic on its own): on PostgreSQL with the
 * turn's pipelined statements (store/pipeline.ts), else on the database. Resolves once it is committed,
 * with the number of rows it changed. For short statements only: on a pipelined connection a slow one
 * would hold up those behind it.
 */
export async function runAlone(db: Db, query: Compilable<unknown>): Promise<number> {
  const compiled = query.compile();
  const pipe = pipelines.get(db);
  if (pipe) return pipe.write(compiled.sql, compiled.parameters);
  return Number((await db.executeQuery(compiled)).numAffectedRows ?? 0);
}

/**
 * Like `runAlone`, for a statement whose rows the caller needs (an `UPDATE … RETURNING`, a read that must
 * not be shared or remembered): on PostgreSQL with the turn's pipelined statements, else on the database.
 */
export async function queryAlone<R>(db: Db, query: Compilable<R>): Promise<R[]> {
  const compiled = query.compile();
  const pipe = pipelines.get(db);
  if (pipe) return pipe.returning<R>(compiled.sql, compiled.parameters);
  return (await db.executeQuery(compiled)).rows;
}

/**
 * Runs statements as one transaction, without waiting for one before sending the next (none may need
 * another's result): on PostgreSQL in one round trip on the turn's pipelined connection
 * (store/pipeline.ts), else in a transaction of the database. Resolves once committed, with each
 * statement's rows.
 */
export async function runTogether(db: Db, queries: readonly Compilable<unknown>[]): Promise<unknown[][]> {
  const compiled = queries.map((q) => q.compile());
  const pipe = pipelines.get(db);
  if (pipe) return pipe.transaction(compiled);
  return db.transaction().execute(async (tx) => {
    const rows: unknown[][] = [];
    for (const c of compiled) rows.push((await tx.executeQuery(c)).rows as unknown[]);
    return rows;
  });
}

/** Whether `runTogether` sends its statements in one round trip (PostgreSQL), rather than one after another. */
export const runsTogetherAtOnce = (db: Db): boolean => pipelines.has(db);

/** JSON columns are text in both stores: one code path, and SQLite has no json type. */
export const toJson = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
export const fromJson = <T>(v: string | null | undefined): T | null => (v == null ? null : (JSON.parse(v) as T));
export const toBool = (v: boolean | undefined | null): number => (v ? 1 : 0);

/**
 * A hot query built and compiled once per store, then run with fresh parameters: it skips Kysely's
 * per-call building and compiling. `build` receives sentinel values for the named parameters; the compiled
 * parameter list is mapped back to names, so any dialect's placeholders work. Run on the database itself,
 * a SELECT on SQLite runs synchronously on the store's read connection (store/reader.ts), off the
 * writer's queue, and on PostgreSQL it joins the turn's pipelined statements (store/pipeline.ts); in a
 * transaction, or a write, it runs through Kysely on the transaction's connection. Rows read outside a
 * transaction may be shared by the identical reads of one turn: they are not to be changed.
 */
export function precompiled<A extends Record<string, unknown>, R>(
  names: readonly (keyof A & string)[],
  build: (db: Db, args: A) => Compilable<R>,
) {
  const prepare = compiledOnce(names, build);
  return async (exec: Exec, args: A): Promise<R[]> => {
    const { compiled, parameters, reader, pipe } = prepare(exec, args);
    if (reader) return reader.all<R>(compiled.sql, parameters);
    if (pipe) return pipe.rows<R>(compiled.sql, parameters);
    return (await exec.executeQuery<R>({ ...compiled, parameters })).rows;
  };
}

/**
 * Like `precompiled`, for a query of one column: its values, row by row (shared: not to be changed). Its
 * answer must depend on the stored data alone (no `now()`, no random): it is remembered until the data
 * changes (store/reader.ts, store/pipeline.ts).
 */
export function precompiledColumn<A extends Record<string, unknown>, V>(
  names: readonly (keyof A & string)[],
  build: (db: Db, args: A) => Compilable<Record<string, V>>,
) {
  const prepare = compiledOnce(names, build);
  return async (exec: Exec, args: A): Promise<readonly V[]> => {
    const { compiled, parameters, reader, pipe } = prepare(exec, args);
    if (reader) return reader.column<V>(compiled.sql, parameters);
    if (pipe) return pipe.column<V>(compiled.sql, parameters);
    return (await exec.executeQuery<Record<string, V>>({ ...compiled, parameters })).rows.map((row) => Object.values(row)[0]);
  };
}

/**
 * Like `precompiled`, answering without a promise where the store reads synchronously (a SELECT on SQLite's
 * read connection, outside a transaction). It may throw synchronously.
 */
export function precompiledNow<A extends Record<string, unknown>, R>(
  names: readonly (keyof A & string)[],
  build: (db: Db, args: A) => Compilable<R>,
) {
  const prepare = compiledOnce(names, build);
  return (exec: Exec, args: A): R[] | Promise<R[]> => {
    const { compiled, parameters, reader, pipe } = prepare(exec, args);
    if (reader) return reader.all<R>(compiled.sql, parameters);
    if (pipe) return pipe.rows<R>(compiled.sql, parameters);
    return exec.executeQuery<R>({ ...compiled, parameters }).then((r) => r.rows);
  };
}

/**
 * Like `precompiledColumn`, answering without a promise where the store reads synchronously (a SELECT on
 * SQLite's read connection, outside a transaction): the hot reads of a small request then wait for no
 * turn of the microtask queue. It may throw synchronously.
 */
export function precompiledColumnNow<A extends Record<string, unknown>, V>(
  names: readonly (keyof A & string)[],
  build: (db: Db, args: A) => Compilable<Record<string, V>>,
) {
  const prepare = compiledOnce(names, build);
  return (exec: Exec, args: A): readonly V[] | Promise<readonly V[]> => {
    const { compiled, parameters, reader, pipe } = prepare(exec, args);
    if (reader) return reader.column<V>(compiled.sql, parameters);
    if (pipe) return pipe.column<V>(compiled.sql, parameters);
    return exec.executeQuery<Record<string, V>>({ ...compiled, parameters }).then((r) => r.rows.map((row) => Object.values(row)[0]));
  };
}

/** Like `precompiled`, for a write whose rows the caller does not need: the number of rows it changed. */
export function precompiledWrite<A extends Record<string, unknown>>(
  names: readonly (keyof A & string)[],
  build: (db: Db, args: A) => Compilable<unknown>,
) {
  const prepare = compiledOnce(names, build);
  return async (exec: Exec, args: A): Promise<number> => {
    const { compiled, parameters } = prepare(exec, args);
    return Number((await exec.executeQuery({ ...compiled, parameters })).numAffectedRows ?? 0);
  };
}

/** Like `precompiled`, for a statement sent with others (`runTogether`): the statement with this call's parameters. */
export function precompiledQuery<A extends Record<string, unknown>, R>(
  names: readonly (keyof A & string)[],
  build: (db: Db, args: A) => Compilable<R>,
) {
  const prepare = compiledOnce(names, build);
  return (exec: Exec, args: A): Compilable<R> => {
    const { compiled, parameters } = prepare(exec, args);
    return { compile: () => ({ ...compiled, parameters }) };
  };
}

/** Builds and compiles a query once per store; per call, its parameters and, for a SELECT on SQLite's database itself, the read connection. */
function compiledOnce<A extends Record<string, unknown>, R>(
  names: readonly (keyof A & string)[],
  build: (db: Db, args: A) => Compilable<R>,
) {
  // Each compiled parameter is a named argument, or a constant the builder wrote in.
  type Slot = { name: keyof A } | { value: unknown };
  // Keyed by the dialect adapter, which a database shares with its transactions.
  const cache = new WeakMap<object, { compiled: CompiledQuery<R>; order: Slot[]; select: boolean }>();
  return (exec: Exec, args: A) => {
    const executor = exec.getExecutor();
    let entry = cache.get(executor.adapter);
    if (!entry) {
      const sentinels = Object.fromEntries(names.map((n, i) => [n, `\u0000param${i}\u0000`])) as unknown as A;
      const compiled = build(exec as Db, sentinels).compile();
      if (isPostgres(executor.adapter)) nameStatement(compiled.sql);
      const order = compiled.parameters.map((p): Slot => {
        // eslint-disable-next-line no-control-regex -- the sentinels are NUL-delimited so no real value can match
        const m = typeof p === 'string' ? /^\u0000param(\d+)\u0000$/.exec(p) : null;
        return m ? { name: names[Number(m[1])] } : { value: p };
      });
      cache.set(executor.adapter, (entry = { compiled, order, select: compiled.query.kind === 'SelectQueryNode' }));
    }
    const { compiled, order, select } = entry;
    const parameters = order.map((slot) => ('name' in slot ? args[slot.name] : slot.value));
    return { compiled, parameters, reader: select ? readers.get(exec) : undefined, pipe: select ? pipelines.get(exec) : undefined };
  };
}

/**
 * A statement over a batch of rows (a multi-row INSERT) built and compiled once per store and number of
 * rows, then given each batch's values: Kysely's building and compiling of an insert of a dozen columns
 * cost more than SQLite's write of the row (bench/profile.mjs, the create). `build` receives rows of
 * sentinel values for the named columns; the compiled parameters are mapped back to (row, column), so any
 * dialect's placeholders work. Every value of the rows must be a parameter (no `sql` fragment, no
 * default): each row names every column. The answer is a `Compilable` for `runAlone` and its kin; at most
 * `maxRows` sizes are kept per store.
 */
export function precompiledRows<T extends Record<string, unknown>>(
  columns: readonly (keyof T & string)[],
  build: (db: Db, rows: T[]) => Compilable<unknown>,
  maxRows = 128,
) {
  type Slot = { row: number; column: keyof T } | { value: unknown };
  // Keyed by the dialect adapter, which a database shares with its transactions; then by the number of rows.
  const cache = new WeakMap<object, Map<number, { compiled: CompiledQuery<unknown>; order: Slot[] }>>();
  const compile = (db: Db, n: number) => {
    const sentinels = Array.from(
      { length: n },
      (_, r) => Object.fromEntries(columns.map((c, i) => [c, `\u0000row${r}:${i}\u0000`])) as unknown as T,
    );
    const compiled = build(db, sentinels).compile();
    if (isPostgres(db.getExecutor().adapter)) nameStatement(compiled.sql);
    const order = compiled.parameters.map((p): Slot => {
      // eslint-disable-next-line no-control-regex -- the sentinels are NUL-delimited so no real value can match
      const m = typeof p === 'string' ? /^\u0000row(\d+):(\d+)\u0000$/.exec(p) : null;
      return m ? { row: Number(m[1]), column: columns[Number(m[2])] } : { value: p };
    });
    return { compiled, order };
  };
  return (db: Db, rows: T[]): Compilable<unknown> => {
    const adapter = db.getExecutor().adapter;
    let sizes = cache.get(adapter);
    if (!sizes) cache.set(adapter, (sizes = new Map()));
    let entry = sizes.get(rows.length);
    if (!entry) {
      // A column the list leaves out would be dropped from every insert without a word: told at the first.
      const left = rows.length ? Object.keys(rows[0]).filter((k) => !columns.includes(k as keyof T & string)) : [];
      if (left.length) throw new Error(`precompiledRows: the row's ${left.join(', ')} is not among the statement's columns`);
      entry = compile(db, rows.length);
      if (rows.length <= maxRows) sizes.set(rows.length, entry);
    }
    const { compiled, order } = entry;
    const parameters = order.map((slot) => ('row' in slot ? rows[slot.row][slot.column] : slot.value));
    return { compile: () => ({ ...compiled, parameters }) };
  };
}
