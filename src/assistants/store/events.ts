import { sql } from 'kysely';
import type { Ctx, Services } from '../../core/module.js';
import { precompiled, precompiledRows, type Exec } from '../../store/db.js';
import { notify } from '../../store/listen.js';
import type { RunStatus } from '../runs/states.js';

/** One frame of a run's stream: the event name and its data (an API object or a delta). */
export interface RunEvent {
  event: string;
  data: unknown;
}

/** A run's event as stored: its number, its name and its data's JSON (what a stream's frame carries). */
export interface StoredEvent {
  seq: number;
  event: string;
  data: string;
}

const eventsAfterQuery = precompiled(['runId', 'seq', 'limit'], (db, a: { runId: string; seq: number; limit: number }) =>
  db
    .selectFrom('run_events')
    .select(['seq', 'event', 'data'])
    .where('run_id', '=', a.runId)
    .where('seq', '>', a.seq)
    .orderBy('seq', 'asc')
    .limit(a.limit),
);

/** A run's events after `seq`, in order (compiled once: a stream reads them at every wake-up). */
export const eventsAfter = (db: Exec, runId: string, seq: number, limit = 500) => eventsAfterQuery(db, { runId, seq, limit });

/** Moves a run's event number `n` on, answering the last one (compiled once: every event written goes through it). */
const takeEventSeqs = precompiled(['runId', 'n'], (db, a: { runId: string; n: number }) =>
  db
    .updateTable('thread_runs')
    .set({ event_seq: sql<number>`event_seq + ${a.n}` })
    .where('id', '=', a.runId)
    .returning('event_seq'),
);

/** Appends events to a run's stream, numbering them after the run's last one (the run row serializes writers). */
export async function appendEvents(
  ctx: Pick<Ctx, 'clock' | 'store'> & { services?: Partial<Services> },
  tx: Exec,
  runId: string,
  events: RunEvent[],
): Promise<StoredEvent[]> {
  if (!events.length) return [];
  const [row] = await takeEventSeqs(tx, { runId, n: events.length });
  if (!row) return [];
  return insertEvents(ctx, tx, runId, Number(row.event_seq) - events.length, events);
}

type EventRow = { run_id: string; seq: number; event: string; data: string; created_at: number };
/** The insert of a run's events, compiled once per number of rows. */
const insertEventsStatement = precompiledRows<EventRow>(['run_id', 'seq', 'event', 'data', 'created_at'], (db, rows) =>
  db.insertInto('run_events').values(rows),
);

/**
 * Inserts events numbered after `base`, for a caller that already moved the run's event_seq past them.
 * Returns them as stored (a stream opened by the same request writes them without reading them back).
 */
export async function insertEvents(
  ctx: Pick<Ctx, 'clock' | 'store'> & { services?: Partial<Services> },
  tx: Exec,
  runId: string,
  base: number,
  events: RunEvent[],
): Promise<StoredEvent[]> {
  const now = ctx.clock.now();
  const stored = events.map((e, i) => ({ seq: base + i + 1, event: e.event, data: JSON.stringify(e.data) }));
  const rows = stored.map((e) => ({ run_id: runId, seq: e.seq, event: e.event, data: e.data, created_at: now }));
  await tx.executeQuery(insertEventsStatement(tx, rows).compile());
  // The run metrics count status events as written (src/metrics): a transaction that rolls back is rare.
  ctx.services?.metrics?.runEvents(events);
  // Other instances follow the run's stream through this notification (bus.ts).
  if (ctx.store.dialect === 'postgres') await notify(tx, 'standin_runs', runId);
  return stored;
}

/** Drops a run's event log (once the run has ended and its streams have long finished). */
export async function deleteRunEvents(db: Exec, runId: string): Promise<void> {
  await db.deleteFrom('run_events').where('run_id', '=', runId).execute();
}

/**
 * Retention: deletes up to `limit` stream events written before `beforeMs` whose run is over (or gone).
 * An active run's events are never deleted: its streams still read them. Returns how many went.
 */
export async function purgeRunEvents(db: Exec, beforeMs: number, limit: number, active: readonly RunStatus[]): Promise<number> {
  const old = db
    .selectFrom('run_events as e')
    .select(['e.run_id', 'e.seq'])
    .where('e.created_at', '<', beforeMs)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('thread_runs as r')
            .select('r.id')
            .whereRef('r.id', '=', 'e.run_id')
            .where('r.status', 'in', [...active]),
        ),
      ),
    )
    .limit(limit);
  const rows = await old.execute();
  if (!rows.length) return 0;
  // One run's rows at a time by its key range, so the statement stays small whatever the batch holds.
  const byRun = new Map<string, number[]>();
  for (const r of rows) {
    const seqs = byRun.get(r.run_id);
    if (seqs) seqs.push(Number(r.seq));
    else byRun.set(r.run_id, [Number(r.seq)]);
  }
  for (const [runId, seqs] of byRun)
    await db.deleteFrom('run_events').where('run_id', '=', runId).where('seq', 'in', seqs).where('created_at', '<', beforeMs).execute();
  return rows.length;
}
