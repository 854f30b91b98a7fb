import { sql } from 'kysely';
import type { Ctx } from '../core/module.js';
import type { Store, Tx } from '../store/db.js';
import { storeTables, type StoreTable } from '../store/tables.js';

/**
 * Tables reset keeps: the migration bookkeeping, the settings that make this instance itself, and the
 * change generations (they only grow, so no instance can mistake a later change for one it has seen),
 * and the dashboard's spent sign-in tokens (sessions outlive a reset, as the admin key does: a signed-out
 * one must stay out).
 */
const KEEP = new Set(['kysely_migration', 'kysely_migration_lock', 'change_signals', 'dashboard_spent_tokens']);
/** The `settings` rows reset keeps (the instance's admin key, and the clock it moves on its own). */
export const KEEP_SETTINGS = ['admin_key', 'clock_offset_ms'];

/**
 * PostgreSQL refuses one side of a deadlock (40P01): TRUNCATE takes its table locks one by one, and a job
 * running meanwhile may hold one of them while waiting for another. The reset then simply runs again.
 */
const RETRIES = 5;

/** Empties every table (all state), keeping migrations, the admin key and the clock. */
export async function resetState(ctx: Ctx): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await emptyTables(ctx);
    } catch (err) {
      if (attempt >= RETRIES || (err as { code?: string }).code !== '40P01') throw err;
      ctx.log.warn({ attempt }, 'reset met a deadlock with a running job; trying again');
    }
  }
}

async function emptyTables(ctx: Ctx): Promise<void> {
  const tables = (await stateTables(ctx.store)).map((t) => t.name);
  await ctx.store.db.transaction().execute((tx) => emptyStateTables(tx, ctx.store.dialect, tables));
}

/** The tables that hold state (all but those reset keeps), with their columns, read from the database itself. */
export async function stateTables(store: Pick<Store, 'db' | 'dialect'>): Promise<StoreTable[]> {
  return (await storeTables(store)).filter((t) => !KEEP.has(t.name)).sort((a, b) => a.name.localeCompare(b.name));
}

/** Empties `tables` (from `stateTables`) inside `tx`; of `settings`, only the rows reset does not keep. */
export async function emptyStateTables(tx: Tx, dialect: Store['dialect'], tables: string[]): Promise<void> {
  if (dialect === 'postgres') {
    const list = tables.filter((t) => t !== 'settings');
    if (list.length) await sql.raw(`TRUNCATE ${list.map((t) => `"${t}"`).join(', ')} CASCADE`).execute(tx);
  } else {
    await sql`PRAGMA defer_foreign_keys = ON`.execute(tx);
    for (const t of tables.filter((t) => t !== 'settings')) await sql.raw(`DELETE FROM "${t}"`).execute(tx);
  }
  await tx.deleteFrom('settings').where('key', 'not in', KEEP_SETTINGS).execute();
}
