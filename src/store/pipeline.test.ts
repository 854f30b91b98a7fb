import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { freshDatabaseUrl } from '../../test/process.js';
import { openStore, precompiled, precompiledColumn, runAlone, runTogether, type Store } from './db.js';
import { groupStatement } from './group-commit.js';

// The table of this test is not in the database type; the builders are typed loosely here only.
const get = precompiled(['k'] as const, (db, a: { k: string }) => (db as any).selectFrom('kv').select('v').where('k', '=', a.k));
const values = precompiledColumn(['k'] as const, (db, a: { k: string }) =>
  (db as any).selectFrom('kv').select('v').where('k', '>=', a.k).orderBy('k'),
);
const insert = (db: any, rows: { k: string; v: string }[]) => db.insertInto('kv').values(rows);
// Rows, not a column read: a column read is remembered while the data is unchanged, and these answers
// depend on the connection and the time, not on the data.
const pid = async (db: Store['db'], a: Record<string, never>) => (await pidRow(db, a)).map((r) => r.pid);
const pidRow = precompiled([] as const, (k) => k.selectNoFrom(sql<number>`pg_backend_pid()`.as('pid')));
const nextTurn = () => new Promise((r) => setImmediate(r));

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function open(pipelines = 2) {
  const url = await freshDatabaseUrl('pipeline');
  store = openStore({ databaseUrl: url, dataDir: ':memory:', pipelines });
  await store.db.schema
    .createTable('kv')
    .addColumn('k', 'text', (c) => c.primaryKey())
    .addColumn('v', 'text', (c) => c.notNull())
    .execute();
  return { store, url };
}

describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('pipelined statements (PostgreSQL)', () => {
  it('answers every statement of a turn, in order, each with its own result', async () => {
    const { store } = await open();
    const db = store.db;
    await runAlone(db, insert(db, [{ k: 'a', v: '1' }]));
    // In one turn: reads, a write, and a read after the write on the same connection.
    const [a, b, none, , after] = await Promise.all([
      get(db, { k: 'a' }),
      values(db, { k: 'a' }),
      get(db, { k: 'zz' }),
      runAlone(db, insert(db, [{ k: 'b', v: '2' }])),
      values(db, { k: 'b' }),
    ]);
    expect(a).toEqual([{ v: '1' }]);
    expect(b).toEqual(['1']);
    expect(none).toEqual([]);
    expect(after).toEqual(['2']);
    // Reads inside a transaction run on the transaction's connection and see its uncommitted writes;
    // reads outside it do not.
    await db.transaction().execute(async (tx) => {
      await tx
        .insertInto('kv' as never)
        .values({ k: 'c', v: '3' } as never)
        .execute();
      expect(await get(tx, { k: 'c' })).toEqual([{ v: '3' }]);
      expect(await get(db, { k: 'c' })).toEqual([]);
    });
    expect(await get(db, { k: 'c' })).toEqual([{ v: '3' }]);
  });

  it('sends the identical reads of one turn once, and a read of a later turn again', async () => {
    const { store } = await open();
    const db = store.db;
    await runAlone(db, insert(db, [{ k: 'a', v: '1' }]));
    const stamp = precompiled([] as const, (k) => k.selectNoFrom(sql<string>`clock_timestamp()::text`.as('t')));
    const [x, y] = await Promise.all([stamp(db, {}), stamp(db, {})]);
    expect(x).toEqual(y); // one execution: clock_timestamp() differs between two
    await nextTurn();
    const [z] = await Promise.all([stamp(db, {})]);
    expect(z).not.toEqual(x);
    // Successive turns take turns on the connections.
    const first = await pid(db, {});
    const second = await pid(db, {});
    expect(first).not.toEqual(second);
  });

  it('fails a failing statement alone, in the turn it shares with others', async () => {
    const { store } = await open();
    const db = store.db;
    await runAlone(db, insert(db, [{ k: 'a', v: '1' }]));
    const results = await Promise.allSettled([
      get(db, { k: 'a' }),
      runAlone(db, insert(db, [{ k: 'a', v: 'duplicate' }])),
      runAlone(db, insert(db, [{ k: 'b', v: '2' }])),
      values(db, { k: 'a' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/duplicate key/);
    expect((results[3] as PromiseFulfilledResult<unknown>).value).toEqual(['1', '2']);
  });

  it('group statements: a batch is one statement, and a bad item fails alone', async () => {
    const { store, url } = await open();
    const db = store.db;
    const inserts = groupStatement(() => db, insert);
    await inserts({ k: 'x', v: '0' });
    const before = inserts.commits;
    const settled = await Promise.allSettled(['a', 'b', 'x', 'c'].map((k) => inserts({ k, v: k })));
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    // The batch failed as a whole, then each item alone: 1 + 4 statements, 3 of them committed.
    expect(inserts.commits - before).toBe(3);
    // Acknowledged means committed: another connection sees every acknowledged row.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      const { rows } = await other.query('select k, v from kv order by k');
      expect(rows).toEqual([
        { k: 'a', v: 'a' },
        { k: 'b', v: 'b' },
        { k: 'c', v: 'c' },
        { k: 'x', v: '0' },
      ]);
    } finally {
      await other.end();
    }
  });

  it('runs statements together as one transaction: all committed, or none', async () => {
    const { store } = await open();
    const db = store.db;
    const update = (k: string, v: string) => (db as any).updateTable('kv').set({ v }).where('k', '=', k);
    await runTogether(db, [insert(db, [{ k: 'a', v: '1' }]), insert(db, [{ k: 'b', v: '2' }]), update('a', '3')]);
    expect(await values(db, { k: 'a' })).toEqual(['3', '2']);
    // The second statement fails: the first is rolled back with it; the statements around the transaction,
    // in the same turn on the same connection, are not part of it.
    const results = await Promise.allSettled([
      runAlone(db, insert(db, [{ k: 'c', v: 'before' }])),
      runTogether(db, [update('a', 'lost'), insert(db, [{ k: 'b', v: 'duplicate' }]), insert(db, [{ k: 'd', v: 'lost' }])]),
      runAlone(db, insert(db, [{ k: 'e', v: 'after' }])),
      values(db, { k: 'a' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/duplicate key/);
    expect(await values(db, { k: 'a' })).toEqual(['3', '2', 'before', 'after']);
  });

  it('remembers column reads while the database is unchanged, and never serves one after a change', async () => {
    const { store, url } = await open();
    const db = store.db;
    const pipe = store.pipeline!;
    await runAlone(db, insert(db, [{ k: 'a', v: '0' }]));
    // Other work on the same PostgreSQL (other tests) changes the snapshot too; a hit needs two quiet turns.
    const hitTurn = async () => {
      for (let i = 0; i < 1000; i++) {
        const before = pipe.sent;
        const v = await values(db, { k: 'a' });
        if (pipe.sent - before === 1) return v; // the snapshot query alone: served from memory
        await nextTurn();
      }
      throw new Error('no turn was served from memory');
    };
    expect(await hitTurn()).toEqual(['0']);
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      for (let i = 1; i <= 5; i++) {
        // Committed by another connection (another instance, say), acknowledged, then read: the new value.
        await other.query('update kv set v = $1 where k = $2', [String(i), 'a']);
        expect(await values(db, { k: 'a' })).toEqual([String(i)]);
        expect(await hitTurn()).toEqual([String(i)]);
      }
      // A row added by this store's own pipelined write shows at once too.
      await runAlone(db, insert(db, [{ k: 'b', v: 'x' }]));
      expect(await values(db, { k: 'a' })).toEqual(['5', 'x']);
    } finally {
      await other.end();
    }
  });

  it('replaces a connection that breaks', async () => {
    const { store, url } = await open(1);
    const db = store.db;
    await runAlone(db, insert(db, [{ k: 'a', v: '1' }]));
    const [before] = await pid(db, {});
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('select pg_terminate_backend($1)', [before]);
    await admin.end();
    // Statements sent on the dead connection fail (never hang); a later turn opens a new connection.
    let after: number | undefined;
    for (let i = 0; i < 50 && after === undefined; i++) {
      after = await pid(db, {}).then(
        ([p]) => p,
        () => undefined,
      );
      await nextTurn();
    }
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    expect(await get(db, { k: 'a' })).toEqual([{ v: '1' }]);
  });
});
