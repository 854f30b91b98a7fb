import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { kernelMain } from './kernel-worker.js';
import { guardMemfs } from './memfs-guard.js';
import { withNotes } from './notes.js';
import type { PackageStore } from './packages.js';
import {
  INTERRUPT_OUTPUT,
  INTERRUPT_TIMEOUT,
  type KernelInbound,
  type KernelOutbound,
  type KernelWorkerData,
  type WorkerPackage,
} from './protocol.js';
import { PRELUDE } from './python.js';
import type { ExecuteResult, SandboxFile } from './types.js';
import { wasmHashes } from './wheel.js';

/** The limits of one kernel, from the config. */
export interface KernelLimits {
  /** Largest WASM memory of the interpreter (its heap, /mnt/data included). */
  memoryMb: number;
  /** V8 heap of the worker thread (the JS side of Pyodide). */
  heapMb: number;
  outputLimitBytes: number;
  /** Files and folders a session may hold (/mnt/data and /tmp). */
  maxFiles: number;
  /** Bytes of changed files one execution returns. */
  outputFilesLimitBytes: number;
  /** Processes and threads of a session's sandbox at once (bwrap). */
  maxProcesses: number;
  /** After the time limit Python is interrupted; if it has not stopped this much later the worker is ended. */
  graceMs: number;
  /** Pyodide's distribution, loaded on first import (Pyodide only; without it only the standard library). */
  packages?: PackageStore;
}

/** What the pool needs of a kernel: Pyodide's (below) or the bwrap executor's (bwrap.ts). */
export interface KernelLike {
  readonly ready: Promise<void>;
  /** The memory snapshot a first kernel hands out for the next ones (Pyodide only). */
  readonly snapshot: Promise<Uint8Array | undefined>;
  dead: boolean;
  run(code: string, files: SandboxFile[], timeoutMs: number): Promise<ExecuteResult>;
  terminate(reason?: string): Promise<void>;
}

let source: string | undefined;
let indexURL: string | undefined;

/** Where the pyodide package is: node_modules, found from this file (source or bundle) as Node would. */
function pyodideFolder(): string {
  indexURL ??= `${dirname(createRequire(import.meta.url).resolve('pyodide/package.json'))}/`;
  return indexURL;
}

const lost = (why: string) => `\n[${why}: the session was reset; variables and files in /mnt/data are gone]`;

/**
 * One Pyodide interpreter in a worker thread: one session's Python globals and /mnt/data. Runs one
 * execution at a time (the pool queues the rest). `dead` once the worker has ended; it is never reused then.
 */
export class Kernel implements KernelLike {
  readonly ready: Promise<void>;
  /** With `snapshot: 'make'`: the interpreter's memory right after loading, for the next kernels (or undefined). */
  readonly snapshot: Promise<Uint8Array | undefined>;
  dead = false;
  private worker?: Worker;
  private readonly interrupt = new Int32Array(new SharedArrayBuffer(8));
  private pending?: { id: number; resolve(r: ExecuteResult): void };
  private nextId = 1;
  private endReason = 'the kernel stopped';
  private exited: Promise<void> = Promise.resolve();
  /** Packages (lock file names) handed to this kernel's interpreter. */
  private readonly installed = new Set<string>();
  /** Aborts the downloads of the execution in flight when its time is up. */
  private aborter?: AbortController;

  /**
   * `snapshot`: 'make' loads Pyodide in full and hands its memory snapshot out (`this.snapshot`); a promise
   * of one waits for it and starts from it (several times faster), or in full if there is none.
   */
  constructor(
    private readonly limits: KernelLimits,
    snapshot: 'make' | Promise<Uint8Array | undefined>,
  ) {
    let gotSnapshot: (s: Uint8Array | undefined) => void = () => {};
    this.snapshot = snapshot === 'make' ? new Promise((resolve) => (gotSnapshot = resolve)) : Promise.resolve(undefined);
    this.ready = (async () => {
      const from = snapshot === 'make' ? undefined : await snapshot;
      if (this.dead) throw new Error(this.endReason);
      const worker = this.spawn(snapshot === 'make', from);
      await new Promise<void>((resolve, reject) => {
        worker.on('message', (m: KernelOutbound) => {
          if (m.type === 'snapshot') gotSnapshot(m.bytes);
          else if (m.type === 'ready') resolve();
          else if (m.type === 'failed') {
            reject(new Error(`the Python kernel did not start: ${m.message}`));
            void this.terminate('the kernel did not start');
          } else if (m.type === 'result') this.settle(m);
          else if (m.type === 'imports') void this.provide(m.id, m.names);
        });
        worker.on('error', (err: Error & { code?: string }) => {
          this.endReason =
            err.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? 'execution stopped: the memory limit was reached'
              : `the kernel failed (${err.message})`;
          reject(err);
        });
        worker.once('exit', () => {
          this.dead = true;
          gotSnapshot(undefined);
          reject(new Error(this.endReason));
          this.settleLost();
        });
      });
    })();
    // A kernel that fails to start is reported to whoever awaits `ready`; never an unhandled rejection.
    this.ready.catch(() => gotSnapshot(undefined));
  }

