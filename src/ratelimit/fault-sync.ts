import type { Ctx } from '../core/module.js';
import { newId } from '../core/ids.js';
import type { ApiError } from '../core/errors.js';
import type { Tx } from '../store/db.js';
import { createFaultTable, newFault, type Fault, type FaultInput } from './faults.js';
import * as store from './store.js';

/**
 * The faults of every instance on one store (`ctx.services.faults`). The table `rate_limit_faults` is the
 * truth; each instance keeps a copy that the edge check reads synchronously (nothing on the hot path waits
 * on the store). A change made here updates this copy at once; other instances' changes arrive through
 * `refresh`, which runs on every instance when the `faults` change signal moves (core/changes.ts): at once
 * on PostgreSQL (LISTEN/NOTIFY), within 250 ms on either store.
 *
 * Counts: a request an instance fails counts down its copy at once and is written back (uses arriving
 * together in one transaction); every instance's copy follows the store. So one instance fails exactly
 * `count` requests; several together fail `count` plus at most the requests the others fail during one
 * propagation delay (milliseconds on PostgreSQL) — never fewer than `count` while the fault is live.
 */
/** The concern of `ctx.changes` that fault changes (and uses written back) bump. */
export const FAULTS = 'faults';

export function createFaults(ctx: Pick<Ctx, 'store' | 'clock' | 'log' | 'changes'>) {
  const db = ctx.store.db;
  /** Uses taken locally and not yet written back, per fault id. */
  const pending = new Map<string, number>();
  const table = createFaultTable((id) => {
    pending.set(id, (pending.get(id) ?? 0) + 1);
    scheduleWrite();
  });

  // Writes and re-reads run one after another, so a re-read never misses uses being written.
  let chain: Promise<void> = Promise.resolve();
  const serial = (step: () => Promise<void>) => (chain = chain.then(step, step));

  let writeQueued = false;
  function scheduleWrite() {
    if (writeQueued) return;
    writeQueued = true;
    setImmediate(() => {
      writeQueued = false;
      void serial(writeBack);
    });
  }

  async function writeBack() {
    if (pending.size === 0) return;
    const uses = new Map(pending);
    pending.clear();
    try {
      await db.transaction().execute(async (tx) => {
        await store.consumeFaults(tx, uses);
        await ctx.changes.bump(tx, FAULTS);
      });
    } catch (err) {
      ctx.log.error({ err }, 'writing back fault uses failed; other instances may fail a few more requests');
    }
  }

  async function reread() {
    try {
      table.replace(await store.listFaults(db), pending);
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
    /** Writes back the uses not yet written (at stop). */
    flush: () => serial(writeBack),
    /** The edge check's question: the error for this request if a fault takes it, else null. Synchronous. */
    take: (method: string, path: string): ApiError | null => table.take(method, path),
    size: () => table.size(),
    /** This instance's copy (what its edge check is holding). */
    local: () => table.list(),
    async add(input: FaultInput): Promise<Fault> {
      const fault = newFault(input, newId('fault', ctx.clock), ctx.clock.nowSeconds());
      await change((tx) => store.insertFault(tx, fault));
      return fault;
    },
    /** Every fault as the store has it, including this instance's uses so far. */
    async list(): Promise<Fault[]> {
      await serial(writeBack);
      return store.listFaults(db);
    },
    async get(id: string): Promise<Fault | undefined> {
      await serial(writeBack);
      return store.getFault(db, id);
    },
    remove: (id: string): Promise<boolean> => change((tx) => store.deleteFault(tx, id)),
    clear: (): Promise<number> => change((tx) => store.deleteAllFaults(tx)),
    /** After the store was emptied by a reset: follow it, and tell the other instances. */
    async reset() {
      pending.clear();
      await change(async () => {});
    },
  };
}

export type Faults = ReturnType<typeof createFaults>;
