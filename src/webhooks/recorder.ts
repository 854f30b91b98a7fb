import type { Ctx } from '../core/context.js';
import type { Exec } from '../store/db.js';
import type { Kysely } from 'kysely';
import type { DB } from '../store/schema.js';
import { precompiled } from './store.js';
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

const MAX_BATCH = 128;

const updateDelivery = precompiled(
  ['id', 'status', 'attempt_count', 'last_attempt_at', 'last_status_code', 'next_attempt_at', 'completed_at'] as const,
  (db: Kysely<DB>, d: AttemptRecord['delivery']) =>
    db
      .updateTable('webhook_deliveries')
      .set({ status: d.status, attempt_count: d.attempt_count, last_attempt_at: d.last_attempt_at, last_status_code: d.last_status_code, next_attempt_at: d.next_attempt_at, completed_at: d.completed_at })
      .where('id', '=', d.id),
);

/**
 * Group commit of attempt records: records that arrive in the same turn of the event loop are written in
 * one transaction (one multi-row insert of attempts, then the delivery updates and retry jobs), so a burst
 * of deliveries costs one commit instead of one each. Each caller's promise settles when its record is
 * durable. A batch that fails (say, an endpoint deleted meanwhile) is retried record by record, so one bad
 * record never takes the others down.
 */
export function createRecorder(ctx: Pick<Ctx, 'store' | 'jobs'>) {
  const queue: { record: AttemptRecord; resolve(): void; reject(err: unknown): void }[] = [];
  let scheduled = false;

  async function write(exec: Exec, records: AttemptRecord[]) {
    const created = records.filter((r) => r.create).map((r) => ({ ...r.create!, ...r.delivery }));
    if (created.length) await exec.insertInto('webhook_deliveries').values(created).execute();
    await exec.insertInto('webhook_attempts').values(records.map((r) => r.attempt)).execute();
    for (const r of records) if (!r.create) await updateDelivery(ctx.store.db, r.delivery, exec);
    for (const { retry } of records) if (retry) await ctx.jobs.enqueue(exec, retry.kind, { deliveryId: retry.deliveryId }, { runAt: retry.runAt, id: retry.jobId });
  }

  async function flush() {
    scheduled = false;
    const batch = queue.splice(0, MAX_BATCH);
    if (queue.length && !scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    if (batch.length === 0) return;
    try {
      await ctx.store.db.transaction().execute((tx) => write(tx, batch.map((b) => b.record)));
      for (const b of batch) b.resolve();
    } catch {
      for (const b of batch) {
        await ctx.store.db
          .transaction()
          .execute((tx) => write(tx, [b.record]))
          .then(b.resolve, b.reject);
      }
    }
  }

  return {
    /** Resolves once the record is committed. */
    record(record: AttemptRecord): Promise<void> {
      return new Promise((resolve, reject) => {
        queue.push({ record, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}

export type Recorder = ReturnType<typeof createRecorder>;