  private spawn(makeSnapshot: boolean, snapshot: Uint8Array | undefined): Worker {
    // An eval'd worker script has `require` as a global; the kernel takes it as its parameter.
    source ??= `(${String(kernelMain)})(globalThis.require, ${String(guardMemfs)})`;
    const workerData: KernelWorkerData = {
      indexURL: pyodideFolder(),
      prelude: PRELUDE,
      memoryLimitBytes: this.limits.memoryMb * 1024 * 1024,
      outputLimitBytes: this.limits.outputLimitBytes,
      maxFiles: this.limits.maxFiles,
      outputFilesLimitBytes: this.limits.outputFilesLimitBytes,
      interrupt: this.interrupt.buffer as SharedArrayBuffer,
      interruptTimeout: INTERRUPT_TIMEOUT,
      interruptOutput: INTERRUPT_OUTPUT,
      makeSnapshot,
      snapshot,
      importable: this.limits.packages?.importable() ?? [],
    };
    const worker = new Worker(source, {
      eval: true,
      workerData,
      // No environment for the thread, its stdio kept from Standin's own, and a bounded V8 heap.
      env: {},
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: this.limits.heapMb, maxYoungGenerationSizeMb: 32 },
    });
    worker.stdout.resume();
    worker.stderr.resume();
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    this.worker = worker;
    return worker;
  }

  private settle(m: Extract<KernelOutbound, { type: 'result' }>): void {
    if (this.pending?.id !== m.id) return;
    const { resolve } = this.pending;
    this.pending = undefined;
    let logs = m.logs;
    if (m.status === 'crashed') {
      // The interpreter is unusable after a fatal error: end the thread, the session starts afresh.
      logs += lost('the Python kernel failed');
      void this.terminate('the Python kernel failed');
    }
    logs = withNotes(logs, m, this.limits);
    // durationMs is set by run(): the time the caller waited for the kernel.
    resolve({ logs, status: m.status, files: m.files.map((f) => ({ path: f.path, bytes: f.bytes })), images: m.images, durationMs: 0 });
  }

  /** Answers the worker's `imports`: the verified wheels the code needs, or why they cannot be had. */
  private async provide(id: number, names: string[]): Promise<void> {
    let reply: KernelInbound;
    try {
      const store = this.limits.packages;
      if (!store) throw new Error(`no package source is configured for ${names.join(', ')}`);
      const signal = this.aborter?.signal;
      const list = store.resolve(names, this.installed);
      const packages: WorkerPackage[] = await Promise.all(
        list.map(async (p) => {
          const bytes = await store.fetch(p, signal);
          return { name: p.name, fileName: p.file_name, installDir: p.install_dir, bytes, wasm: await wasmHashes(bytes) };
        }),
      );
      for (const p of list) this.installed.add(p.name);
      reply = { type: 'packages', id, packages };
    } catch (err) {
      reply = { type: 'packages', id, packages: [], error: (err as Error).message };
    }
    if (!this.dead) this.worker?.postMessage(reply);
  }

  /** The thread ended with an execution in flight: the session's state is gone, and the result says so. */
  private settleLost(): void {
    const p = this.pending;
    this.pending = undefined;
    if (!p) return;
    const status = this.endReason.startsWith('execution stopped: the time')
      ? 'timeout'
      : this.endReason.includes('memory')
        ? 'memory'
        : 'crashed';
    p.resolve({ logs: lost(this.endReason), status, files: [], images: [], durationMs: 0 });
  }

  /** Runs code; resolves with the result whatever happens (a stopped or crashed kernel is a result too). */
  async run(code: string, files: SandboxFile[], timeoutMs: number): Promise<ExecuteResult> {
    if (this.dead || !this.worker) throw new Error('the kernel has ended');
    const started = performance.now();
    const id = this.nextId++;
    const result = new Promise<ExecuteResult>((resolve) => (this.pending = { id, resolve }));
    const msg: KernelInbound = { type: 'run', id, code, files: files.map((f) => ({ path: f.path, bytes: f.bytes })) };
    this.worker.postMessage(msg);
    let hard: NodeJS.Timeout | undefined;
    const aborter = (this.aborter = new AbortController());
    const soft = setTimeout(() => {
      aborter.abort(new Error('the time limit was reached'));
      // First ask Python to stop (KeyboardInterrupt keeps the session); end the thread if it does not.
      Atomics.store(this.interrupt, 1, INTERRUPT_TIMEOUT);
      Atomics.store(this.interrupt, 0, 2);
      hard = setTimeout(() => void this.terminate('execution stopped: the time limit was reached'), this.limits.graceMs);
    }, timeoutMs);
    try {
      const r = await result;
      r.durationMs = Math.round(performance.now() - started);
      return r;
    } finally {
      clearTimeout(soft);
      clearTimeout(hard);
    }
  }

  /** Ends the worker; an execution in progress resolves with `reason`. */
  async terminate(reason = 'the session was closed'): Promise<void> {
    if (!this.dead) this.endReason = reason;
    this.dead = true; // at once: no execution is handed to a thread that is ending
    await this.worker?.terminate();
    await this.exited;
  }
}
