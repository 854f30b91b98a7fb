import type { Ctx } from '../core/module.js';
import { runTogether, type Tx } from '../store/db.js';
import { batched } from '../store/group-commit.js';
import * as store from './store.js';
import type { WebhookTables } from './tables.js';

/** One attempt's outcome: the attempt row, the delivery's new state, and the retry job when one is due. */
export interface AttemptRecord {
  attempt: WebhookTables['webhook_attempts'];
  delivery: store.DeliveryState;
  /** A delivery written only now, with its first attempt (the fan-out's): inserted in its final state. */
  create?: WebhookTables['webhook_deliveries'];
  /** Enqueue this job in the same transaction (first attempts made by the fan-out). */
  retry?: { kind: string; deliveryId: string; runAt: number; jobId: string };
}

/**
 * Group commit of attempt records (store/group-commit.ts): records that arrive in the same turn of the
 * event loop are written in one transaction (one multi-row insert of attempts, then the delivery updates
 * and retry jobs). Each caller's promise settles when its record is durable; a bad record fails alone.
 * A batch without retry jobs is a fixed list of statements, sent together (on PostgreSQL one round trip,
 * store/pipeline.ts); one that enqueues jobs runs as a transaction through the job queue.
 */
export function createRecorder(ctx: Pick<Ctx, 'store' | 'jobs'>) {
  const record = batched<AttemptRecord>(async (records) => {
    const db = ctx.store.db;
    const created = records.filter((r) => r.create).map((r) => ({ ...r.create!, ...r.delivery }));
    const updated = records.filter((r) => !r.create).map((r) => r.delivery);
    const attempts = records.map((r) => r.attempt);
    if (!records.some((r) => r.retry)) return void (await runTogether(db, store.recordStatements(db, created, attempts, updated)));
    await db.transaction().execute(async (tx: Tx) => {
      for (const q of store.recordStatements(tx, created, attempts, updated)) await tx.executeQuery(q.compile());
      for (const { retry } of records)
        if (retry) await ctx.jobs.enqueue(tx, retry.kind, { deliveryId: retry.deliveryId }, { runAt: retry.runAt, id: retry.jobId });
    });
  }, 128);
  return { record };
}

export type Recorder = ReturnType<typeof createRecorder>;
