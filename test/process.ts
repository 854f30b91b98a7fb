import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import pg from 'pg';
import { testSchemaName } from './helpers.js';

/** The repository root, where `dist/main.js` is built. */
export const root = join(import.meta.dirname, '..');

/** A free TCP port on loopback. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

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
