import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

// Runs in the worker thread: its own connection, a passive checkpoint every `everyMs`.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage(String(err && err.message || err)); }
}, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * WAL checkpoints off the event loop. SQLite checkpoints on the committing connection by default, and a
 * checkpoint (with `synchronous = NORMAL`) ends in an fsync: every thousand pages or so one commit stalled
 * the server for 10–20 ms. Here the writer's automatic checkpoints are off and a worker thread with its
 * own connection runs a passive checkpoint (it never blocks readers or the writer) every `everyMs`. If the
 * worker fails, the writer checkpoints itself again.
 */
export function startCheckpointer(
  writer: SQLite.Database,
  file: string,
  log: { warn(o: unknown, msg: string): void },
  everyMs = 500,
  /** The worker starts this long after: a short run (`standin exec -- true`) never pays for its thread (~40 ms of CPU). */
  afterMs = 1000,
): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  writer.pragma('wal_autocheckpoint = 0');
  const fallBack = (reason: unknown) => {
    log.warn({ reason: String(reason) }, 'background checkpoints failed; the writer checkpoints again');
    if (writer.open) writer.pragma('wal_autocheckpoint = 1000');
  };
  let worker: Worker | undefined;
  let exited: Promise<void> | undefined;
  const begin = () => {
    worker = new Worker(WORKER, { eval: true, workerData: { file, driver, everyMs } });
    worker.unref();
    worker.on('message', fallBack);
    worker.on('error', fallBack);
    const started = worker;
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
  };
  // Until then the WAL only grows (a second of writes); the writer's own close checkpoints it as well.
  const timer = setTimeout(begin, afterMs);
  timer.unref();
  return {
    async stop() {
      clearTimeout(timer);
      if (!worker) return;
      worker.off('message', fallBack);
      // Unref'd, the worker would not keep the process alive until it exits: a stop awaiting it would end
      // with the event loop instead, before the store's last connection checkpoints and closes.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
