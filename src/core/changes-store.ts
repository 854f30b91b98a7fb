import { sql } from 'kysely';
import type { Exec, Store } from '../store/db.js';
import { notify } from '../store/listen.js';

/** The PostgreSQL channel every instance LISTENs on; the payload names the concern that changed. */
export const CHANNEL = 'standin_changes';

/** Marks `concern` changed in the caller's transaction (PostgreSQL: the notification goes out at commit). */
export async function bumpGeneration(store: Pick<Store, 'dialect'>, exec: Exec, concern: string): Promise<void> {
  await exec
    .insertInto('change_signals')
    .values({ concern, generation: 1 })
    .onConflict((oc) => oc.column('concern').doUpdateSet({ generation: sql`change_signals.generation + 1` }))
    .execute();
  if (store.dialect === 'postgres') await notify(exec, CHANNEL, concern);
}

/** Marks every concern ever signalled changed (after an admin reset). */
export async function bumpAll(store: Pick<Store, 'dialect'>, exec: Exec): Promise<void> {
  await exec
    .updateTable('change_signals')
    .set({ generation: sql`generation + 1` })
    .execute();
  if (store.dialect === 'postgres') await notify(exec, CHANNEL, '*');
}

/** Every concern's generation. */
export async function readGenerations(exec: Exec): Promise<Map<string, number>> {
  const rows = await exec.selectFrom('change_signals').select(['concern', 'generation']).execute();
  return new Map(rows.map((r) => [r.concern, Number(r.generation)]));
}
