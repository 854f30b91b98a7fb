import { sql, Migrator, type DatabaseIntrospector, type Kysely, type Migration, type MigrationProvider, type TableMetadata } from 'kysely';
import type { DB } from './schema.js';
import type { Store } from './db.js';
import { builtFreshSchema, type FreshSchema } from './fresh-schema.js';
import { storeTables } from './tables.js';

/**
 * Runs every module's migrations. Kysely orders migrations by name, so names start with a timestamp
 * (`202611220001_core_init`); modules never reference each other's tables, so interleaving is safe.
 */
export async function migrate(
  store: Store,
  modules: readonly { migrations?: Record<string, Migration> }[],
  /** Stop after this migration (a snapshot's store is rebuilt as it was, then migrated on). */
  upTo?: string,
  /** Called once when there is something to migrate, before the first migration runs (the start is logged). */
  onStart?: () => void,
  /** The schema all the migrations make on an empty SQLite store; by default the build's (store/fresh-schema.ts). */
  fresh?: FreshSchema | null,
): Promise<string[]> {
  const all: Record<string, Migration> = {};
  for (const m of modules) {
    for (const [name, migration] of Object.entries(m.migrations ?? {})) {
      if (all[name]) throw new Error(`two migrations are named ${name}`);
      all[name] = migration;
    }
  }
  // A store that has them all (every start but the first) skips the Migrator: its catalog introspection and
  // lock were a tenth of a start on an existing folder (bench/cold-start.mjs).
  const done = await appliedNames(store);
  if (done && Object.keys(all).every((n) => done.has(n))) return [];
  onStart?.();
  // A fresh SQLite store gets the schema the migrations make in one transaction, when it is the build's of
  // exactly these migrations (in Kysely's order: by name, localeCompare); its migrations are recorded as applied.
  const names = Object.keys(all).sort((a, b) => a.localeCompare(b));
  const whole = fresh === undefined ? builtFreshSchema() : fresh;
  if (!done && !upTo && whole && store.createFresh?.(names, whole)) return names;
  // Migrations a newer Standin applied are not this version's to judge: during an upgrade one instance at a
  // time the older instances restart on the newer schema (every migration keeps it usable one version back:
  // docs/contributing.md). Kysely would call them missing ("corrupted migrations"): they are known here as done.
  const known: Record<string, Migration> = { ...all };
  for (const name of done ?? []) known[name] ??= { up: async () => undefined };
  const provider: MigrationProvider = { getMigrations: async () => known };
  // Kysely's bookkeeping tables in our schema (PostgreSQL search_path), looked up there alone (withOwnCatalog).
  const schema =
    store.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(store.db)).rows[0].s : undefined;
  const migrator = new Migrator({
    db: withOwnCatalog(store, schema),
    provider,
    allowUnorderedMigrations: true,
    migrationTableSchema: schema,
  });
  const { error, results } = await (upTo ? migrator.migrateTo(upTo) : migrator.migrateToLatest());
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The migrations the store's bookkeeping lists; undefined when it has none yet (a fresh store). */
async function appliedNames(store: Store): Promise<Set<string> | undefined> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(store.db);
    return new Set(rows.map((r) => r.name));
  } catch {
    return undefined;
  }
}

/**
 * The store's database as the Migrator sees it: its look-ups of its bookkeeping tables read this store's
 * own tables (store/tables.ts). Kysely's introspection reads every column of every table of every schema in
 * the database (on PostgreSQL with two function calls a column): in a database of many schemas (a shared
 * one; the test suite's, 160 schemas at its end) that was seconds of CPU on both sides at each migration.
 */
function withOwnCatalog(store: Store, schema: string | undefined): Kysely<DB> {
  const getTables = async (): Promise<TableMetadata[]> =>
    (await storeTables(store)).map((t) => ({ name: t.name, schema, isView: false, columns: [] }));
  const introspection: DatabaseIntrospector = {
    getSchemas: () => store.db.introspection.getSchemas(),
    getTables,
    getMetadata: async () => ({ tables: await getTables() }),
  };
  return new Proxy(store.db, {
    get(db, key) {
      if (key === 'introspection') return introspection;
      const value: unknown = Reflect.get(db, key, db);
      // Kysely's methods read its private fields: they run on the instance itself.
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(db) : value;
    },
  });
}
