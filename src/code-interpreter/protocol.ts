/** Messages between a kernel's worker thread and the pool (structured clone; bytes are transferred). */

export interface WorkerFile {
  path: string;
  bytes: Uint8Array;
}

/** What the worker gets at start. */
export interface KernelWorkerData {
  /** The pyodide package's folder, ending in '/': the interpreter loads from node_modules, never a CDN. */
  indexURL: string;
  /** The Python run before user code (python.ts). */
  prelude: string;
  memoryLimitBytes: number;
  outputLimitBytes: number;
  /**
   * Two Int32 slots shared with the pool: [0] is Pyodide's interrupt buffer (2 = SIGINT raises
   * KeyboardInterrupt), [1] says who asked (INTERRUPT_TIMEOUT from the pool, INTERRUPT_OUTPUT from the output cap).
   */
  interrupt: SharedArrayBuffer;
  interruptTimeout: number;
  interruptOutput: number;
}

export const INTERRUPT_TIMEOUT = 1;
export const INTERRUPT_OUTPUT = 2;

export type KernelInbound = { type: 'run'; id: number; code: string; files: WorkerFile[] };

export type RunStatus = 'ok' | 'exception' | 'timeout' | 'memory' | 'crashed';

export type KernelOutbound =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | {
      type: 'result';
      id: number;
      status: RunStatus;
      logs: string;
      /** The output cap cut the logs. */
      truncated: boolean;
      files: WorkerFile[];
      images: Uint8Array[];
      durationMs: number;
    };
