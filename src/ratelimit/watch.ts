import type { Ctx } from '../core/module.js';
import * as store from './store.js';

/** PostgreSQL: everything is re-read now and then, in case a notification was lost with its connection. */
const PG_RESYNC_MS = 2_000;
/** SQLite: how often `PRAGMA data_version` is checked for another process's commit. */
const SQLITE_CHECK_MS = 250;

/**
 * Follows changes other instances make to the shared rate-limit state (faults, the catalog): on
 * PostgreSQL a LISTEN connection calls the handler named by each notification at once, and every handler
 * runs every 2 s as well; on SQLite (other processes on the same file) every handler runs within 250 ms
 * of another connection's commit (`PRAGMA data_version`). Handlers must not throw.
 */
export function createWatcher(ctx: Pick<Ctx, 'store' | 'log'>, handlers: Record<'faults' | 'config', () => Promise<void>>) {
  const db = ctx.store.db;
  const all = () => Promise.all(Object.values(handlers).map((h) => h())).then(() => {});
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => void) | undefined;
  let stopped = false;

  let listening = false;
  let warned = false;
  async function listen() {
    // One attempt at a time: a stalled database must not collect connection attempts.
    if (listening || stopped) return;
    listening = true;
    try {
      unlisten = await store.listenForChanges(
        ctx.store,
        (what) => void (handlers[what as keyof typeof handlers] ?? all)(),
        () => (unlisten = undefined),
      );
      if (stopped) unlisten();
      warned = false;
    } catch (err) {
      // Once per failure, not at every retry.
      if (!warned) ctx.log.warn({ err }, `LISTEN for rate-limit changes failed; re-reading every ${PG_RESYNC_MS / 1000} s`);
      warned = true;
    } finally {
      listening = false;
    }
  }

  let resyncing = false;
  /** Every handler, unless the last round is still running (a stalled database). */
  function resync() {
    if (resyncing) return;
    resyncing = true;
    void all().finally(() => (resyncing = false));
  }

  return {
    async start() {
      if (ctx.store.dialect === 'postgres') {
        await listen();
        timer = setInterval(() => {
          if (!unlisten) void listen();
          resync();
        }, PG_RESYNC_MS);
      } else {
        let version = await store.dataVersion(db);
        let checking = false;
        timer = setInterval(() => {
          if (checking) return;
          checking = true;
          store
            .dataVersion(db)
            .then((v) => {
              if (v === version) return;
              version = v;
              return all();
            })
            .catch(() => {})
            .finally(() => (checking = false));
        }, SQLITE_CHECK_MS);
      }
      timer.unref();
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      unlisten?.();
    },
  };
}

export type Watcher = ReturnType<typeof createWatcher>;
