import { sql } from 'kysely';
import { createClock, MAX_OFFSET_MS, type Clock } from '../core/clock.js';
import type { Ctx } from '../core/module.js';
import type { Store } from '../store/db.js';

/** The settings key of the clock's offset, shared by every instance on one store. */
export const CLOCK_KEY = 'clock_offset_ms';
/** Counts resets of the clock: an instance that sees it change follows the offset back (time moves back only on reset). */
const GENERATION_KEY = 'clock_generation';

interface Saved {
  offset: number;
  generation: string;
}

async function readSaved(store: Pick<Store, 'db'>): Promise<Saved> {
  const rows = await store.db.selectFrom('settings').select(['key', 'value']).where('key', 'in', [CLOCK_KEY, GENERATION_KEY]).execute();
  const value = (key: string) => rows.find((r) => r.key === key)?.value;
  return { offset: Number(value(CLOCK_KEY) ?? 0), generation: value(GENERATION_KEY) ?? '0' };
}

/**
 * The clock as the store keeps it. An offset beyond MAX_OFFSET_MS (stored by a version that did not bound
 * it) is clamped, so ids and timestamps stay valid; `clamped` says so, for the log.
 */
export async function loadClock(store: Store): Promise<{ clock: Clock; clamped: boolean }> {
  const saved = await readSaved(store);
  const clock = createClock(Math.min(saved.offset, MAX_OFFSET_MS));
  generations.set(clock, saved.generation);
  return { clock, clamped: saved.offset > MAX_OFFSET_MS };
}
const generations = new WeakMap<Clock, string>();

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

/** Puts the clock back to the real time, here and (through the generation) on every instance of the store. */
export async function resetClock(ctx: Pick<Ctx, 'store' | 'clock'>): Promise<void> {
  const generation = String(Number(generations.get(ctx.clock) ?? '0') + 1);
  await ctx.store.db.transaction().execute(async (tx) => {
    for (const [key, value] of [
      [CLOCK_KEY, '0'],
      [GENERATION_KEY, generation],
    ]) {
      await tx
        .insertInto('settings')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
        .execute();
    }
  });
  generations.set(ctx.clock, generation);
  ctx.clock.reset();
}

/**
 * Follows the clock other instances move (PostgreSQL): forward always, back only after a reset. Returns
 * the function that stops following.
 */
export function followClock(ctx: Pick<Ctx, 'store' | 'clock'>): () => void {
  const timer = setInterval(() => {
    readSaved(ctx.store)
      .then((saved) => {
        if (saved.generation !== generations.get(ctx.clock)) {
          generations.set(ctx.clock, saved.generation);
          ctx.clock.reset(Math.min(saved.offset, MAX_OFFSET_MS));
        } else ctx.clock.setOffset(Math.min(saved.offset, MAX_OFFSET_MS));
      })
      .catch(() => {});
  }, 1000);
  timer.unref();
  return () => clearInterval(timer);
}
