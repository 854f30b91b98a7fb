import type { Compilable } from 'kysely';
import { runAlone, runTogether, type Db, type Tx } from './db.js';

/** Writes one batch in a transaction. */
export type BatchWrite<T> = (tx: Tx, items: T[]) => Promise<void>;
/** Builds the one statement that writes a batch (a multi-row INSERT, say). */
export type BatchStatement<T> = (db: Db, items: T[]) => Compilable<unknown>;

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
  return batched(async (items) => {
    await db()
      .transaction()
      .execute((tx) => write(tx, items));
  }, maxBatch);
}

/**
 * Group commit of a batch that one statement writes: no transaction around it (a statement is atomic),
 * so on PostgreSQL a batch costs one round trip, shared with the turn's other statements
 * (store/pipeline.ts), instead of BEGIN, the write and COMMIT on a pool connection.
 */
export function groupStatement<T>(db: () => Db, statement: BatchStatement<T>, maxBatch = 128): GroupCommit<T> {
  return batched(async (items) => void (await runAlone(db(), statement(db(), items))), maxBatch);
}

/**
 * Group commit of a batch written by statements that need no answer from one another (inserts, updates by
 * key): one transaction, and on PostgreSQL one round trip (store/pipeline.ts).
 */
export function groupStatements<T>(
  db: () => Db,
  statements: (db: Db, items: T[]) => Compilable<unknown>[],
  maxBatch = 128,
): GroupCommit<T> {
  return batched(async (items) => void (await runTogether(db(), statements(db(), items))), maxBatch);
}

/** Group commit with a write of its own: `write` commits a batch (in one transaction) or throws. */
export function batched<T>(write: (items: T[]) => Promise<void>, maxBatch: number): GroupCommit<T> {
  const queue: { item: T; resolve(): void; reject(err: unknown): void }[] = [];
  let scheduled = false;
  let commits = 0;

  const commit = async (items: T[]) => {
    await write(items);
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
