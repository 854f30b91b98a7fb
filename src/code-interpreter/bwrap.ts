import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { BWRAP_DRIVER } from './bwrap-driver.js';
import type { KernelLike, KernelLimits } from './kernel.js';
import { prelude } from './python.js';

/** In an OS sandbox ctypes is harmless (pandas needs it); only the package installer stays out. */
const BWRAP_PRELUDE = prelude(['micropip']);
import type { ExecuteResult, SandboxFile } from './types.js';

const PYTHON = '/usr/bin/python3';

/** Whether this machine can run the bwrap executor (bubblewrap that can make namespaces, Debian's python3). */
export function bwrapAvailable(): boolean {
  if (!existsSync(PYTHON)) return false;
  const r = spawnSync('bwrap', [...sandboxArgs(64 * 1024 * 1024), PYTHON, '-I', '-c', 'print(1)'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return r.status === 0 && r.stdout.trim() === '1';
}

/**
 * The sandbox: new namespaces of every kind (no network but a private loopback, own PIDs), no environment,
 * the host's /usr read-only and nothing else of it but /etc/alternatives, /etc/matplotlibrc and /etc/fonts (no /etc/passwd, no /home), /tmp and /mnt/data as size-bounded
 * tmpfs, and the process dies with Standin.
 */
function sandboxArgs(memoryBytes: number): string[] {
  const bytes = String(memoryBytes);
  return [
    '--unshare-all',
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
  ];
}

function bwrapArgs(limits: KernelLimits): string[] {
  const run = `${BWRAP_DRIVER}\n__standin_driver(${JSON.stringify(BWRAP_PRELUDE)})\n`;
  return [
    ...sandboxArgs(limits.memoryMb * 1024 * 1024),
    PYTHON,
    '-I',
    '-c',
    run,
    String(limits.memoryMb * 1024 * 1024),
    String(limits.outputLimitBytes),
  ];
}

interface DriverResult {
  type: 'result';
  status: ExecuteResult['status'] | 'interrupted';
  logs: string;
  truncated: boolean;
  files: { path: string; b64: string }[];
  images: string[];
}

/** One CPython in a bubblewrap sandbox: one session, kept between executions like a Pyodide kernel. */
export class BwrapKernel implements KernelLike {
  readonly ready: Promise<void>;
  readonly snapshot = Promise.resolve(undefined);
  dead = false;
  private readonly child: ChildProcessWithoutNullStreams;
  private pending?: (r: DriverResult | undefined) => void;
  private endReason = 'the kernel stopped';
  private stderr = '';
  private readonly exited: Promise<void>;

  constructor(private readonly limits: KernelLimits) {
    this.child = spawn('bwrap', bwrapArgs(limits), { stdio: ['pipe', 'pipe', 'pipe'], env: {} });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + String(d)).slice(-4000)));
    this.child.stdin.on('error', () => {}); // the process ended: its exit reports it
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    const lines = createInterface({ input: this.child.stdout });
    this.ready = new Promise<void>((resolve, reject) => {
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
    this.ready.catch(() => {});
  }

  async run(code: string, files: SandboxFile[], timeoutMs: number): Promise<ExecuteResult> {
    if (this.dead) throw new Error('the kernel has ended');
    const started = performance.now();
    const answer = new Promise<DriverResult | undefined>((resolve) => (this.pending = resolve));
    const req = { code, timeoutMs, files: files.map((f) => ({ path: f.path, b64: Buffer.from(f.bytes).toString('base64') })) };
    this.child.stdin.write(`${JSON.stringify(req)}\n`);
    // The driver interrupts Python itself at the limit (SIGALRM); this ends the process if that is not enough.
    const hard = setTimeout(() => void this.terminate('execution stopped: the time limit was reached'), timeoutMs + this.limits.graceMs);
    const m = await answer.finally(() => clearTimeout(hard));
    const durationMs = Math.round(performance.now() - started);
    if (!m) {
      const timeout = this.endReason.startsWith('execution stopped: the time');
      return {
        logs: `\n[${this.endReason}: the session was reset; variables and files in /mnt/data are gone]`,
        status: timeout ? 'timeout' : 'crashed',
        files: [],
        images: [],
        durationMs,
      };
    }
    let logs = m.logs;
    if (m.truncated) logs += `\n[output truncated: the logs are limited to ${this.limits.outputLimitBytes} bytes]`;
    if (m.status === 'timeout') logs += '\n[execution stopped: the time limit was reached]';
    if (m.status === 'memory') logs += `\n[execution stopped: the memory limit of ${this.limits.memoryMb} MB was reached]`;
    return {
      logs,
      status: m.status === 'interrupted' ? 'exception' : m.status,
      files: m.files.map((f) => ({ path: f.path, bytes: new Uint8Array(Buffer.from(f.b64, 'base64')) })),
      images: m.images.map((b) => new Uint8Array(Buffer.from(b, 'base64'))),
      durationMs,
    };
  }

  async terminate(reason = 'the session was closed'): Promise<void> {
    if (!this.dead) this.endReason = reason;
    this.dead = true;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
