import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { BWRAP_DRIVER } from './bwrap-driver.js';
import { sandboxUsage } from './bwrap-watch.js';
import type { KernelLike, KernelLimits } from './kernel.js';
import { withNotes } from './notes.js';
import { prelude } from './python.js';
import type { ExecuteResult, SandboxFile } from './types.js';

/** In an OS sandbox ctypes is harmless (pandas needs it) and a cell manages its own processes; only the package installer stays out. */
const BWRAP_PRELUDE = prelude(['micropip'], false);

const PYTHON = '/usr/bin/python3';
/** How often Standin reads a running sandbox's memory and file count. */
const WATCH_MS = 200;

/**
 * Who bwrap runs as. RLIMIT_NPROC is not enforced for the host's root, whatever uid the sandbox shows, so
 * a root Standin starts bwrap as nobody: the sandbox's processes then count against its own limit (the
 * count is per user namespace, so sessions do not share it).
 */
function runAs(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
}

/** Runs `code` with python3 in an empty sandbox: its stdout, or undefined when the sandbox does not start. */
function probe(code: string): string | undefined {
  if (!existsSync(PYTHON)) return undefined;
  const r = spawnSync('bwrap', [...sandboxArgs(64 * 1024 * 1024), PYTHON, '-I', '-c', code], {
    encoding: 'utf8',
    timeout: 10_000,
    cwd: '/',
    ...runAs(),
  });
  return r.status === 0 ? r.stdout : undefined;
}

/** probe() in a child process the event loop does not wait for. */
function probeAsync(code: string): Promise<string | undefined> {
  if (!existsSync(PYTHON)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const child = spawn('bwrap', [...sandboxArgs(64 * 1024 * 1024), PYTHON, '-I', '-c', code], {
      timeout: 10_000,
      cwd: '/',
      stdio: ['ignore', 'pipe', 'ignore'],
      ...runAs(),
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? out : undefined));
  });
}

/** Whether this machine can run the bwrap executor (bubblewrap that can make namespaces, Debian's python3). */
export function bwrapAvailable(): boolean {
  return probe('print(1)')?.trim() === '1';
}

/** The data packages `executor: auto` looks for. */
export const SCIENCE = ['numpy', 'pandas', 'matplotlib'] as const;

/**
 * Which of SCIENCE the sandbox's python3 has (found, not imported: a few milliseconds), or undefined when
 * the bwrap executor cannot run here.
 */
export function bwrapPackages(): string[] | undefined {
  return packagesOf(probe(FIND_SCIENCE));
}

/** bwrapPackages() without blocking the event loop. */
export async function bwrapPackagesAsync(): Promise<string[] | undefined> {
  return packagesOf(await probeAsync(FIND_SCIENCE));
}

const FIND_SCIENCE = `import importlib.util as u\nprint(' '.join(m for m in ${JSON.stringify(SCIENCE)} if u.find_spec(m)) + ' .')`;
const packagesOf = (out: string | undefined) => out?.trim().split(' ').slice(0, -1);

/**
 * The sandbox: new namespaces of every kind (no network but a private loopback, own PIDs), no environment,
 * the host's /usr read-only and nothing else of it but /etc/alternatives, /etc/matplotlibrc and /etc/fonts (no /etc/passwd, no /home), /tmp and /mnt/data as size-bounded
 * tmpfs, and the process dies with Standin.
 */
