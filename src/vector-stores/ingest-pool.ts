import { fork, type ChildProcess } from 'node:child_process';
import { getPriority, setPriority } from 'node:os';
import { nextTurn } from '../core/next-turn.js';
import { entryScript } from './entry-script.js';
import {
  Assembly,
  MEMORY_MARK,
  requestOf,
  RETIRE_AT,
  unbundled,
  type ChildReply,
  type FileData,
  type Received,
  type ReplyBundle,
  type ReplyPart,
} from './ingest-protocol.js';
import { beyond, type IngestLimits } from './limits.js';
import type { PrepareRequest, Refusal } from './prepare.js';

/**
 * The ingestion processes: a few Node processes, started on first use and kept warm, each preparing one
 * file at a time (ingest-child.ts). A file's bytes never reach a parser in the server process: a bomb
 * can only take its ingestion process down. Each process has a V8 heap limit and a resident-memory limit
 * (its watchdog), each file a wall-time limit (the process is killed); the file then fails with a
 * message naming the limit. Processes run at a lower priority than the server, so requests go first.
 */
export interface IngestPool {
  /**
   * Prepares one file; rejects with FileRefused for a file that cannot be indexed, with another error if it
   * may be tried again. `data`: the file's bytes, or how to read them once a process is free (a file
   * waiting for a process then holds no memory). A file of `bytes` at most EARLY_READ_BYTES is read while
   * it waits, one such file per process at most, so that the process starts it the moment it is free.
   */
  run(req: Omit<PrepareRequest, 'limits' | 'data'> & { data: FileData | (() => Promise<FileData>); bytes?: number }): Promise<Received>;
  /** Ends the processes; a file in progress rejects (not refused: it is tried again later). */
  close(): Promise<void>;
  /** Process ids of the ingestion processes running now (tests measure their memory). */
  pids(): number[];
}

/** A file that cannot be indexed: its `last_error`. */
export class FileRefused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

/**
 * Files up to this size are read while they wait for a process. Read once the process was free, a file of
 * 512 KB reached it 10–15 ms later on a server busy writing the file before (a read of 64 KiB a turn of its
 * event loop): a process idle for a fifth of its time (docs/files.md, Stop 61).
 */
export const EARLY_READ_BYTES = 4 << 20;

/** Ingestion processes idle this long are ended (started again on the next file). */
const IDLE_MS = 5 * 60_000;

interface Child {
  proc: ChildProcess;
  busy: boolean;
  stderr: string;
  idleTimer?: NodeJS.Timeout;
  timedOut: boolean;
  /** The file in progress. */
  current?: { id: number; filename: string; reply: Assembly; resolve(m: ChildReply): void; reject(err: Error): void };
  exited: Promise<void>;
}

