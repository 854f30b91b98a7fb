import type { Ctx } from '../core/module.js';
import type { Exec } from '../store/db.js';
import type { EventSink, StreamEvent } from './events.js';
import { appendEvents } from './stream-store.js';

/** The events that end a response's stream. */
export const ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/**
 * The event log of a background response created with `stream: true`: the writer's events are committed
 * in batches as the model answers (whatever one commit was writing, the next takes all that came
 * meanwhile), and followers are woken after each. The last events are written by the caller in the
 * transaction that ends the response, so a stream never sees an end the response does not have.
 */
export class EventLog {
  private pending: StreamEvent[] = [];
  /** The terminal event, held for the ending transaction (flush). */
  private tail: StreamEvent[] = [];
  private writing: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private ctx: Ctx,
    private responseId: string,
  ) {}

  readonly sink: EventSink = (event) => {
    if (ENDS.has(event.type)) return void this.tail.push(event);
    this.pending.push(event);
    this.writing ??= this.drain();
  };

  private async drain(): Promise<void> {
    try {
      while (this.pending.length && this.failure === undefined) {
        const batch = this.pending.splice(0, this.pending.length);
        await appendEvents(this.ctx, this.ctx.store.db, this.responseId, batch);
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
