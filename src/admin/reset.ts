import { sql } from 'kysely';
import type { Ctx } from '../core/module.js';

/**
 * Tables reset keeps: the migration bookkeeping, the settings that make this instance itself, and the
 * change generations (they only grow, so no instance can mistake a later change for one it has seen),
 * and the dashboard's spent sign-in tokens (sessions outlive a reset, as the admin key does: a signed-out
 * one must stay out).
 */
const KEEP = new Set(['kysely_migration', 'kysely_migration_lock', 'change_signals', 'dashboard_spent_tokens']);
const KEEP_SETTINGS = ['admin_key', 'clock_offset_ms'];

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
  // Introspection lists every schema's tables on PostgreSQL (other databases' schemas in the same cluster
  // included): only this store's schema is emptied.
  const schema =
    ctx.store.dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(ctx.store.db)).rows[0]?.s
      : undefined;
  const tables = (await ctx.store.db.introspection.getTables())
    .filter((t) => schema === undefined || t.schema === schema)
    .map((t) => t.name)
    .filter((n) => !KEEP.has(n));
  await ctx.store.db.transaction().execute(async (tx) => {
    if (ctx.store.dialect === 'postgres') {
      const list = tables.filter((t) => t !== 'settings');
      if (list.length) await sql.raw(`TRUNCATE ${list.map((t) => `"${t}"`).join(', ')} CASCADE`).execute(tx);
    } else {
      await sql`PRAGMA defer_foreign_keys = ON`.execute(tx);
      for (const t of tables.filter((t) => t !== 'settings')) await sql.raw(`DELETE FROM "${t}"`).execute(tx);
    }
    await tx.deleteFrom('settings').where('key', 'not in', KEEP_SETTINGS).execute();
  });
}
