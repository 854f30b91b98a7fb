import { sql, type Kysely } from 'kysely';
import { stateTables } from '../admin/service.js';
import type { Exec, Store } from '../store/db.js';
import type { StoreTable } from '../store/tables.js';
import { kindOf, type Kind } from './format.js';

/**
 * The files area's PostgreSQL storage keeps bytes in this table (files/storage/db.ts); a snapshot carries
 * them through the storage interface instead, so a snapshot of either storage imports into the other.
 */
const STORAGE_TABLES = new Set(['file_parts']);

/**
 * Secrets an instance made for itself (the app host's signing keys, the key that seals reasoning items'
 * `encrypted_content`): neither exported nor imported, and a snapshot naming one is refused. An import
 * empties them as a reset does; the instance makes new ones.
 */
export const INSTANCE_TABLES = new Set(['app_host_keys', 'response_secrets']);

/**
 * The `settings` rows a snapshot carries; every other one (the admin key, `config.trust_proxy`,
 * `config.vendor`, the clock's rows, which travel in the header) is the instance's own: left out of an
 * export, refused in an import. A list of what may travel, so a setting added later stays home until
 * it is named here.
 */
const TRAVELLING_SETTINGS = new Set(['seeded_at', 'retention_policy', 'retention_last_sweep']);

/** Whether a `settings` row of this key travels in snapshots. */
export const settingTravels = (key: unknown): boolean => typeof key === 'string' && TRAVELLING_SETTINGS.has(key);

/** A row's values as the object the store is given: checks read the same object the insert writes. */
export function rowOf(columns: [string, Kind][], values: unknown[]): Record<string, unknown> {
  return Object.fromEntries(columns.map(([c], i) => [c, values[i]]));
}

/** The table whose rows are the stored files: each row's `id` names bytes in the files area's storage. */
export const FILES_TABLE = 'files';

export interface TableShape {
  name: string;
  columns: [string, Kind][];
}

/**
 * The tables a snapshot carries: every table reset empties, as the database reports them now, each after
 * the tables its foreign keys point to (PostgreSQL checks them row by row, so parents are imported first).
 */
export async function snapshotTables(store: Pick<Store, 'db' | 'dialect'>): Promise<TableShape[]> {
  const tables = (await stateTables(store)).filter((t) => !STORAGE_TABLES.has(t.name) && !INSTANCE_TABLES.has(t.name));
  const parents = new Map<string, string[]>();
  for (const { child, parent } of await foreignKeys(store)) parents.set(child, [...(parents.get(child) ?? []), parent]);
  const ordered: StoreTable[] = [];
  const placed = new Set<string>();
  const place = (t: StoreTable, path: Set<string>) => {
    if (placed.has(t.name) || path.has(t.name)) return;
    path.add(t.name);
    for (const p of parents.get(t.name) ?? []) {
      const parent = tables.find((x) => x.name === p);
      if (parent) place(parent, path);
    }
    placed.add(t.name);
    ordered.push(t);
  };
  for (const t of tables) place(t, new Set());
  return ordered.map(shapeOf);
}

async function foreignKeys(store: Pick<Store, 'db' | 'dialect'>): Promise<{ child: string; parent: string }[]> {
  const query =
    store.dialect === 'postgres'
      ? sql<{ child: string; parent: string }>`select ch.relname as child, pa.relname as parent from pg_constraint c
          join pg_class ch on ch.oid = c.conrelid join pg_class pa on pa.oid = c.confrelid
          where c.contype = 'f' and c.connamespace = (select oid from pg_namespace where nspname = current_schema())`
      : sql<{ child: string; parent: string }>`select m.name as child, p."table" as parent
          from sqlite_master m join pragma_foreign_key_list(m.name) p where m.type = 'table'`;
  return (await query.execute(store.db)).rows;
}

function shapeOf(t: StoreTable): TableShape {
  return { name: t.name, columns: t.columns.map((c) => [c.name, kindOf(t.name, c)]) };
}

/** A query builder over tables known only by name at run time (a snapshot's). */
export const untyped = (exec: Exec) => exec as unknown as Kysely<Record<string, Record<string, unknown>>>;

const BATCH = 1000;

/**
 * Every row of `table`, a batch at a time (never the whole table in memory), inside the caller's
 * transaction so all tables are read as of one moment.
 */
export async function* readRows(exec: Exec, dialect: Store['dialect'], table: string): AsyncGenerator<Record<string, unknown>> {
  if (dialect === 'sqlite') {
    yield* untyped(exec).selectFrom(table).selectAll().stream(BATCH);
    return;
  }
  // PostgreSQL: a server-side cursor (the pool's driver has no streaming of its own).
  await sql`DECLARE standin_snapshot NO SCROLL CURSOR FOR SELECT * FROM ${sql.table(table)}`.execute(exec);
  try {
    for (;;) {
      const { rows } = await sql<Record<string, unknown>>`FETCH ${sql.raw(String(BATCH))} FROM standin_snapshot`.execute(exec);
      yield* rows;
      if (rows.length < BATCH) return;
    }
  } finally {
    await sql`CLOSE standin_snapshot`.execute(exec);
  }
}
