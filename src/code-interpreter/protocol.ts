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
  /** Files and folders the session may hold (its MEMFS nodes). */
  maxFiles: number;
  /** Bytes of changed files one execution returns. */
  outputFilesLimitBytes: number;
  /**
   * Two Int32 slots shared with the pool: [0] is Pyodide's interrupt buffer (2 = SIGINT raises
   * KeyboardInterrupt), [1] says who asked (INTERRUPT_TIMEOUT from the pool, INTERRUPT_OUTPUT from the output cap).
   */
  interrupt: SharedArrayBuffer;
  interruptTimeout: number;
  interruptOutput: number;
  /** Load in full and post the memory snapshot (the first kernel of a pool). */
  makeSnapshot: boolean;
  /** Start from this snapshot instead of loading in full. */
  snapshot?: Uint8Array;
  /** Top-level modules the lock file's packages provide: an import of one asks the pool for its package. */
  importable: string[];
}

/** A verified wheel of the distribution, to install before the code runs. */
export interface WorkerPackage {
  name: string;
  fileName: string;
  /** The lock file's `install_dir` ('site' or 'dynlib'). */
  installDir: string;
  bytes: Uint8Array;
  /** SHA-256 of the WebAssembly binaries inside it (wheel.ts): the kernel compiles no other wasm after its start. */
  wasm: string[];
}

export const INTERRUPT_TIMEOUT = 1;
export const INTERRUPT_OUTPUT = 2;

export type KernelInbound =
  | { type: 'run'; id: number; code: string; files: WorkerFile[] }
  /** The answer to `imports`: the wheels to install, or why they could not be had (the code does not run then). */
  | { type: 'packages'; id: number; packages: WorkerPackage[]; error?: string };

export type RunStatus = 'ok' | 'exception' | 'timeout' | 'memory' | 'crashed';

export type KernelOutbound =
  | { type: 'snapshot'; bytes: Uint8Array }
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  /** The code imports these modules of the distribution, not installed yet: the kernel waits for `packages`. */
  | { type: 'imports'; id: number; names: string[] }
  | {
      type: 'result';
      id: number;
      status: RunStatus;
      logs: string;
      /** The output cap cut the logs. */
      truncated: boolean;
      /** A create was refused past maxFiles. */
      filesRefused: boolean;
      /** Changed files not returned (past outputFilesLimitBytes). */
      omitted: { path: string; size: number }[];
      files: WorkerFile[];
      images: Uint8Array[];
      durationMs: number;
    };
