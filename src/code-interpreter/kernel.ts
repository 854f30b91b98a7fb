import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { kernelMain } from './kernel-worker.js';
import { INTERRUPT_OUTPUT, INTERRUPT_TIMEOUT, type KernelInbound, type KernelOutbound, type KernelWorkerData } from './protocol.js';
import { PRELUDE } from './python.js';
import type { ExecuteResult, SandboxFile } from './types.js';

/** The limits of one kernel, from the config. */
export interface KernelLimits {
  /** Largest WASM memory of the interpreter (its heap, /mnt/data included). */
  memoryMb: number;
  /** V8 heap of the worker thread (the JS side of Pyodide). */
  heapMb: number;
  outputLimitBytes: number;
  /** After the time limit Python is interrupted; if it has not stopped this much later the worker is ended. */
  graceMs: number;
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
export class Kernel {
  readonly ready: Promise<void>;
  dead = false;
  private readonly worker: Worker;
  private readonly interrupt = new Int32Array(new SharedArrayBuffer(8));
  private pending?: { id: number; resolve(r: ExecuteResult): void };
  private nextId = 1;
  private endReason = 'the kernel stopped';
  private readonly exited: Promise<void>;

  constructor(private readonly limits: KernelLimits) {
    // An eval'd worker script has `require` as a global; the kernel takes it as its parameter.
    source ??= `(${String(kernelMain)})(globalThis.require)`;
    const workerData: KernelWorkerData = {
      indexURL: pyodideFolder(),
      prelude: PRELUDE,
      memoryLimitBytes: limits.memoryMb * 1024 * 1024,
      outputLimitBytes: limits.outputLimitBytes,
      interrupt: this.interrupt.buffer as SharedArrayBuffer,
      interruptTimeout: INTERRUPT_TIMEOUT,
      interruptOutput: INTERRUPT_OUTPUT,
    };
    this.worker = new Worker(source, {
      eval: true,
      workerData,
      // No environment for the thread, its stdio kept from Standin's own, and a bounded V8 heap.
      env: {},
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: limits.heapMb, maxYoungGenerationSizeMb: 32 },
    });
    this.worker.stdout.resume();
    this.worker.stderr.resume();
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (m: KernelOutbound) => {
        if (m.type === 'ready') resolve();
        else if (m.type === 'failed') {
          reject(new Error(`the Python kernel did not start: ${m.message}`));
          void this.terminate('the kernel did not start');
        } else if (m.type === 'result' && this.pending?.id === m.id) {
          const { resolve: done } = this.pending;
          this.pending = undefined;
          let logs = m.logs;
          if (m.status === 'crashed') {
            // The interpreter is unusable after a fatal error: end the thread, the session starts afresh.
            logs += lost('the Python kernel failed');
            void this.terminate('the Python kernel failed');
          }
          if (m.truncated) logs += `\n[output truncated: the logs are limited to ${this.limits.outputLimitBytes} bytes]`;
          if (m.status === 'timeout') logs += '\n[execution stopped: the time limit was reached]';
          if (m.status === 'memory') logs += `\n[execution stopped: the memory limit of ${this.limits.memoryMb} MB was reached]`;
          done({
            logs,
            status: m.status,
            files: m.files.map((f) => ({ path: f.path, bytes: f.bytes })),
            images: m.images,
            durationMs: 0, // set by run(): the time the caller waited, queueing in the worker included
          });
        }
      });
      this.worker.on('error', (err: Error & { code?: string }) => {
        this.endReason =
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? 'execution stopped: the memory limit was reached'
            : `the kernel failed (${err.message})`;
        reject(err);
      });
      this.worker.once('exit', () => {
        this.dead = true;
        reject(new Error(this.endReason));
        const p = this.pending;
        this.pending = undefined;
        if (p) {
          const memory = this.endReason.includes('memory');
          p.resolve({
            logs: lost(this.endReason),
            status: this.endReason.startsWith('execution stopped: the time') ? 'timeout' : memory ? 'memory' : 'crashed',
            files: [],
            images: [],
            durationMs: 0,
          });
        }
      });
    });
    // A kernel that fails to start is reported to whoever awaits `ready`; never an unhandled rejection.
    this.ready.catch(() => {});
  }

  /** Runs code; resolves with the result whatever happens (a stopped or crashed kernel is a result too). */
  async run(code: string, files: SandboxFile[], timeoutMs: number): Promise<ExecuteResult> {
    if (this.dead) throw new Error('the kernel has ended');
    const started = performance.now();
    const id = this.nextId++;
    const result = new Promise<ExecuteResult>((resolve) => (this.pending = { id, resolve }));
    const msg: KernelInbound = { type: 'run', id, code, files: files.map((f) => ({ path: f.path, bytes: f.bytes })) };
    this.worker.postMessage(msg);
    let hard: NodeJS.Timeout | undefined;
    const soft = setTimeout(() => {
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
    await this.worker.terminate();
    await this.exited;
  }
}
