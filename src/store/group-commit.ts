import type { Db, Tx } from './db.js';

/** Writes one batch in a transaction. */
export type BatchWrite<T> = (tx: Tx, items: T[]) => Promise<void>;

export interface GroupCommit<T> {
  /** Queues an item; resolves once it is committed, rejects if its own write fails. */
  (item: T): Promise<void>;
  /** Transactions committed so far (for tests and benches). */
  readonly commits: number;
}

/**
 * Group commit: items written in the same turn of the event loop share one transaction, so a burst pays
 * for one commit instead of one each, and every caller still answers only after its item is durable. A
 * batch that fails is written again item by item, so one bad item (a foreign key gone meanwhile, say)
 * fails alone.
 */
export function groupCommit<T>(db: () => Db, write: BatchWrite<T>, maxBatch = 128): GroupCommit<T> {
  const queue: { item: T; resolve(): void; reject(err: unknown): void }[] = [];
  let scheduled = false;
  let commits = 0;

  const commit = async (items: T[]) => {
    await db()
      .transaction()
      .execute((tx) => write(tx, items));
    commits++;
  };

  async function flush() {
    scheduled = false;
    const batch = queue.splice(0, maxBatch);
    if (queue.length) schedule();
    if (batch.length === 0) return;
    try {
      await commit(batch.map((b) => b.item));
      for (const b of batch) b.resolve();
    } catch (err) {
      if (batch.length === 1) return batch[0].reject(err);
      for (const b of batch) await commit([b.item]).then(b.resolve, b.reject);
    }
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  }

  const enqueue = (item: T) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
  return Object.defineProperty(enqueue, 'commits', { get: () => commits }) as GroupCommit<T>;
}
