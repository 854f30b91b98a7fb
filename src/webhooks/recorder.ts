import type { Ctx } from '../core/module.js';
import { groupCommit } from '../store/group-commit.js';
import { precompiled } from '../store/db.js';
import type { WebhookTables } from './tables.js';

/** One attempt's outcome: the attempt row, the delivery's new state, and the retry job when one is due. */
export interface AttemptRecord {
  attempt: WebhookTables['webhook_attempts'];
  delivery: Pick<WebhookTables['webhook_deliveries'], 'id' | 'status' | 'attempt_count' | 'last_attempt_at' | 'last_status_code' | 'next_attempt_at' | 'completed_at'>;
  /** A delivery written only now, with its first attempt (the fan-out's): inserted in its final state. */
  create?: WebhookTables['webhook_deliveries'];
  /** Enqueue this job in the same transaction (first attempts made by the fan-out). */
  retry?: { kind: string; deliveryId: string; runAt: number; jobId: string };
}

const updateDelivery = precompiled(
  ['id', 'status', 'attempt_count', 'last_attempt_at', 'last_status_code', 'next_attempt_at', 'completed_at'] as const,
  (db, d: AttemptRecord['delivery']) =>
    db
      .updateTable('webhook_deliveries')
      .set({ status: d.status, attempt_count: d.attempt_count, last_attempt_at: d.last_attempt_at, last_status_code: d.last_status_code, next_attempt_at: d.next_attempt_at, completed_at: d.completed_at })
      .where('id', '=', d.id),
);

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
      if (created.length) await tx.insertInto('webhook_deliveries').values(created).execute();
      await tx.insertInto('webhook_attempts').values(records.map((r) => r.attempt)).execute();
      for (const r of records) if (!r.create) await updateDelivery(tx, r.delivery);
      for (const { retry } of records) if (retry) await ctx.jobs.enqueue(tx, retry.kind, { deliveryId: retry.deliveryId }, { runAt: retry.runAt, id: retry.jobId });
    },
  );
  return { record };
}

export type Recorder = ReturnType<typeof createRecorder>;