export function createIngestPool(opts: { processes: number; limits: IngestLimits }): IngestPool {
  const { limits } = opts;
  const children = new Set<Child>();
  const waiting: ((c: Child | undefined) => void)[] = [];
  let nextId = 1;
  let closed = false;
  /** Files read while they wait for a process (at most one a process). */
  let readEarly = 0;

  function spawnChild(): Child {
    const heapMb = Math.max(64, Math.floor(limits.memoryBytes / (1024 * 1024)));
    const proc = fork(entryScript('ingest-child'), [String(limits.memoryBytes)], {
      // One collector thread: the processes share the cores with the server and each other, where parallel
      // collection only adds threads to wait for (a pool of one, 193 → 177 ms of CPU per MB; of two, 203 → 191).
      // `gc` for the collection before a process past RETIRE_AT reports its size (ingest-child.ts).
      execArgv: [`--max-old-space-size=${heapMb}`, '--single-threaded-gc', '--expose-gc'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      // Nothing of the server's environment (database URL, keys) is the ingestion's business. glibc's
      // allocator, left to itself, serves a big file's arrays from its heap once it has freed one such block
      // and keeps the pages after: a process that collected its garbage after a file of 8 MB still held
      // 240–260 MB. Blocks from 1 MB are mapped (given back when freed), and the heap's top is trimmed past
      // 16 MB: 175 MB after the same files, the same CPU per MB (other allocators ignore these).
      env: { MALLOC_MMAP_THRESHOLD_: String(1 << 20), MALLOC_TRIM_THRESHOLD_: String(16 << 20) },
    });
    try {
      // Ten steps below the server (19 is the lowest): requests go first when the cores are busy.
      setPriority(proc.pid!, Math.min(19, getPriority() + 10));
    } catch {
      // Not permitted here: the processes run at the server's priority.
    }
    let exited!: () => void;
    const child: Child = { proc, busy: true, stderr: '', timedOut: false, exited: new Promise((r) => (exited = r)) };
    proc.stderr!.on('data', (d: Buffer) => (child.stderr = (child.stderr + d.toString()).slice(-4096)));
    proc.on('error', () => {});
    proc.on('message', (m: ReplyPart | ChildReply | ReplyBundle) => {
      const current = child.current;
      if (current?.id !== m.id) return;
      try {
        for (const one of 'bundle' in m ? unbundled(m) : [m]) {
          if ('ok' in one) return current.resolve(one);
          current.reply.add(one);
        }
      } catch (err) {
        current.reject(err as Error);
        child.current = undefined;
        proc.kill('SIGKILL');
      }
    });
    proc.once('exit', (code, signal) => {
      children.delete(child);
      clearTimeout(child.idleTimer);
      child.current?.reject(endOf(child, code, signal));
      child.current = undefined;
      exited();
      // A file waiting for a process gets a new one.
      const next = waiting.shift();
      if (next) next(closed ? undefined : spawnChild());
    });
    children.add(child);
    return child;
  }

  /** Hands the process to a waiting file, or lets it idle: it keeps no event loop alive, and ends after a while. */
  function release(child: Child) {
    const next = waiting.shift();
    if (next) return next(child);
    child.busy = false;
    child.proc.unref();
    child.proc.channel?.unref();
    child.idleTimer = setTimeout(() => child.proc.kill('SIGKILL'), IDLE_MS).unref();
  }

  async function acquire(): Promise<Child> {
    const free = [...children].find((c) => !c.busy);
    let child: Child | undefined;
    if (free) {
      child = free;
      child.busy = true;
    } else child = children.size < opts.processes ? spawnChild() : await new Promise<Child | undefined>((r) => waiting.push(r));
    if (!child || closed) throw new Error('ingestion is stopping');
    clearTimeout(child.idleTimer);
    child.proc.ref();
    child.proc.channel?.ref();
    return child;
  }

  async function run(req: Parameters<IngestPool['run']>[0]): Promise<Received> {
    if (closed) throw new Error('ingestion is stopping');
    const { data: source } = req;
    const waits = children.size >= opts.processes && ![...children].some((c) => !c.busy);
    let early: Promise<FileData> | undefined;
    if (typeof source === 'function' && waits && (req.bytes ?? Infinity) <= EARLY_READ_BYTES && readEarly < opts.processes) {
      readEarly++;
      early = source();
      // Its failure is the run's, once a process is free: not an unhandled rejection meanwhile.
      early.catch(() => {});
    }
    let child: Child;
    try {
      child = await acquire();
    } finally {
      if (early) readEarly--;
    }
    let data: FileData;
    try {
      data = early ? await early : typeof source === 'function' ? await source() : source;
    } catch (err) {
      release(child);
      throw err;
    }
    // Closed, or the process ended, while the file was read: nothing would answer (tried again later).
    if (closed || !children.has(child)) throw new Error('ingestion stopped before the file was sent');
    const id = nextId++;
    const assembly = new Assembly(limits.memoryBytes, 'path' in data ? undefined : data instanceof Uint8Array ? [data] : data);
    let timer: NodeJS.Timeout | undefined;
    const reply = await new Promise<ChildReply>((resolve, reject) => {
      child.current = { id, filename: req.filename, reply: assembly, resolve, reject };
      child.timedOut = false;
      timer = setTimeout(() => {
        child.timedOut = true;
        child.proc.kill('SIGKILL');
      }, limits.timeoutMs);
      void (async () => {
        // A turn between the parts: each is encoded on this thread.
        for (const msg of requestOf(id, { ...req, data, limits })) {
          if (child.current?.id !== id) return;
          child.proc.send(msg, (err) => {
            if (err) child.proc.kill('SIGKILL');
          });
          await nextTurn();
        }
      })();
    }).finally(() => clearTimeout(timer));
    child.current = undefined;
    if (reply.rss > limits.memoryBytes * RETIRE_AT) child.proc.kill('SIGKILL');
    else release(child);
    if (!reply.ok) throw 'refusal' in reply ? new FileRefused(reply.refusal) : new Error(String(reply.error));
    return assembly.done();
  }

  /** Why a process ended mid-file: a limit (the file fails), or the pool closing (tried again). */
  function endOf(child: Child, code: number | null, signal: NodeJS.Signals | null): Error {
    const filename = child.current?.filename ?? '';
    const { stderr } = child;
    if (closed) return new Error('ingestion stopped before the file was done');
    if (child.timedOut)
      return new FileRefused({
        code: 'invalid_file',
        message: beyond(filename, 'took too long to extract, chunk and embed', `${limits.timeoutMs} ms`, 'ingest-timeout-ms').message,
      });
    if (stderr.includes(MEMORY_MARK) || /heap out of memory|heap limit/i.test(stderr))
      return new FileRefused({
        code: 'invalid_file',
        message: beyond(filename, 'needed too much memory to index', `${Math.round(limits.memoryBytes / 1048576)} MB`, 'ingest-memory-mb')
          .message,
      });
    return new FileRefused({
      code: 'invalid_file',
      message: `The file ${filename} made its ingestion process fail (${signal ?? `exit code ${code}`}).`,
    });
  }

  return {
    run,
    pids: () => [...children].map((c) => c.proc.pid!).filter(Boolean),
    async close() {
      closed = true;
      for (const next of waiting.splice(0)) next(undefined);
      const all = [...children];
      for (const c of all) {
        // Held until it has exited: an idle process is unref'd, and its end must still be awaited.
        c.proc.ref();
        c.proc.kill('SIGKILL');
      }
      await Promise.all(all.map((c) => c.exited));
    },
  };
}
