import { EventEmitter } from 'node:events';
import type { Ctx } from './module.js';
import { keepListening, type Listening } from '../store/listen.js';

/**
 * Wakes whoever follows an event log (a run's, a background response's: SSE streams, an executor watching
 * for a cancel) when it grows. Writers in this process call `notify` after their commit; with PostgreSQL
 * every writer also sends `NOTIFY <channel>, '<id>'` inside its transaction, and each instance LISTENs and
 * relays it here, so a stream served by one instance follows work executed by another. Followers also
 * re-read on a short timer, so a lost notification only delays, never stalls, a stream.
 */
export class ChangeBus {
  private emitter = new EventEmitter();
  private listening: Listening | undefined;

  /** `channel`: the PostgreSQL notification channel the writers of this kind of log send to. */
  constructor(private channel: string) {
    this.emitter.setMaxListeners(0);
  }

  notify(id: string): void {
    this.emitter.emit(id);
  }

  /** Calls `fn` on every change of the log until the returned function is called. */
  on(id: string, fn: () => void): () => void {
    this.emitter.on(id, fn);
    return () => this.emitter.off(id, fn);
  }

  /** Resolves at the next change of the log, after `ms`, or when `signal` aborts. Subscribe before reading to miss nothing. */
  waiter(id: string, ms: number, signal?: AbortSignal): { promise: Promise<void>; cancel(): void } {
    let done!: () => void;
    const promise = new Promise<void>((resolve) => (done = resolve));
    const timer = setTimeout(() => finish(), ms);
    const finish = () => {
      clearTimeout(timer);
      this.emitter.off(id, finish);
      signal?.removeEventListener('abort', finish);
      done();
    };
    this.emitter.on(id, finish);
    signal?.addEventListener('abort', finish, { once: true });
    return { promise, cancel: finish };
  }

  /** With PostgreSQL, relays other instances' notifications (followers re-read on their timers while it is down). */
  async start(ctx: Ctx): Promise<void> {
    if (ctx.store.dialect !== 'postgres' || !ctx.store.pgPool || this.listening) return;
    this.listening = keepListening(ctx.store.pgPool, this.channel, (id) => id && this.notify(id), { log: ctx.log });
    await this.listening.ready;
  }

  stop(): void {
    this.listening?.stop();
    this.listening = undefined;
  }
}
