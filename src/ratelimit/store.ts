import type { Exec } from '../store/db.js';

/** Saves one config section under its scope (`root`, `organization:<id>`, `project:<id>`). */
export async function saveSection(db: Exec, scope: string, value: unknown, nowMs: number): Promise<void> {
  const text = JSON.stringify(value);
  await db
    .insertInto('rate_limit_config')
    .values({ scope, value: text, updated_at: nowMs })
    .onConflict((oc) => oc.column('scope').doUpdateSet({ value: text, updated_at: nowMs }))
    .execute();
}

/** Every saved section. */
export async function loadSections(db: Exec): Promise<{ scope: string; value: unknown }[]> {
  const rows = await db.selectFrom('rate_limit_config').select(['scope', 'value']).orderBy('scope').execute();
  return rows.map((r) => ({ scope: r.scope, value: JSON.parse(r.value) }));
}
