/**
 * `standin/testing`: start a throwaway Standin from a test runner (vitest, jest, node:test) and drive its
 * control plane. Standin runs in a child process (`standin ephemeral`), so the runner's fake timers,
 * module registry and workers never touch it, and it stops when the runner goes away.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { fileURLToPath } from 'node:url';

/** How to start Standin; every field is optional. */
export interface StartOptions {
  /** A config file (YAML or JSON), applied on top of the demo data. */
  config?: string;
  /** `false`: no demo organization, project or ad account (and so no platform or ads key). Default true. */
  seed?: boolean;
  /**
   * A snapshot file (`standin export`, `standin exec --export-on-exit`, `snapshot()`): Standin starts from
   * its state instead of the demo data, and `reset()` goes back to it. The run's keys are added to its demo
   * project and ad account when it has them; the snapshot's own keys work too.
   */
  import?: string;
  /** A PostgreSQL URL: Standin keeps its state in a new schema of that database, dropped at `close()`. */
  databaseUrl?: string;
  /** The host's name (`openai` runs apps and clients written for that platform unchanged). */
  vendor?: string;
  /** More `standin` options, e.g. `['--log-level', 'info']`. */
  args?: string[];
  /** Extra environment variables of the Standin process (`STANDIN_REDIS_URL` …). */
  env?: Record<string, string>;
  /** Give up when Standin has not answered within this many milliseconds. Default 60000. */
  startTimeoutMs?: number;
}

/** The keys of the run: `platform` and `ads` belong to the demo project and ad account (absent with `seed: false`, or when an imported snapshot lacks them). */
export interface Keys {
  admin: string;
  platform?: string;
  ads?: string;
}

/** The control plane's clock. */
export interface Clock {
  object: 'clock';
  now: number;
  now_ms: number;
  offset_ms: number;
}

/** A fault to inject: the next `count` requests matching `path` answer with an error (docs/rate-limits.md). */
export interface FaultSpec {
  path: string;
  method?: '*' | 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  status?: 429 | 500 | 503;
  type?: string;
  code?: string | null;
  message?: string;
  count?: number;
  retry_after?: number;
  /** The chance (0 < p ≤ 1) that a matching request is taken; one not taken uses none of the count. */
  probability?: number;
  /** Makes the rolls of `probability` repeatable across runs. */
  seed?: number;
  /** Milliseconds a taken request waits first; with no `status` or `type` the fault only delays. */
  latency_ms?: number;
}

/** An injected fault as the control plane shows it. */
export interface Fault {
  id: string;
  object: 'admin.fault';
  path: string;
  method: string;
  /** Null for a fault that only delays. */
  status: number | null;
  type: string | null;
  code: string | null;
  message: string | null;
  remaining: number;
  retry_after: number | null;
  probability: number;
  seed: number | null;
  latency_ms: number;
  created_at: number;
}

/** What a snapshot holds (docs/snapshots.md). */
export interface SnapshotTotals {
  tables: number;
  rows: number;
  files: number;
  bytes: number;
}

/** A snapshot file written by `snapshot()`. */
export interface SnapshotFile {
  path: string;
  /** Its size on disk (gzip'd). */
  size: number;
}

/** What `restore()` loaded. */
export interface Restored extends SnapshotTotals {
  object: 'snapshot.restored';
  /** The migrations of the store the snapshot was taken of. */
  schema: string[];
  created_at: number;
  clock_offset_ms: number;
}

/** A running Standin. */
export interface Standin {
  /** The base URL, e.g. `http://127.0.0.1:41234` (the platform API is at `${url}/v1`). */
  url: string;
  keys: Keys;
  /** What `standin exec` gives a command: OPENAI_BASE_URL, OPENAI_API_KEY, STANDIN_URL, STANDIN_ADMIN_KEY, STANDIN_ADS_URL, STANDIN_ADS_KEY … */
  env: Record<string, string>;
  /** Moves Standin's clock forward: a duration (`'72h'`, `'1d2h'`) or seconds. */
  advanceClock(by: string | number): Promise<Clock>;
  /** Makes the next matching requests fail (a 429, 500 or 503 in the platform's envelope). */
  fault(spec: FaultSpec): Promise<Fault>;
  /** Removes every fault not used up yet. */
  clearFaults(): Promise<void>;
  /** Empties all state and restores the demo data, or the snapshot of `import` (and the config file); the keys keep working. */
  reset(opts?: { clock?: boolean }): Promise<void>;
  /** Writes the whole state (rows, files, clock) to a snapshot file, e.g. a fixture to start from with `import`. */
  snapshot(path: string): Promise<SnapshotFile>;
  /** Replaces the whole state with a snapshot file's; the run's keys keep working where the snapshot has the demo project. */
  restore(path: string): Promise<Restored>;
  /** Any other control plane call: `admin('GET', '/requests?limit=5')` sends to `/admin/v1/requests?limit=5`. */
  admin<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** Stops Standin and deletes its store. */
  close(): Promise<void>;
}

