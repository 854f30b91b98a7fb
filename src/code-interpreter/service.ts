import { posix } from 'node:path';
import { BwrapKernel, bwrapAvailable, bwrapPackages, bwrapPackagesAsync, SCIENCE } from './bwrap.js';
import { DEFAULTS, type CodeInterpreterConfig, type ExecutorView } from './config.js';
import { checkPackageSource, PackageStore, pyodideVersion } from './packages.js';
import { KernelPool, type PoolStats, type SnapshotHolder } from './pool.js';
import { BLOCKED } from './python.js';
import type { CodeInterpreter, ExecuteRequest, ExecuteResult } from './types.js';

export type { CodeInterpreter, ExecuteRequest, ExecuteResult, SandboxFile } from './types.js';

/** The executor other areas call (`ctx.services.codeInterpreter`), plus what the module needs to run it. */
export interface CodeInterpreterRuntime extends CodeInterpreter {
  /** Applies the config file's section; sessions already open keep running on the pool they started on. */
  configure(value: CodeInterpreterConfig): Promise<void>;
  /** Starts the warm kernels now (in the background). */
  warm(): void;
  /** Finds the executor (`auto`'s sandbox probe) in a child process without blocking the event loop; once per process. */
  prepare(): Promise<void>;
  /** Standin listens: warm the pool in the background if the config says `warm_on_start`. */
  started(): void;
  stats(): PoolStats;
  /** Which executor runs code and which packages it offers (the admin route and the start banner). */
  describe(): ExecutorView;
  close(): Promise<void>;
}

/** Options of the process rather than of the config file. */
export interface RuntimeOptions {
  /** Where verified Pyodide packages are cached (the data folder's); in memory only without it. */
  cacheDir?: string;
}

let probed: { packages?: string[] } | undefined;
let probing: Promise<void> | undefined;
/** The SCIENCE packages of the bwrap sandbox's python3 (undefined: no sandbox here). Probed once per process. */
function science(): string[] | undefined {
  probed ??= { packages: bwrapPackages() };
  return probed.packages;
}
/** science() probed asynchronously: starting a sandbox took a tenth of a second of a start, spent waiting. */
function probeScience(): Promise<void> {
  return (probing ??= probed ? Promise.resolve() : bwrapPackagesAsync().then((packages) => void (probed ??= { packages })));
}

/** `executor: auto`: bwrap where its sandbox starts and its python3 has every SCIENCE package. */
function autoExecutor(): 'bwrap' | 'pyodide' {
  const found = science();
  return found && SCIENCE.every((p) => found.includes(p)) ? 'bwrap' : 'pyodide';
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

/** Builds the executor (`auto`: bwrap where it has the packages, else Pyodide). Nothing loads until the first execution or `warm()`. */
export function createCodeInterpreter(
  now: () => number,
  log: { warn(obj: unknown, msg?: string): void },
  config: CodeInterpreterConfig = {},
  options: RuntimeOptions = {},
): CodeInterpreterRuntime {
  const snapshots: SnapshotHolder = {};
  let store: PackageStore | undefined;
  const build = (c: CodeInterpreterConfig) => {
    const v = { ...DEFAULTS, ...c };
    if (v.packages !== undefined) checkPackageSource(v.packages);
    const chosen = v.executor === 'auto' ? autoExecutor() : v.executor;
    const packages =
      chosen === 'pyodide'
        ? new PackageStore({ source: v.packages, lockFile: v.package_lock, cacheDir: options.cacheDir, blocked: BLOCKED })
        : undefined;
    // Only once nothing can throw: a refused section leaves the running executor as it was.
    store = packages;
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
        kernel: chosen === 'bwrap' ? (limits) => new BwrapKernel(limits) : undefined,
        packages,
      },
      now,
      log,
      snapshots,
    );
  };
  let current = { ...DEFAULTS, ...config };
  // Built on first use (an execution, `describe`, a warm start): `auto` probes the sandbox to choose.
  let built: KernelPool | undefined;
  const active = () => (built ??= build(current));
  const retired: KernelPool[] = [];
  let listening = false;
  return {
    async execute(req: ExecuteRequest): Promise<ExecuteResult> {
      checkFiles(req);
      await probeScience();
      return active().execute(req);
    },
    async closeSession(session: string) {
      await Promise.all([...(built ? [built] : []), ...retired].map((p) => p.closeSession(session)));
    },
    async configure(value) {
      const next = { ...DEFAULTS, ...value };
      if (JSON.stringify(next) === JSON.stringify(current)) return;
      if (next.executor === 'bwrap' && !bwrapAvailable())
        throw new Error(
          "executor 'bwrap' needs bubblewrap able to create namespaces (as the user nobody when Standin runs as root) and /usr/bin/python3 on this machine",
        );
      // The old pool's sessions end: their limits were the old ones. Close it in the background.
      const old = built;
      built = build(next);
      current = next;
      if (old) {
        retired.push(old);
        void old.close().then(() => retired.splice(retired.indexOf(old), 1));
      }
      if (listening && next.warm_on_start) built.warm();
    },
    warm: () => active().warm(),
    prepare: probeScience,
    started() {
      listening = true;
      if (current.warm_on_start) active().warm();
    },
    stats: () => built?.stats() ?? { sessions: 0, spares: 0 },
    describe(): ExecutorView {
      active();
      if (!store) {
        const packages = science() ?? [];
        const description = `bwrap (python3 in bubblewrap) with ${packages.join(', ') || 'the standard library only'}`;
        return { executor: 'bwrap', description, packages, package_source: null };
      }
      const packages = store.names();
      const known = SCIENCE.filter((p) => packages.includes(p));
      const description = `pyodide ${pyodideVersion()}, ${packages.length} packages of its distribution${known.length ? ` (${known.join(', ')} …)` : ''} loaded on first import from ${store.source}`;
      return { executor: 'pyodide', description, packages, package_source: store.source };
    },
    async close() {
      await Promise.all([...(built ? [built] : []), ...retired].map((p) => p.close()));
    },
  };
}