function sandboxArgs(memoryBytes: number): string[] {
  const bytes = String(memoryBytes);
  return [
    '--unshare-all',
    '--unshare-user',
    // No user namespace inside: one would let a cell mount a tmpfs of its own, outside every size bound.
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--ro-bind',
    '/usr',
    '/usr',
    // Debian's alternatives (libblas, liblapack for numpy) are symlinks through /etc/alternatives.
    '--ro-bind-try',
    '/etc/alternatives',
    '/etc/alternatives',
    // Debian keeps matplotlib's rc file and fontconfig's settings in /etc.
    '--ro-bind-try',
    '/etc/matplotlibrc',
    '/etc/matplotlibrc',
    '--ro-bind-try',
    '/etc/fonts',
    '/etc/fonts',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--symlink',
    'usr/bin',
    '/bin',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    bytes,
    '--tmpfs',
    '/tmp',
    '--size',
    bytes,
    '--tmpfs',
    '/mnt/data',
    '--chdir',
    '/mnt/data',
    '--setenv',
    'HOME',
    '/mnt/data',
    '--setenv',
    'LANG',
    'C.UTF-8',
    '--setenv',
    'MPLBACKEND',
    'Agg',
    '--setenv',
    'MPLCONFIGDIR',
    '/tmp',
    '--setenv',
    'OPENBLAS_NUM_THREADS',
    '1',
    // glibc gives each thread a malloc arena of 64 MiB address space: under RLIMIT_AS a few threads would use it up.
    '--setenv',
    'MALLOC_ARENA_MAX',
    '2',
  ];
}

function bwrapArgs(limits: KernelLimits): string[] {
  const run = `${BWRAP_DRIVER}\n__standin_driver(${JSON.stringify(BWRAP_PRELUDE)})\n`;
  return [
    // The sandbox's init PID on the host, for the watch (bwrap-watch.ts).
    '--info-fd',
    '3',
    ...sandboxArgs(limits.memoryMb * 1024 * 1024),
    PYTHON,
    '-I',
    '-c',
    run,
    String(limits.memoryMb * 1024 * 1024),
    String(limits.outputLimitBytes),
    String(limits.maxProcesses),
    String(limits.outputFilesLimitBytes),
  ];
}

interface DriverResult {
  type: 'result';
  status: ExecuteResult['status'] | 'interrupted';
  logs: string;
  truncated: boolean;
  omitted: { path: string; size: number }[];
  files: { path: string; b64: string }[];
  images: string[];
}

const lost = (why: string) => `\n[${why}: the session was reset; variables and files in /mnt/data are gone]`;

/** Why Standin ended a sandbox mid-execution, and the status the execution gets. */
const ENDS = {
  timeout: { status: 'timeout', why: () => 'execution stopped: the time limit was reached' },
  memory: { status: 'memory', why: (l: KernelLimits) => `execution stopped: the memory limit of ${l.memoryMb} MB was reached` },
  files: {
    status: 'exception',
    why: (l: KernelLimits) => `execution stopped: a session holds at most ${l.maxFiles} files and folders in /mnt/data and /tmp`,
  },
} as const;

/** One CPython in a bubblewrap sandbox: one session, kept between executions like a Pyodide kernel. */
export class BwrapKernel implements KernelLike {
  readonly ready: Promise<void>;
  readonly snapshot = Promise.resolve(undefined);
  dead = false;
  private readonly child: ChildProcess;
  private readonly stdin: Writable;
  private pending?: (r: DriverResult | undefined) => void;
  private endReason = 'the kernel stopped';
  private ended?: keyof typeof ENDS;
  private stderr = '';
  private readonly exited: Promise<void>;
  /** The sandbox's init on the host (from bwrap's --info-fd). */
  private readonly init: Promise<number | undefined>;

