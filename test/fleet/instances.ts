import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, freshDatabaseUrl, serve } from '../process.js';

export const ADMIN = 'sk-admin-fleet-test-key-0000000000000000';

/** One running instance: its base URL and a fetch that answers JSON. */
export interface Instance {
  name: string;
  base: string;
  proc: ChildProcess;
  /** A request with the admin key (or `key`), JSON in and out. */
  call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>;
}

/**
 * Starts `count` real Standin processes (`node dist/main.js serve`) on one fresh PostgreSQL schema and,
 * when given, one Redis: the team deployment without its load balancer.
 */
export async function startInstances(
  kind: string,
  opts: { count?: number; redisUrl?: string; env?: (index: number) => Promise<Record<string, string>> | Record<string, string> } = {},
): Promise<{ instances: Instance[]; databaseUrl: string; close(): Promise<void> }> {
  const databaseUrl = await freshDatabaseUrl(kind);
  const instances: Instance[] = [];
  const dirs: string[] = [];
  const count = opts.count ?? 2;
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    const env: Record<string, string> = {
      STANDIN_DATABASE_URL: databaseUrl,
      STANDIN_ADMIN_KEY: ADMIN,
      STANDIN_PORT: String(port),
      STANDIN_LOG_LEVEL: 'error',
      STANDIN_DATA: dirs[dirs.push(mkdtempSync(join(tmpdir(), 'standin-fleet-'))) - 1],
      ...(opts.redisUrl ? { STANDIN_REDIS_URL: opts.redisUrl } : {}),
      ...(await opts.env?.(i)),
    };
    // One after the other: the first migrates and seeds, the next finds it done.
    const proc = await serve(env);
    const base = `http://127.0.0.1:${port}`;
    instances.push({
      name: String.fromCharCode(65 + i),
      base,
      proc,
      async call(method, path, body, key = ADMIN) {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON: kept as text */
        }
        return { status: res.status, body: parsed };
      },
    });
  }
  return {
    instances,
    databaseUrl,
    async close() {
      await Promise.all(
        instances.map(
          (i) =>
            new Promise<void>((resolve) => {
              // Already gone: exited, or killed by a signal (a test's kill -9 leaves exitCode null).
              if (i.proc.exitCode !== null || i.proc.signalCode !== null) return resolve();
              i.proc.once('exit', () => resolve());
              i.proc.kill('SIGTERM');
            }),
        ),
      );
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Calls `probe` until it returns true; resolves with the milliseconds it took, or throws after `limitMs`. */
export async function until(probe: () => Promise<boolean>, limitMs = 5_000): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - start;
    if (performance.now() - start > limitMs) throw new Error(`not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
