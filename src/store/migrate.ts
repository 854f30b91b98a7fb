import { sql, Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Store } from './db.js';
import { builtFreshSchema, type FreshSchema } from './fresh-schema.js';

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
  // Kysely looks for its bookkeeping tables across all schemas; pin them to ours (PostgreSQL search_path).
  const schema =
    store.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(store.db)).rows[0].s : undefined;
  const migrator = new Migrator({ db: store.db, provider, allowUnorderedMigrations: true, migrationTableSchema: schema });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await (upTo ? migrator.migrateTo(upTo) : migrator.migrateToLatest());
    // Kysely's PostgreSQL introspection reads the catalog of every schema; a table or schema dropped
    // elsewhere in the database at that moment makes it fail (42P01, 3F000), and so does a column another
    // schema's migration adds or drops meanwhile (42703). Nothing was migrated: try again.
    if (error && ['42P01', '3F000', '42703'].includes((error as { code?: string }).code ?? '') && attempt < 5) {
      await new Promise((r) => setTimeout(r, 100 * attempt));
      continue;
    }
    if (error) throw error;
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }
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
