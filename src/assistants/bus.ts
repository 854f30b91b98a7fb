import { EventEmitter } from 'node:events';
import type { Ctx } from '../core/module.js';

/**
 * Wakes whoever follows a run (SSE streams, the executor watching for a cancel) when the run's event log
 * grows. Writers in this process call `notify` after their commit; with PostgreSQL every writer also
 * sends `NOTIFY standin_runs, '<run id>'` inside its transaction, and each instance LISTENs and relays
 * it here, so a stream served by one instance follows a run executed by another. Followers also re-read
 * on a short timer, so a lost notification only delays, never stalls, a stream.
 */
export class RunBus {
  private emitter = new EventEmitter();
  private listener: { release(): void } | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

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

  /** With PostgreSQL, relays other instances' notifications; a lost connection is opened again a second later. */
  async start(ctx: Ctx): Promise<void> {
    this.stopped = false;
    if (ctx.store.dialect !== 'postgres' || !ctx.store.pgPool || this.listener) return;
    const client = await ctx.store.pgPool.connect();
    client.on('notification', (msg) => {
      if (msg.channel === 'standin_runs' && msg.payload) this.notify(msg.payload);
    });
    client.on('error', (err) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.release(err);
      ctx.log.warn({ err }, 'run notifications lost; streams poll until they are back');
      this.startLater(ctx);
    });
    try {
      await client.query('LISTEN standin_runs');
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
    this.listener = client;
  }

  private startLater(ctx: Ctx): void {
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      if (this.stopped) return;
      this.start(ctx).catch((err) => {
        ctx.log.warn({ err }, 'LISTEN for run notifications failed; trying again');
        this.startLater(ctx);
      });
    }, 1000);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.listener?.release();
    this.listener = undefined;
  }
}
