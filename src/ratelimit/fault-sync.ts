import type { Ctx } from '../core/module.js';
import { newId } from '../core/ids.js';
import type { ApiError } from '../core/errors.js';
import type { Tx } from '../store/db.js';
import * as store from './fault-store.js';
import { createFaultTable, faultError, newFault, rollOf, type Fault, type FaultInput } from './faults.js';

/**
 * The faults of every instance on one store (`ctx.services.faults`). The table `rate_limit_faults` is the
 * truth; each instance keeps a copy that the edge check reads synchronously, so a request that matches no
 * live fault costs nothing. A change made here updates this copy at once; other instances' changes arrive
 * through `refresh`, which runs on every instance when the `faults` change signal moves (core/changes.ts):
 * at once on PostgreSQL (LISTEN/NOTIFY), within 250 ms on either store.
 *
 * Counts are exact: a request that matches a fault of the copy claims one use in the store (one
 * conditional UPDATE, `fault-store.ts` claimFault) and fails only if the claim succeeds. So `count` requests
 * fail in all, on one instance or many, in sequence or at once; a copy that lags behind costs a claim that
 * finds nothing, never an extra failure.
 */
/** The concern of `ctx.changes` that fault changes (and the claim that uses a fault up) bump. */
export const FAULTS = 'faults';

type Outcome = { taken: true; remaining: number } | { taken: false; remaining: number | undefined };

export function createFaults(ctx: Pick<Ctx, 'store' | 'clock' | 'log' | 'changes'>) {
  const db = ctx.store.db;
  const table = createFaultTable();

  // Re-reads run one after another, so an older read never lands after a newer one.
  let chain: Promise<void> = Promise.resolve();
  const serial = (step: () => Promise<void>) => (chain = chain.then(step, step));

  async function reread() {
    try {
      table.replace(await store.listFaults(db));
    } catch (err) {
      ctx.log.warn({ err }, 'reading the faults failed; keeping the last copy');
    }
  }

  let rereadQueued = false;
  /** Re-reads the faults after whatever is queued (calls arriving meanwhile share one re-read). */
  function refresh(): Promise<void> {
    if (rereadQueued) return chain;
    rereadQueued = true;
    return serial(async () => {
      rereadQueued = false;
      await reread();
    });
  }

  /**
   * Rolls and claims one use of a fault in the store; a roll that says no touches the store only when
   * seeded. Single statements, no transaction: the claim is atomic on its own, and a transaction held
   * across awaits would make SQLite writers of other instances wait on it.
   */
  async function claim(f: Fault): Promise<Outcome> {
    if (f.seed === null && f.probability < 1 && Math.random() >= f.probability) return { taken: false, remaining: f.remaining };
    if (f.seed !== null) {
      const n = await store.countMatch(db, f.id);
      if (n === undefined) return { taken: false, remaining: undefined };
      if (!rollOf(f.seed, n, f.probability)) return { taken: false, remaining: f.remaining };
    }
    const remaining = await store.claimFault(db, f.id);
    if (remaining === undefined) return { taken: false, remaining };
    // Used up: every copy drops it. Before that a copy needs no news: its claims ask the store anyway.
    if (remaining === 0) {
      await store.deleteFault(db, f.id);
      await ctx.changes.bump(db, FAULTS);
    }
    return { taken: true, remaining };
  }

  /** The first matching fault that takes the request: waits its latency, then its error (none: it only delays). */
  async function takeFirst(candidates: readonly Fault[]): Promise<ApiError | undefined> {
    for (const f of candidates) {
      let outcome: Outcome;
      try {
        outcome = await claim(f);
      } catch (err) {
        // A test aid must not become an outage: with the store unreachable the request goes on unfaulted.
        ctx.log.warn({ err, fault: f.id }, 'claiming a fault use failed; the request goes on');
        continue;
      }
      table.update(f.id, outcome.remaining);
      if (!outcome.taken) continue;
      if (f.latency_ms > 0) await new Promise((r) => setTimeout(r, f.latency_ms));
      return f.status !== null && f.type !== null ? faultError({ ...f, status: f.status, type: f.type }) : undefined;
    }
    return undefined;
  }

  /** A change made here: committed with its notification, then this instance's copy follows at once. */
  async function change<T>(write: (tx: Tx) => Promise<T>): Promise<T> {
    const out = await db.transaction().execute(async (tx) => {
      const result = await write(tx);
      await ctx.changes.bump(tx, FAULTS);
      return result;
    });
    await refresh();
    return out;
  }

  return {
    /** Re-reads the store's faults into this instance's copy (after another instance changed them). */
    refresh,
    /** Nothing is held back any more (claims are written as they happen); kept for the module's stop. */
    flush: () => chain,
    /**
     * The edge check's question: undefined at once when the request matches no live fault of this copy;
     * else a Promise of the fault's error (undefined: no fault took it, or one only delayed it).
     */
    take(method: string, path: string): Promise<ApiError | undefined> | undefined {
      const candidates = table.matching(method, path);
      return candidates.length === 0 ? undefined : takeFirst(candidates);
    },
    size: () => table.size(),
    /** This instance's copy (what its edge check is holding). */
    local: () => table.list(),
    async add(input: FaultInput): Promise<Fault> {
      const fault = newFault(input, newId('fault', ctx.clock), ctx.clock.nowSeconds());
      await change((tx) => store.insertFault(tx, fault));
      return fault;
    },
    /** Every fault as the store has it. */
    list: (): Promise<Fault[]> => store.listFaults(db),
    get: (id: string): Promise<Fault | undefined> => store.getFault(db, id),
    remove: (id: string): Promise<boolean> => change((tx) => store.deleteFault(tx, id)),
    clear: (): Promise<number> => change((tx) => store.deleteAllFaults(tx)),
    /** After the store was emptied by a reset: follow it, and tell the other instances. */
    async reset() {
      await change(async () => {});
    },
  };
}

export type Faults = ReturnType<typeof createFaults>;
