import { sql, type Selectable } from 'kysely';
import type { ErrorType } from '../core/errors.js';
import type { Exec } from '../store/db.js';
import type { Fault, FaultStatus } from './faults.js';
import type { RateLimitTables } from './tables.js';

type FaultRow = Selectable<RateLimitTables['rate_limit_faults']>;

// A delay-only fault is stored with status 0 and type '' (the columns predate it and are NOT NULL).
const toFault = (r: FaultRow): Fault => ({
  id: r.id,
  object: 'admin.fault',
  path: r.path,
  method: r.method,
  status: r.status === 0 ? null : (r.status as FaultStatus),
  type: r.type === '' ? null : (r.type as ErrorType),
  code: r.code,
  message: r.message,
  remaining: r.remaining,
  retry_after: r.retry_after_ms === null ? null : r.retry_after_ms / 1000,
  probability: Number(r.probability),
  seed: r.seed === null ? null : Number(r.seed),
  latency_ms: r.latency_ms,
  created_at: Number(r.created_at),
});

/** Stores a new fault. */
export async function insertFault(db: Exec, f: Fault): Promise<void> {
  await db
    .insertInto('rate_limit_faults')
    .values({
      id: f.id,
      path: f.path,
      method: f.method,
      status: f.status ?? 0,
      type: f.type ?? '',
      code: f.code,
      message: f.message,
      remaining: f.remaining,
      retry_after_ms: f.retry_after === null ? null : Math.round(f.retry_after * 1000),
      probability: f.probability,
      seed: f.seed,
      latency_ms: f.latency_ms,
      created_at: f.created_at,
    })
    .execute();
}

/** Every fault, oldest first (the order faults are matched in). */
export async function listFaults(db: Exec): Promise<Fault[]> {
  return (await db.selectFrom('rate_limit_faults').selectAll().orderBy('id').execute()).map(toFault);
}

export async function getFault(db: Exec, id: string): Promise<Fault | undefined> {
  const row = await db.selectFrom('rate_limit_faults').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toFault(row);
}

/** Deletes one fault; false when there was none. */
export async function deleteFault(db: Exec, id: string): Promise<boolean> {
  const r = await db.deleteFrom('rate_limit_faults').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Deletes every fault; returns how many there were. */
export async function deleteAllFaults(db: Exec): Promise<number> {
  const r = await db.deleteFrom('rate_limit_faults').executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * Takes one use of a fault, atomically: the count left, or undefined when none was left (another instance
 * took the last). PostgreSQL locks the row and re-checks `remaining > 0` after a concurrent claim commits;
 * SQLite has one writer; so a fault never fails more than its count, on any number of instances.
 */
export async function claimFault(db: Exec, id: string): Promise<number | undefined> {
  const row = await db
    .updateTable('rate_limit_faults')
    .set({ remaining: sql`remaining - 1` })
    .where('id', '=', id)
    .where('remaining', '>', 0)
    .returning('remaining')
    .executeTakeFirst();
  return row && Number(row.remaining);
}

/** Counts one more matching request of a live fault: its number n from 1, or undefined when the fault is gone. */
export async function countMatch(db: Exec, id: string): Promise<number | undefined> {
  const row = await db
    .updateTable('rate_limit_faults')
    .set({ matched: sql`matched + 1` })
    .where('id', '=', id)
    .where('remaining', '>', 0)
    .returning('matched')
    .executeTakeFirst();
  return row && Number(row.matched);
}
