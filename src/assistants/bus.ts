import { EventEmitter } from 'node:events';
import type { Ctx } from '../core/module.js';
import { keepListening, type Listening } from '../store/listen.js';

/**
 * Wakes whoever follows a run (SSE streams, the executor watching for a cancel) when the run's event log
 * grows. Writers in this process call `notify` after their commit; with PostgreSQL every writer also
 * sends `NOTIFY standin_runs, '<run id>'` inside its transaction, and each instance LISTENs and relays
 * it here, so a stream served by one instance follows a run executed by another. Followers also re-read
 * on a short timer, so a lost notification only delays, never stalls, a stream.
 */
export class RunBus {
  private emitter = new EventEmitter();
  private listening: Listening | undefined;

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  notify(runId: string): void {
    this.emitter.emit(runId);
  }

  /** Calls `fn` on every change of the run until the returned function is called. */
  on(runId: string, fn: () => void): () => void {
    this.emitter.on(runId, fn);
    return () => this.emitter.off(runId, fn);
  }

  /** Resolves at the next change of the run, after `ms`, or when `signal` aborts. Subscribe before reading to miss nothing. */
  waiter(runId: string, ms: number, signal?: AbortSignal): { promise: Promise<void>; cancel(): void } {
    let done!: () => void;
    const promise = new Promise<void>((resolve) => (done = resolve));
    const timer = setTimeout(() => finish(), ms);
    const finish = () => {
      clearTimeout(timer);
      this.emitter.off(runId, finish);
      signal?.removeEventListener('abort', finish);
      done();
    };
    this.emitter.on(runId, finish);
    signal?.addEventListener('abort', finish, { once: true });
    return { promise, cancel: finish };
  }

  /** With PostgreSQL, relays other instances' notifications (followers re-read on their timers while it is down). */
  async start(ctx: Ctx): Promise<void> {
    if (ctx.store.dialect !== 'postgres' || !ctx.store.pgPool || this.listening) return;
    this.listening = keepListening(ctx.store.pgPool, 'standin_runs', (runId) => runId && this.notify(runId), { log: ctx.log });
    await this.listening.ready;
  }

  stop(): void {
    this.listening?.stop();
    this.listening = undefined;
  }
}
