import { sql } from 'kysely';
import { createClock, MAX_OFFSET_MS, type Clock } from '../core/clock.js';
import type { Ctx } from '../core/module.js';
import type { Store } from '../store/db.js';

/** The settings key of the clock's offset, shared by every instance on one store. */
export const CLOCK_KEY = 'clock_offset_ms';
/** The change signal's concern (core/changes.ts): a move or reset of the clock, for the other instances to follow. */
export const CLOCK_CONCERN = 'clock';
/** Counts resets of the clock: an instance that sees it change follows the offset back (time moves back only on reset). */
export const GENERATION_KEY = 'clock_generation';

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

/**
 * Stores the clock's offset (only ever growing: a slower writer never moves it back) and, when that moved
 * it, signals the other instances. An instance that follows an offset it read stores nothing new, so
 * following never echoes a signal back.
 */
export async function saveClock(ctx: Pick<Ctx, 'store' | 'clock' | 'changes'>): Promise<void> {
  const value = String(ctx.clock.offsetMs());
  await ctx.store.db.transaction().execute(async (tx) => {
    const saved = await tx
      .insertInto('settings')
      .values({ key: CLOCK_KEY, value })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet({ value })
          .where(
            sql`cast(settings.value as ${sql.raw(ctx.store.dialect === 'postgres' ? 'bigint' : 'integer')})`,
            '<',
            ctx.clock.offsetMs(),
          ),
      )
      .executeTakeFirst();
    if (saved.numInsertedOrUpdatedRows) await ctx.changes.bump(tx, CLOCK_CONCERN);
  });
}

/** Puts the clock back to the real time, here and (through the generation) on every instance of the store. */
export async function resetClock(ctx: Pick<Ctx, 'store' | 'clock' | 'changes'>): Promise<void> {
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
    await ctx.changes.bump(tx, CLOCK_CONCERN);
  });
  generations.set(ctx.clock, generation);
  ctx.clock.reset();
}

/**
 * Follows the clock other instances move: forward always, back only after a reset. It rides the change
 * signal, so another instance's move arrives with its NOTIFY (PostgreSQL), or else with the signal's poll
 * (core/changes.ts POLL_MS, both stores); the signal stops with the Standin.
 */
export function followClock(ctx: Pick<Ctx, 'store' | 'clock' | 'changes'>): void {
  ctx.changes.on(CLOCK_CONCERN, async () => {
    const saved = await readSaved(ctx.store);
    if (saved.generation !== generations.get(ctx.clock)) {
      generations.set(ctx.clock, saved.generation);
      ctx.clock.reset(Math.min(saved.offset, MAX_OFFSET_MS));
    } else ctx.clock.setOffset(Math.min(saved.offset, MAX_OFFSET_MS));
  });
}
