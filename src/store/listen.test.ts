import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../test/fleet/instances.js';
import { keepListening, notify, type Listening } from './listen.js';
import type { DB } from './schema.js';

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

  it("hears its own schema's notifications only; on public the channel is the name itself, as the version before named it", async () => {
    admin = new pg.Client({ connectionString: URL });
    await admin.connect();
    const schemas = [`listen_a_${process.pid}`, `listen_b_${process.pid}`];
    for (const schema of schemas) await admin.query(`create schema if not exists ${schema}`);
    const pools = schemas.map((schema) => new pg.Pool({ connectionString: URL, max: 2, options: `-c search_path=${schema}` }));
    const dbs = pools.map((p) => new Kysely<DB>({ dialect: new PostgresDialect({ pool: p }) }));
    pool = new pg.Pool({ connectionString: URL, max: 2 });
    try {
      const heard: Record<string, string[]> = { a: [], b: [], public: [] };
      const listen = (p: pg.Pool, into: string[]) =>
        keepListening(p, channel, (payload) => into.push(payload), { log: { warn: () => {} } });
      const all = [listen(pools[0], heard.a), listen(pools[1], heard.b), listen(pool, heard.public)];
      await Promise.all(all.map((l) => l.ready));
      try {
        await notify(dbs[0], channel, 'for a');
        await notify(dbs[1], channel, 'for b');
        // An instance one version back, on public, notifies the name itself.
        await admin.query(`select pg_notify($1, 'for public')`, [channel]);
        await until(async () => heard.a.length > 0 && heard.b.length > 0 && heard.public.length > 0);
        await new Promise((r) => setTimeout(r, 200));
        expect(heard).toEqual({ a: ['for a'], b: ['for b'], public: ['for public'] });
      } finally {
        for (const l of all) l.stop();
      }
    } finally {
      for (const db of dbs) await db.destroy();
      for (const schema of schemas) await admin.query(`drop schema if exists ${schema} cascade`);
    }
  });
});
