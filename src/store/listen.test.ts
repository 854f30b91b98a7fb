import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../test/fleet/instances.js';
import { keepListening, type Listening } from './listen.js';

const URL = process.env.STANDIN_TEST_DATABASE_URL;

describe.runIf(URL)('keepListening (PostgreSQL)', () => {
  const channel = `standin_listen_test_${process.pid}`;
  let pool: pg.Pool;
  let admin: pg.Client;
  let listening: Listening | undefined;

  afterEach(async () => {
    listening?.stop();
    await pool?.end();
    await admin?.end();
  });

  it('listens again after the server ends its connection, logging the outage once', async () => {
    pool = new pg.Pool({ connectionString: URL, max: 2 });
    pool.on('error', () => {});
    const pids: number[] = [];
    pool.on('acquire', (c: pg.PoolClient & { processID?: number }) => pids.push(c.processID!));
    admin = new pg.Client({ connectionString: URL });
    await admin.connect();

    const got: string[] = [];
    const warnings: string[] = [];
    let listens = 0;
    listening = keepListening(pool, channel, (p) => got.push(p), {
      log: { warn: (_o, msg) => warnings.push(msg) },
      onListen: () => listens++,
      retryMs: 50,
    });
    await listening.ready;
    expect(listens).toBe(1);
    await admin.query(`select pg_notify($1, 'one')`, [channel]);
    await until(async () => got.includes('one'));

    await admin.query('select pg_terminate_backend($1)', [pids[0]]);
    await until(async () => listens === 2);
    expect(pids).toHaveLength(2);
    expect(pids[1]).not.toBe(pids[0]);
    expect(warnings).toEqual([`LISTEN ${channel} lost; following by polling until it is back`]);
    await admin.query(`select pg_notify($1, 'two')`, [channel]);
    await until(async () => got.includes('two'));

    // Stopped: its connection goes back to the pool, and nothing more arrives.
    listening.stop();
    listening = undefined;
    expect(pool.totalCount - pool.idleCount).toBe(0);
    await admin.query(`select pg_notify($1, 'three')`, [channel]);
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toEqual(['one', 'two']);
  });
});
