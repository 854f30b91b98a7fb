import type { Exec } from '../store/db.js';

/** Saves the applied `models` section (JSON text). */
export async function saveConfig(db: Exec, text: string, nowMs: number): Promise<void> {
  await db
    .insertInto('models_config')
    .values({ scope: 'root', value: text, updated_at: nowMs })
    .onConflict((oc) => oc.column('scope').doUpdateSet({ value: text, updated_at: nowMs }))
    .execute();
}

/** The applied `models` section as JSON text, or undefined when none was applied. */
export async function loadConfig(db: Exec): Promise<string | undefined> {
  const row = await db.selectFrom('models_config').select('value').where('scope', '=', 'root').executeTakeFirst();
  return row?.value;
}
