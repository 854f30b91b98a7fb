import { Kernel, type KernelLimits } from './kernel.js';
import type { ExecuteRequest, ExecuteResult } from './types.js';

export interface PoolOptions extends KernelLimits {
  /** Kernels kept started and unclaimed, so a new session does not wait for Pyodide to load. */
  poolSize: number;
  /** Sessions (kernels) alive at once; past it the least recently used idle one is closed. */
  maxSessions: number;
  /** A session unused this long (Standin clock) is closed. */
  idleMs: number;
  timeoutMs: number;
}

interface Session {
  key: string;
  kernel?: Kernel;
  /** Executions in flight or queued (the session's kernel runs one at a time). */
  busy: number;
  lastUsed: number;
  queue: Promise<unknown>;
}

export interface PoolStats {
  sessions: number;
  spares: number;
}

/**
 * Pyodide kernels, one per session, plus a few warm spares. Nothing starts until the first execution
 * (or `warm()`), so Standin's start and unrelated tests never pay for Pyodide's load.
 */
export class KernelPool {
  private readonly spares: Kernel[] = [];
  private starting = 0;
  private readonly sessions = new Map<string, Session>();
  private waiters: (() => void)[] = [];
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly opts: PoolOptions,
    private readonly now: () => number,
    private readonly log: { warn(obj: unknown, msg?: string): void },
  ) {}

  /** Starts the spare kernels now (in the background) rather than at the first execution. */
  warm(): void {
    this.refill();
  }

  async execute(req: ExecuteRequest): Promise<ExecuteResult> {
    if (this.closed) throw new Error('the code interpreter is closed');
    this.startSweeping();
    this.expireIdle();
    let s = this.sessions.get(req.session);
    if (s?.kernel?.dead) {
      this.sessions.delete(req.session);
      s = undefined;
    }
    if (s) {
      // Most recently used last: the map's order is the eviction order.
      this.sessions.delete(s.key);
      this.sessions.set(s.key, s);
    } else {
      s = { key: req.session, busy: 0, lastUsed: this.now(), queue: Promise.resolve() };
      this.sessions.set(s.key, s);
    }
    const session = s;
    session.busy++;
    const run = session.queue.then(async () => {
      if (!session.kernel || session.kernel.dead) session.kernel = await this.claim(session);
      return session.kernel.run(req.code, req.files ?? [], req.timeoutMs ?? this.opts.timeoutMs);
    });
    session.queue = run.catch(() => {});
    try {
      return await run;
    } finally {
      session.busy--;
      session.lastUsed = this.now();
      if (session.kernel?.dead && this.sessions.get(session.key) === session && session.busy === 0) this.sessions.delete(session.key);
      if (this.sessions.get(session.key) !== session && session.busy === 0) await session.kernel?.terminate();
      this.wake();
    }
  }

  async closeSession(key: string): Promise<void> {
    const s = this.sessions.get(key);
    if (!s) return;
    this.sessions.delete(key);
    await s.kernel?.terminate('the session was closed');
    this.wake();
  }

  stats(): PoolStats {
    return { sessions: this.sessions.size, spares: this.spares.length };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const kernels = [...this.spares, ...[...this.sessions.values()].flatMap((s) => (s.kernel ? [s.kernel] : []))];
    this.spares.length = 0;
    this.sessions.clear();
    for (const w of this.waiters) w();
    await Promise.all(kernels.map((k) => k.terminate('Standin is stopping')));
  }

  /** A kernel for a session, once the session may hold one (at most maxSessions do). */
  private async claim(self: Session): Promise<Kernel> {
    for (;;) {
      if (this.closed) throw new Error('the code interpreter is closed');
      const holders = [...this.sessions.values()].filter((s) => s.kernel && !s.kernel.dead);
      if (holders.length < this.opts.maxSessions) break;
      const idle = holders.find((s) => s.busy === 0 && s !== self);
      if (idle) {
        this.sessions.delete(idle.key);
        await idle.kernel!.terminate('the session was closed to make room for another');
        continue;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    let kernel: Kernel | undefined;
    while (this.spares.length && !kernel) {
      const k = this.spares.shift()!;
      if (!k.dead) kernel = k;
    }
    kernel ??= this.startKernel();
    // Held before it is ready, so concurrent claims count it.
    self.kernel = kernel;
    this.refill();
    try {
      await kernel.ready;
    } catch (err) {
      self.kernel = undefined;
      this.wake();
      throw err;
    }
    return kernel;
  }

  private startKernel(): Kernel {
    return new Kernel(this.opts);
  }

  private refill(): void {
    if (this.closed) return;
    while (this.spares.length + this.starting < this.opts.poolSize) {
      this.starting++;
      const k = this.startKernel();
      k.ready.then(
        () => {
          this.starting--;
          if (this.closed) void k.terminate('Standin is stopping');
          else this.spares.push(k);
        },
        (err: unknown) => {
          this.starting--;
          // No retry loop: the next session starts its own kernel and reports the failure.
          this.log.warn({ err: String(err) }, 'a spare Python kernel did not start');
        },
      );
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private expireIdle(): void {
    const limit = this.now() - this.opts.idleMs;
    for (const s of [...this.sessions.values()]) {
      if (s.busy === 0 && s.lastUsed <= limit) {
        this.sessions.delete(s.key);
        void s.kernel?.terminate('the session expired');
      }
    }
    this.wake();
  }

  private startSweeping(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.expireIdle(), Math.min(60_000, Math.max(1000, this.opts.idleMs / 4)));
    this.timer.unref();
  }
}
