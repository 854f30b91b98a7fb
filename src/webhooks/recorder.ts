import type { Ctx } from '../core/module.js';
import { groupCommit } from '../store/group-commit.js';
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
 */
export function createRecorder(ctx: Pick<Ctx, 'store' | 'jobs'>) {
  const record = groupCommit<AttemptRecord>(
    () => ctx.store.db,
    async (tx, records) => {
      const created = records.filter((r) => r.create).map((r) => ({ ...r.create!, ...r.delivery }));
      if (created.length) await store.insertDeliveries(tx, created);
      await store.insertAttempts(
        tx,
        records.map((r) => r.attempt),
      );
      for (const r of records) if (!r.create) await store.updateDeliveryState(tx, r.delivery);
      for (const { retry } of records)
        if (retry) await ctx.jobs.enqueue(tx, retry.kind, { deliveryId: retry.deliveryId }, { runAt: retry.runAt, id: retry.jobId });
    },
  );
  return { record };
}

export type Recorder = ReturnType<typeof createRecorder>;