  constructor(private readonly limits: KernelLimits) {
    this.child = spawn('bwrap', bwrapArgs(limits), { stdio: ['pipe', 'pipe', 'pipe', 'pipe'], env: {}, cwd: '/', ...runAs() });
    const [stdin, stdout, stderr, info] = this.child.stdio as unknown as [Writable, Readable, Readable, Readable];
    this.stdin = stdin;
    stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + String(d)).slice(-4000)));
    stdin.on('error', () => {}); // the process ended: its exit reports it
    this.init = new Promise((resolve) => {
      let text = '';
      info.on('data', (d: Buffer) => {
        text += String(d);
        const m = /"child-pid":\s*(\d+)/.exec(text);
        if (m) resolve(Number(m[1]));
      });
      info.on('close', () => resolve(undefined));
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    const lines = createInterface({ input: stdout });
    const started = new Promise<void>((resolve, reject) => {
      lines.on('line', (line) => {
        let m: { type: string };
        try {
          m = JSON.parse(line) as { type: string };
        } catch {
          return;
        }
        if (m.type === 'ready') resolve();
        else if (m.type === 'result') {
          const p = this.pending;
          this.pending = undefined;
          p?.(m as DriverResult);
        }
      });
      this.child.once('error', (err) => reject(new Error(`bwrap did not start: ${err.message}`)));
      this.child.once('exit', (code) => {
        this.dead = true;
        reject(new Error(`the sandboxed Python did not start (exit ${code}): ${this.stderr.trim()}`));
        const p = this.pending;
        this.pending = undefined;
        p?.(undefined);
      });
    });
    // The memory of several processes and the file count hold only if Standin can read the sandbox.
    this.ready = started.then(async () => {
      const init = await this.init;
      try {
        if (!init) throw new Error('bwrap did not say its PID');
        await sandboxUsage(init);
      } catch (err) {
        await this.terminate('the sandbox cannot be watched');
        throw new Error(`Standin cannot read the sandbox from /proc, so its limits would not hold: ${(err as Error).message}`);
      }
    });
    this.ready.catch(() => {});
  }

  /** Ends the sandbox if it holds more than its limits allow; true if it did. */
  private async overLimits(): Promise<boolean> {
    const init = await this.init;
    if (!init || this.dead) return false;
    let usage;
    try {
      usage = await sandboxUsage(init);
    } catch {
      return false; // it is ending: its exit reports it
    }
    const over =
      usage.files > this.limits.maxFiles ? 'files' : usage.memoryBytes > this.limits.memoryMb * 1024 * 1024 ? 'memory' : undefined;
    if (!over) return false;
    this.ended = over;
    await this.terminate(ENDS[over].why(this.limits));
    return true;
  }

  async run(code: string, files: SandboxFile[], timeoutMs: number): Promise<ExecuteResult> {
    if (this.dead) throw new Error('the kernel has ended');
    const started = performance.now();
    this.ended = undefined;
    const answer = new Promise<DriverResult | undefined>((resolve) => (this.pending = resolve));
    const req = { code, timeoutMs, files: files.map((f) => ({ path: f.path, b64: Buffer.from(f.bytes).toString('base64') })) };
    this.stdin.write(`${JSON.stringify(req)}\n`);
    // The driver interrupts Python itself at the limit (SIGALRM); this ends the process if that is not enough.
    const hard = setTimeout(() => {
      this.ended = 'timeout';
      void this.terminate(ENDS.timeout.why());
    }, timeoutMs + this.limits.graceMs);
    // Memory across all the cell's processes, and the file count, are read from the host as the cell runs.
    let watching = false;
    const watch = setInterval(() => {
      if (watching) return;
      watching = true;
      void this.overLimits().finally(() => (watching = false));
    }, WATCH_MS);
    let m = await answer.finally(() => {
      clearTimeout(hard);
      clearInterval(watch);
    });
    // Once more after the cell: it may have gone past a limit between two readings.
    if (m && (await this.overLimits())) m = undefined;
    const durationMs = Math.round(performance.now() - started);
    if (!m) {
      const ended = this.ended as keyof typeof ENDS | undefined; // set by the watch or the hard limit meanwhile
      return {
        logs: lost(this.endReason),
        status: ended ? ENDS[ended].status : 'crashed',
        files: [],
        images: [],
        durationMs,
      };
    }
    const status = m.status === 'interrupted' ? 'exception' : m.status;
    return {
      logs: withNotes(m.logs, { status, truncated: m.truncated, filesRefused: false, omitted: m.omitted }, this.limits),
      status,
      files: m.files.map((f) => ({ path: f.path, bytes: new Uint8Array(Buffer.from(f.b64, 'base64')) })),
      images: m.images.map((b) => new Uint8Array(Buffer.from(b, 'base64'))),
      durationMs,
    };
  }

  async terminate(reason = 'the session was closed'): Promise<void> {
    if (!this.dead) this.endReason = reason;
    this.dead = true;
    // bwrap's init dies with it (--die-with-parent), and the kernel then kills every process of its PID namespace.
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
