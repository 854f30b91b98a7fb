import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, type Compilable, type Transaction } from 'kysely';
import SQLite from 'better-sqlite3';
import type pg from 'pg';
import { lazy } from '../core/lazy.js';
import type { DB } from './schema.js';

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
  close(): Promise<void>;
}

const pgLib = lazy<typeof pg>('pg');

/** Opens the store: PostgreSQL when `databaseUrl` is set, else SQLite (WAL) in `dataDir`. */
export function openStore(opts: { databaseUrl?: string; dataDir: string; poolSize?: number }): Store {
  if (opts.databaseUrl) {
    const pgm = pgLib();
    // int8 columns (timestamps, micros) come back as numbers: every value Standin stores fits in 2^53.
    pgm.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
    const pool = new pgm.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', pgPool: pool, close: () => db.destroy() };
  }
  const file = opts.dataDir === ':memory:' ? ':memory:' : join(ensureDir(opts.dataDir), 'standin.db');
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/**
 * Kysely prepares every query anew; preparing costs as much as running a small query. Queries are built
 * from a fixed set of shapes, so caching prepared statements by their SQL text is bounded and safe.
 */
function withStatementCache(sqlite: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  return new Proxy(sqlite, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (source: string) => {
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

function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** JSON columns are text in both stores: one code path, and SQLite has no json type. */
export const toJson = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
export const fromJson = <T>(v: string | null | undefined): T | null => (v == null ? null : (JSON.parse(v) as T));
export const toBool = (v: boolean | undefined | null): number => (v ? 1 : 0);

/**
 * A hot query compiled once: `build` makes it with placeholder values, and each call runs the same SQL
 * with new parameters (in the order the builder used them), skipping Kysely's per-call build and compile.
 */
export function precompiled<R>(build: (db: Db) => Compilable<R>): (exec: Exec, params: readonly unknown[]) => Promise<R[]> {
  const sqlByDb = new WeakMap<object, string>();
  return async (exec, params) => {
    let text = sqlByDb.get(exec);
    if (text === undefined) {
      text = build(exec as Db).compile().sql;
      sqlByDb.set(exec, text);
    }
    return (await exec.executeQuery<R>(CompiledQuery.raw(text, [...params]))).rows;
  };
}