/** Starts a Standin on a free port with a fresh store and keys made for this run. */
export async function start(options: StartOptions = {}): Promise<Standin> {
  const main = join(packageDist(), 'main.js');
  if (!existsSync(main)) throw new Error(`standin/testing: ${main} is missing (in the Standin repository: npm run build)`);
  const child = spawn(process.execPath, [main, 'ephemeral', '--until-stdin-closes', ...flags(options)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  const ready = await readyLine(child, options.startTimeoutMs ?? 60_000);
  // A forgotten close() must not keep the runner alive: when the runner exits, the pipe closes and Standin stops.
  child.unref();
  for (const s of [child.stdin, child.stdout]) (s as unknown as { unref?: () => void } | null)?.unref?.();
  return handle(child, ready);
}

function flags(o: StartOptions): string[] {
  const out: string[] = [];
  if (o.config !== undefined) out.push('--config', o.config);
  if (o.seed === false) out.push('--no-seed');
  if (o.import !== undefined) out.push('--import', resolve(o.import));
  if (o.databaseUrl !== undefined) out.push('--database-url', o.databaseUrl);
  if (o.vendor !== undefined) out.push('--vendor', o.vendor);
  return [...out, ...(o.args ?? [])];
}

/** The folder of the built Standin: this file's own (dist/), in either module format. */
function packageDist(): string {
  return typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
}

interface Ready {
  url: string;
  keys: Keys;
  env: Record<string, string>;
}

/** Waits for the one JSON line `standin ephemeral` prints when it listens; its later output goes to stderr. */
function readyLine(child: ChildProcess, timeoutMs: number): Promise<Ready> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    let ready: Ready | undefined;
    const fail = (message: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`standin/testing: ${message}`));
    };
    const timer = setTimeout(() => fail(`Standin did not start within ${timeoutMs} ms`), timeoutMs);
    lines.on('line', (line) => {
      if (ready) return void process.stderr.write(line + '\n');
      const parsed = parseReady(line);
      if (!parsed) return void process.stderr.write(line + '\n');
      ready = parsed;
      clearTimeout(timer);
      resolve(parsed);
    });
    child.once('error', (err) => fail(err.message));
    child.once('exit', (code, signal) => {
      if (!ready) fail(`Standin exited before it was ready (${signal ?? `exit code ${code}`}); its error is above`);
    });
  });
}

function parseReady(line: string): Ready | undefined {
  if (!line.startsWith('{"url":')) return undefined;
  try {
    return JSON.parse(line) as Ready;
  } catch {
    return undefined;
  }
}

function handle(child: ChildProcess, ready: Ready): Standin {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const call = (method: string, path: string, init: RequestInit = {}) =>
    fetch(`${ready.url}/admin/v1${path}`, {
      ...init,
      method,
      headers: { authorization: `Bearer ${ready.keys.admin}`, ...(init.headers as Record<string, string> | undefined) },
    });
  const parsed = async <T>(method: string, path: string, res: Response): Promise<T> => {
    const text = await res.text();
    const json = text ? (JSON.parse(text) as unknown) : undefined;
    if (!res.ok) throw failed(method, path, res.status, json, text);
    return json as T;
  };
  const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const json = body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
    return parsed<T>(method, path, await call(method, path, json));
  };
  const snapshot = async (path: string): Promise<SnapshotFile> => {
    const res = await call('GET', '/snapshot');
    if (!res.ok || !res.body) return parsed<never>('GET', '/snapshot', res);
    // Beside the file first, then renamed: an interrupted download never leaves half a snapshot at `path`.
    const part = `${path}.part`;
    let size = 0;
    try {
      await pipeline(
        Readable.fromWeb(res.body as WebReadableStream<Uint8Array>).on('data', (c: Buffer) => (size += c.length)),
        createWriteStream(part),
      );
      await rename(part, path);
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
    return { path, size };
  };
  const restore = async (path: string): Promise<Restored> => {
    if (!existsSync(path)) throw new Error(`standin/testing: restore: no such file ${path}`);
    // Streamed, as the control plane reads it: a large snapshot is never held in memory.
    const init = {
      headers: { 'content-type': 'application/gzip' },
      body: Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>,
      duplex: 'half',
    } as RequestInit;
    return parsed<Restored>('POST', '/snapshot', await call('POST', '/snapshot', init));
  };
  let closing: Promise<void> | undefined;
  return {
    ...ready,
    admin,
    advanceClock: (by) => admin<Clock>('POST', '/clock/advance', typeof by === 'number' ? { seconds: by } : { duration: by }),
    fault: (spec) => admin<Fault>('POST', '/faults', spec),
    clearFaults: async () => void (await admin('DELETE', '/faults')),
    reset: async (opts = {}) => void (await admin('POST', '/reset', opts)),
    snapshot,
    restore,
    close() {
      closing ??= (async () => {
        // Held again (start() let go of it), or a runner with nothing else pending could exit before Standin has.
        child.ref();
        // Standin stops when its stdin closes; a kill is the last resort if it hangs.
        child.stdin?.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      })();
      return closing;
    },
  };
}

/** A control plane refusal as the error a test sees: the call, the status and the platform's message. */
function failed(method: string, path: string, status: number, json: unknown, text: string): Error {
  const message = (json as { error?: { message?: string } } | undefined)?.error?.message ?? text;
  return new Error(`standin/testing: ${method} /admin/v1${path} answered ${status}: ${message}`);
}
