import { posix } from 'node:path';
import { BwrapKernel, bwrapAvailable } from './bwrap.js';
import { DEFAULTS, type CodeInterpreterConfig } from './config.js';
import { KernelPool, type PoolStats, type SnapshotHolder } from './pool.js';
import type { CodeInterpreter, ExecuteRequest, ExecuteResult } from './types.js';

export type { CodeInterpreter, ExecuteRequest, ExecuteResult, SandboxFile } from './types.js';

/** The executor other areas call (`ctx.services.codeInterpreter`), plus what the module needs to run it. */
export interface CodeInterpreterRuntime extends CodeInterpreter {
  /** Applies the config file's section; sessions already open keep running on the pool they started on. */
  configure(value: CodeInterpreterConfig): Promise<void>;
  /** Starts the warm kernels now (in the background). */
  warm(): void;
  /** Standin listens: warm the pool in the background if the config says `warm_on_start`. */
  started(): void;
  stats(): PoolStats;
  close(): Promise<void>;
}

/** Files go under /mnt/data only: a path that leaves it (`..`) is a caller's bug, refused before any run. */
function checkFiles(req: ExecuteRequest): void {
  for (const f of req.files ?? []) {
    const path = posix.normalize(f.path);
    if (path !== f.path || !path.startsWith('/mnt/data/') || path.length <= '/mnt/data/'.length)
      throw new Error(`code interpreter files must be under /mnt/data/, got '${f.path}'`);
  }
  if (req.timeoutMs !== undefined && !(Number.isInteger(req.timeoutMs) && req.timeoutMs > 0))
    throw new Error(`timeoutMs must be a positive whole number, got ${req.timeoutMs}`);
}

/** Builds the embedded (Pyodide) executor. Nothing loads until the first execution or `warm()`. */
export function createCodeInterpreter(
  now: () => number,
  log: { warn(obj: unknown, msg?: string): void },
  config: CodeInterpreterConfig = {},
): CodeInterpreterRuntime {
  const snapshots: SnapshotHolder = {};
  const build = (c: CodeInterpreterConfig) => {
    const v = { ...DEFAULTS, ...c };
    return new KernelPool(
      {
        poolSize: v.pool_size,
        maxSessions: v.max_sessions,
        idleMs: v.session_idle_seconds * 1000,
        timeoutMs: v.timeout_ms,
        memoryMb: v.memory_mb,
        heapMb: 256,
        outputLimitBytes: v.output_limit_bytes,
        maxFiles: v.max_files,
        outputFilesLimitBytes: v.output_files_limit_bytes,
        maxProcesses: v.max_processes,
        graceMs: 2000,
        kernel: v.executor === 'bwrap' ? (limits) => new BwrapKernel(limits) : undefined,
      },
      now,
      log,
      snapshots,
    );
  };
  let current = { ...DEFAULTS, ...config };
  let pool = build(current);
  const retired: KernelPool[] = [];
  let listening = false;
  return {
    async execute(req: ExecuteRequest): Promise<ExecuteResult> {
      checkFiles(req);
      return pool.execute(req);
    },
    async closeSession(session: string) {
      await Promise.all([pool, ...retired].map((p) => p.closeSession(session)));
    },
    async configure(value) {
      const next = { ...DEFAULTS, ...value };
      if (JSON.stringify(next) === JSON.stringify(current)) return;
      if (next.executor === 'bwrap' && !bwrapAvailable())
        throw new Error(
          "executor 'bwrap' needs bubblewrap able to create namespaces (as the user nobody when Standin runs as root) and /usr/bin/python3 on this machine",
        );
      current = next;
      // The old pool's sessions end: their limits were the old ones. Close it in the background.
      const old = pool;
      pool = build(next);
      retired.push(old);
      void old.close().then(() => retired.splice(retired.indexOf(old), 1));
      if (listening && next.warm_on_start) pool.warm();
    },
    warm: () => pool.warm(),
    started() {
      listening = true;
      if (current.warm_on_start) pool.warm();
    },
    stats: () => pool.stats(),
    async close() {
      await Promise.all([pool, ...retired].map((p) => p.close()));
    },
  };
}
