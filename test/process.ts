import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import pg from 'pg';
import { testSchemaName } from './helpers.js';

/** The repository root, where `dist/main.js` is built. */
export const root = join(import.meta.dirname, '..');

/** Whether `port` (0: the system's choice) can be listened on at 127.0.0.1 now; which port that was. */
const listenable = (port: number) =>
  new Promise<number | undefined>((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

/** The first of the ports the system hands out by itself (a client's socket, a listen on port 0). */
const EPHEMERAL_FROM = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
})();
/** Ports a test worker takes its ports from: each worker (VITEST_POOL_ID, 1 to maxWorkers) a slice of its own. */
const SLICE = 500;
const sliceStart = 10_000 + SLICE * (Number(process.env.VITEST_POOL_ID ?? 0) % Math.floor((EPHEMERAL_FROM - 10_000) / SLICE));
let nextInSlice = 0;

/**
 * A free TCP port on loopback, for a process a test starts later. Not the system's choice of a free port:
 * that comes from the range every client socket of the machine takes its port from, and one of the many
 * connections of the files running alongside could take it before the process listens (nginx failed so:
 * "bind() to 127.0.0.1:45907 failed (98: Address already in use)"). The ports come from below that range,
 * in turn from this worker's slice, so no client socket and no other worker is handed the same one.
 */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < SLICE; tried++) {
    const port = await listenable(sliceStart + (nextInSlice++ % SLICE));
    if (port !== undefined) return port;
  }
  return (await listenable(0))!;
}

/** Builds dist/ when missing (`npm test` builds first; rebuilding while other files run it would race). */
export function ensureBuilt(): void {
  if (!existsSync(join(root, 'dist/main.js'))) execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
}

/** Bundles a test's child-process entry (`test/…/crash-child.ts`) into one ESM file for node; packages stay in node_modules. */
export async function bundleChild(entry: string): Promise<string> {
  const outfile = join(root, 'node_modules/.cache/standin-test', basename(entry).replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return outfile;
}

/** Calls a Standin process over HTTP with `key` (or `init.key`): JSON bodies as JSON, a FormData as multipart; the reply parsed. */
export function caller(base: () => string, key: string) {
  return async (path: string, init: { method?: string; body?: unknown; key?: string } = {}) => {
    const res = await fetch(`${base()}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${init.key ?? key}`,
        ...(init.body !== undefined && !(init.body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body instanceof FormData ? init.body : init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}

/** A fresh PostgreSQL schema of the test database, as a STANDIN_DATABASE_URL. */
export async function freshDatabaseUrl(kind: string): Promise<string> {
  const schema = testSchemaName(kind);
  const c = new pg.Client({ connectionString: process.env.STANDIN_TEST_DATABASE_URL });
  await c.connect();
  await c.query(`CREATE SCHEMA ${schema}`);
  await c.end();
  const u = new URL(process.env.STANDIN_TEST_DATABASE_URL!);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** Starts `node dist/main.js serve` as a real process and resolves once it listens. */
export function serve(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['dist/main.js', 'serve'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`Standin did not start:\n${out}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Standin is listening on')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.on('data', (d) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`Standin exited with ${code}:\n${out}`)));
  });
}
