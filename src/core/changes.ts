import type { Exec, Store } from '../store/db.js';
import { keepListening, type Listening } from '../store/listen.js';
import * as store from './changes-store.js';

/** How often every instance reads the generations (both stores): the bound on how late a change arrives. */
export const POLL_MS = 250;

/**
 * The one way state an instance holds in memory (faults, the rate-limit catalog, the models config, cached
 * credentials and workload identity configuration …) follows what other instances on the same store change.
 *
 * A change bumps its concern's generation in the transaction that makes it (`bump`); every instance runs
 * the reloads subscribed to that concern (`on`) once it sees the new generation. Instances see it at once on
 * PostgreSQL (LISTEN/NOTIFY), and within `POLL_MS` on both stores through a poll of the generations, which
 * also covers notifications lost with their connection and SQLite processes sharing a folder. A reload runs
 * on the writing instance too; a writer that must read its own change at once calls `check` after its commit.
 *
 * Concerns are plain names an area picks (`faults`, `models`, `credentials`): this file knows no area.
 */
export interface Changes {
  /** Marks `concern` changed, inside the change's own transaction (nothing is signalled if it rolls back). */
  bump(exec: Exec, concern: string): Promise<void>;
  /** Marks every concern changed (an admin reset emptied the state behind all of them). */
  bumpAll(exec: Exec): Promise<void>;
  /** Runs `reload` on this instance whenever `concern` changes (here or on another instance). Must not throw. */
  on(concern: string, reload: () => Promise<void> | void): void;
  /** Reads the generations now and runs the reloads of what changed; resolves once they ran. */
  check(): Promise<void>;
  /** Reads the generations as they are now (changes from here on are reloaded), then starts following. */
  start(): Promise<void>;
  /**
   * Stops following: no check runs from here on, and the promise settles once the one running (and its
   * reloads) has ended, so the store can be closed under none.
   */
  stop(): Promise<void>;
}

/** The change signal of one Standin (`ctx.changes`). */
export function createChanges(s: Store, log: { warn(obj: unknown, msg?: string): void }): Changes {
  const subscribers = new Map<string, (() => Promise<void> | void)[]>();
  let seen = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let listening: Listening | undefined;

  async function run(): Promise<void> {
    const now = await store.readGenerations(s.db);
    const changed: string[] = [];
    for (const [concern, generation] of now) if (seen.get(concern) !== generation) changed.push(concern);
    seen = now;
    for (const concern of changed) {
      for (const reload of subscribers.get(concern) ?? []) {
        try {
          await reload();
        } catch (err) {
          // Read again at the next poll rather than keep a stale copy until the next change.
          seen.delete(concern);
          log.warn({ err, concern }, 'reloading after a change failed; trying again');
        }
      }
    }
  }

  // One check at a time; a check asked for while one runs starts after it (it must see later commits).
  let current: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  let stopped = false;
  function check(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (!current) {
      current = run().finally(() => (current = undefined));
      return current;
    }
    next ??= current
      .catch(() => {})
      .then(() => {
        next = undefined;
        return check();
      });
    return next;
  }

  let warned = false;
  let polling = false;
  function poll() {
    // A stalled database: the last round is still running.
    if (polling) return;
    polling = true;
    check()
      .catch((err) => {
        if (!warned) log.warn({ err }, 'reading the change generations failed');
        warned = true;
      })
      .finally(() => (polling = false));
  }

  return {
    bump: (exec, concern) => store.bumpGeneration(s, exec, concern),
    bumpAll: (exec) => store.bumpAll(s, exec),
    on(concern, reload) {
      const list = subscribers.get(concern) ?? [];
      list.push(reload);
      subscribers.set(concern, list);
    },
    check,
    async start() {
      if (timer) return;
      stopped = false;
      seen = await store.readGenerations(s.db);
      if (s.dialect === 'postgres' && s.pgPool) {
        const follow = () => void check().catch(() => {});
        // Listening again after a loss, it reads at once what changed meanwhile.
        listening = keepListening(s.pgPool, store.CHANNEL, follow, { log, onListen: follow });
        await listening.ready;
      }
      timer = setInterval(poll, POLL_MS);
      timer.unref();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      timer = undefined;
      listening?.stop();
      listening = undefined;
      // A check queued behind the running one sees `stopped` and runs nothing.
      await Promise.all([current, next].map((p) => p?.catch(() => {})));
    },
  };
}
