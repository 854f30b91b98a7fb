import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../fleet/instances.js';
import { ensureBuilt, freePort, freshDatabaseUrl, serve } from '../process.js';

const ADMIN = 'sk-admin-connloss-test-key-00000000000000';

/**
 * PostgreSQL ends every connection of a running instance (what a restart, a failover or an operator's
 * pg_terminate_backend does). The process lives on, answers again, and listens again on each channel it
 * follows: jobs, run streams and the change signal.
 */
describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('losing every PostgreSQL connection (real process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'standin-connloss-'));
  const name = `standin_connloss_${process.pid}`;
  let child: ChildProcess;
  let base: string;
  let admin: pg.Client;
  let schema: string;

  beforeAll(async () => {
    ensureBuilt();
    // Its own application_name, so the test ends this process's connections and no one else's.
    const url = new URL(await freshDatabaseUrl('connloss'));
    url.searchParams.set('application_name', name);
    schema = /search_path=(\S+)/.exec(url.searchParams.get('options') ?? '')?.[1] ?? 'public';
    const port = await freePort();
    child = await serve({
      STANDIN_DATA: dir,
      STANDIN_ADMIN_KEY: ADMIN,
      STANDIN_LOG_LEVEL: 'error',
      STANDIN_DATABASE_URL: url.toString(),
      STANDIN_PORT: String(port),
    });
    base = `http://127.0.0.1:${port}`;
    admin = new pg.Client({ connectionString: process.env.STANDIN_TEST_DATABASE_URL });
    await admin.connect();
  }, 120_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    await admin?.end();
    rmSync(dir, { recursive: true, force: true });
  });

  const listening = async () => {
    const { rows } = await admin.query<{ query: string }>(
      `select query from pg_stat_activity where application_name = $1 and query like 'LISTEN %' order by query`,
      [name],
    );
    return rows.map((r) => r.query);
  };
  // The channels of its schema (store/listen.ts: a deployment on a schema other than public has its own).
  const channels = () =>
    ['standin_changes', 'standin_jobs', 'standin_responses', 'standin_runs'].map(
      (c) => `LISTEN "${c}_${createHash('md5').update(schema).digest('hex').slice(0, 12)}"`,
    );
  const answers = async () => {
    const res = await fetch(`${base}/admin/v1/clock`, { headers: { authorization: `Bearer ${ADMIN}` } }).catch(() => undefined);
    return res?.status === 200;
  };

  it('lives on, answers again and listens again on every channel', async () => {
    await until(async () => (await listening()).length === channels().length, 10_000);
    expect(await listening()).toEqual(channels());

    const { rowCount } = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [name]);
    expect(rowCount).toBeGreaterThanOrEqual(channels().length);

    // Idle pooled connections, the pipelined one and the listeners all ended at once.
    await new Promise((r) => setTimeout(r, 500));
    expect(child.exitCode).toBeNull();
    await until(answers, 10_000);
    await until(async () => (await listening()).length === channels().length, 10_000);
    expect(await listening()).toEqual(channels());
    expect(child.exitCode).toBeNull();
  }, 60_000);
});
