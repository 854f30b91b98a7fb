import type { JobClaim } from '../core/jobs.js';
import type { Ctx } from '../core/module.js';
import type { Exec } from '../store/db.js';
import type { EventSink, StreamEvent } from './events.js';
import { appendEvents, eventsAfter, lastSeq } from './stream-store.js';

/** The events that end a response's stream. */
export const ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/** The events of a stream's start: `created`, `queued` (written with the response) and `in_progress` (by the first run). */
const START = 3;

/**
 * The event log of a background response created with `stream: true`: the writer's events are committed
 * in batches as the model answers (whatever one commit was writing, the next takes all that came
 * meanwhile), and followers are woken after each. The last events are written by the caller in the
 * transaction that ends the response, so a stream never sees an end the response does not have.
 *
 * The log numbers the events it keeps (`sequence_number`), after the last one kept: a run that takes the
 * response over from an instance that died continues the stream its followers are reading — numbers never
 * repeat or go back, and the `response.in_progress` the first run logged is not logged again. Each batch is
 * fenced by the job's claim, so a stalled instance whose claim lapsed writes nothing over the new owner.
 */
export class EventLog {
  private pending: StreamEvent[] = [];
  /** The terminal event, held for the ending transaction (flush). */
  private tail: StreamEvent[] = [];
  private writing: Promise<void> | undefined;
  private failure: unknown;

  private constructor(
    private ctx: Ctx,
    private responseId: string,
    private next: number,
    private started: boolean,
    private claim?: Pick<JobClaim, 'fence'>,
  ) {}

  /** The log of a response as its run finds it: numbering after the last event kept. */
  static async open(ctx: Ctx, responseId: string, claim?: Pick<JobClaim, 'fence'>): Promise<EventLog> {
    const last = await lastSeq(ctx.store.db, responseId);
    const first = last < 0 ? [] : await eventsAfter(ctx.store.db, responseId, -1, START);
    const started = first.some((row) => (JSON.parse(row.data) as { type: string }).type === 'response.in_progress');
    return new EventLog(ctx, responseId, last + 1, started, claim);
  }

  readonly sink: EventSink = (event) => {
    if (event.type === 'response.in_progress') {
      if (this.started) return;
      this.started = true;
    }
    event.sequence_number = this.next++;
    if (ENDS.has(event.type)) return void this.tail.push(event);
    this.pending.push(event);
    this.writing ??= this.drain();
  };

  private async drain(): Promise<void> {
    try {
      while (this.pending.length && this.failure === undefined) {
        const batch = this.pending.splice(0, this.pending.length);
        const claim = this.claim;
        if (claim)
          await this.ctx.store.db.transaction().execute(async (tx) => {
            await claim.fence(tx);
            await appendEvents(this.ctx, tx, this.responseId, batch);
          });
        else await appendEvents(this.ctx, this.ctx.store.db, this.responseId, batch);
        this.ctx.services.responses.bus.notify(this.responseId);
      }
    } catch (err) {
      this.failure = err;
    } finally {
      this.writing = undefined;
    }
  }

  /** Waits for the batches on their way; throws what failed. */
  async settle(): Promise<void> {
    await this.writing;
    if (this.failure !== undefined) throw this.failure;
  }

  /** Writes what is left in `tx` (the transaction that ends the response). */
  async flush(tx: Exec): Promise<void> {
    await appendEvents(this.ctx, tx, this.responseId, [...this.pending.splice(0, this.pending.length), ...this.tail]);
  }
}
