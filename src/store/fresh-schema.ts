import { readFileSync } from 'node:fs';
import type SQLite from 'better-sqlite3';

/**
 * The SQLite schema every migration together makes on an empty store, captured by the build
 * (`scripts/fresh-schema.ts` writes dist/fresh-schema.json): a fresh folder gets it in one transaction rather
 * than running the migrations one by one through Kysely's Migrator, which was the largest part of a first
 * start after the bundle's load (bench/cold-start.mjs). `test/store/fresh-schema.test.ts` holds the two
 * stores side by side: tables, columns, indexes, keys and rows alike.
 */
export interface FreshSchema {
  /** The migrations it stands for, in order: used only when they are exactly this Standin's. */
  migrations: string[];
  /** `sqlite_master`'s statements, in the order SQLite recorded them. */
  sql: string[];
  /** The rows the migrations left (Kysely's lock row), by table; `kysely_migration`'s own are written anew. */
  rows: { table: string; rows: Record<string, unknown>[] }[];
}

/** Where the build writes it: beside the bundle (dist/). From the sources there is none, and migrations run. */
const FILE = new URL('./fresh-schema.json', import.meta.url);

let read: FreshSchema | null | undefined;
/** The build's fresh schema, or null (a run from the sources, or a file that is not one). Read once. */
export function builtFreshSchema(): FreshSchema | null {
  if (read !== undefined) return read;
  try {
    const value = JSON.parse(readFileSync(FILE, 'utf8')) as FreshSchema;
    read = Array.isArray(value.migrations) && Array.isArray(value.sql) && Array.isArray(value.rows) ? value : null;
  } catch {
    read = null;
  }
  return read;
}

const MIGRATIONS_TABLE = 'kysely_migration';

/** The schema and rows of a migrated store (`migrations`: the names its kysely_migration lists). */
export function captureFreshSchema(sqlite: SQLite.Database): FreshSchema {
  const master = sqlite
    .prepare(`select type, name, sql from sqlite_master where sql is not null and name not like 'sqlite_%' order by rowid`)
    .all() as { type: string; name: string; sql: string }[];
  const rows = master
    .filter((m) => m.type === 'table' && m.name !== MIGRATIONS_TABLE)
    .map((m) => ({ table: m.name, rows: sqlite.prepare(`select * from "${m.name}"`).all() as Record<string, unknown>[] }))
    .filter((t) => t.rows.length);
  const migrations = (sqlite.prepare(`select name from ${MIGRATIONS_TABLE}`).all() as { name: string }[])
    .map((r) => r.name)
    .sort((a, b) => a.localeCompare(b));
  return { migrations, sql: master.map((m) => m.sql), rows };
}

/**
 * Makes `schema` on an empty store in one transaction, its migrations recorded as applied now (as Kysely
 * records them: name, ISO time). The time is SQLite's own: Kysely's Migrator takes the wall time too, and
 * Standin's clock is read from the store only once it is migrated. False, with nothing written, when the
 * store is not empty or `migrations` (this Standin's, in order) are not the schema's: then the migrations
 * run as ever.
 */
export function applyFreshSchema(sqlite: SQLite.Database, schema: FreshSchema, migrations: readonly string[]): boolean {
  if (schema.migrations.length !== migrations.length || schema.migrations.some((n, i) => n !== migrations[i])) return false;
  const apply = sqlite.transaction(() => {
    // Checked inside the (immediate) transaction: another process making the store meanwhile waits or is seen.
    const existing = sqlite.prepare(`select count(*) as n from sqlite_master where name not like 'sqlite_%'`).get() as { n: number };
    if (existing.n) return false;
    for (const statement of schema.sql) sqlite.exec(statement);
    for (const { table, rows } of schema.rows)
      for (const row of rows) {
        const columns = Object.keys(row);
        sqlite
          .prepare(`insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map(() => '?').join(', ')})`)
          .run(...columns.map((c) => row[c]));
      }
    // Date's toISOString, to the millisecond: 2026-12-04T05:10:38.123Z.
    const record = sqlite.prepare(`insert into ${MIGRATIONS_TABLE} (name, timestamp) values (?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`);
    for (const name of migrations) record.run(name);
    return true;
  });
  return apply.immediate();
}
