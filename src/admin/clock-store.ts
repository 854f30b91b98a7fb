import { sql } from 'kysely';
import type { Ctx } from '../core/module.js';

/** The settings key of the clock's offset, shared by every instance on one store. */
export const CLOCK_KEY = 'clock_offset_ms';

/** Stores the clock's offset (only ever growing: a slower writer never moves it back). */
export async function saveClock(ctx: Pick<Ctx, 'store' | 'clock'>): Promise<void> {
  const value = String(ctx.clock.offsetMs());
  await ctx.store.db
    .insertInto('settings')
    .values({ key: CLOCK_KEY, value })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({ value })
        .where(sql`cast(settings.value as ${sql.raw(ctx.store.dialect === 'postgres' ? 'bigint' : 'integer')})`, '<', ctx.clock.offsetMs()),
    )
    .execute();
}
