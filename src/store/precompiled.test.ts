import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialects, startTestStandin } from '../../test/helpers.js';
import { precompiled, precompiledColumn, precompiledRows, precompiledWrite, runAlone } from './db.js';

describe.each(dialects())('precompiled queries (%s)', (dialect) => {
  it('run with fresh parameters each time, in or out of a transaction', async () => {
    const s = await startTestStandin({ dialect, seed: false });
    try {
      const db = s.ctx.store.db;
      await db
        .insertInto('settings')
        .values([
          { key: 'a', value: '1' },
          { key: 'b', value: '2' },
        ])
        .execute();
      const get = precompiled(['key'] as const, (k, a: { key: string }) =>
        k.selectFrom('settings').select('value').where('key', '=', a.key),
      );
      const set = precompiled(['key', 'value'] as const, (k, a: { key: string; value: string }) =>
        k.updateTable('settings').set({ value: a.value }).where('key', '=', a.key),
      );
      expect(await get(db, { key: 'a' })).toEqual([{ value: '1' }]);
      expect(await get(db, { key: 'b' })).toEqual([{ value: '2' }]);
      await db.transaction().execute((tx) => set(tx, { key: 'b', value: '3' }));
      expect(await get(db, { key: 'b' })).toEqual([{ value: '3' }]);
      expect(await get(db, { key: 'zz' })).toEqual([]);
      const mixed = precompiled(['value'] as const, (k, a: { value: string }) =>
        k.selectFrom('settings').select('key').where('key', '=', 'a').where('value', '=', a.value),
      );
      expect(await mixed(db, { value: '1' })).toEqual([{ key: 'a' }]);
      expect(await mixed(db, { value: '3' })).toEqual([]);
      const values = precompiledColumn(['min'] as const, (k, a: { min: string }) =>
        k.selectFrom('settings').select('value').where('key', '>=', a.min).orderBy('key'),
      );
      expect(await values(db, { min: 'a' })).toEqual(['1', '3']);
      expect(await db.transaction().execute((tx) => values(tx, { min: 'b' }))).toEqual(['3']);
      expect(await values(db, { min: 'zz' })).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it.runIf(dialect === 'postgres')(
    'on PostgreSQL are prepared by name on the connection that runs them, and a table changed under one fails it once there',
    async () => {
      const s = await startTestStandin({ dialect, seed: false });
      try {
        const db = s.ctx.store.db;
        const pool = s.ctx.store.pgPool!;
        await db.insertInto('settings').values({ key: 'p', value: '1' }).execute();
        const row = precompiled(['key'] as const, (k, a: { key: string }) => k.selectFrom('settings').selectAll().where('key', '=', a.key));
        const prepared = await db.transaction().execute(async (tx) => {
          expect(await row(tx, { key: 'p' })).toEqual([{ key: 'p', value: '1' }]);
          return (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(tx)).rows;
        });
        expect(prepared.map((r) => r.statement)).toContain('select * from "settings" where "key" = $1');
        // A newer version's migration, run by another instance, adds a column under the prepared `select *`.
        const connections = pool.totalCount;
        await sql`alter table settings add column extra text`.execute(db);
        const outcomes: string[] = [];
        for (let i = 0; i < 3; i++)
          outcomes.push(
            await db
              .transaction()
              .execute(async (tx) => JSON.stringify(await row(tx, { key: 'p' })))
              .catch((err: { code?: string }) => `failed ${err.code}`),
          );
        // At most the one connection that prepared it fails, once, and is dropped; the others prepare it anew.
        expect(outcomes.filter((o) => o.startsWith('failed')).length).toBeLessThanOrEqual(1);
        expect(outcomes.filter((o) => o.startsWith('failed')).every((o) => o === 'failed 0A000')).toBe(true);
        expect(outcomes.at(-1)).toBe(JSON.stringify([{ key: 'p', value: '1', extra: null }]));
        if (outcomes[0].startsWith('failed')) expect(pool.totalCount).toBeLessThan(connections + 1);
        // The same outside a transaction, on the pipelined connections (store/pipeline.ts, which name every statement).
        expect(await row(db, { key: 'p' })).toEqual([{ key: 'p', value: '1', extra: null }]);
        await sql`alter table settings add column more text`.execute(db);
        const alone: string[] = [];
        for (let i = 0; i < 3; i++)
          alone.push(await row(db, { key: 'p' }).then(JSON.stringify, (err: { code?: string }) => `failed ${err.code}`));
        expect(alone.filter((o) => o.startsWith('failed'))).toEqual(alone[0].startsWith('failed') ? ['failed 0A000'] : []);
        expect(alone.at(-1)).toBe(JSON.stringify([{ key: 'p', value: '1', extra: null, more: null }]));
      } finally {
        await s.close();
      }
    },
  );

  it('reads outside a transaction see only committed data', async () => {
    const s = await startTestStandin({ dialect, seed: false });
    try {
      const db = s.ctx.store.db;
      const get = precompiled(['key'] as const, (k, a: { key: string }) =>
        k.selectFrom('settings').select('value').where('key', '=', a.key),
      );
      let release!: () => void;
      const open = new Promise<void>((r) => (release = r));
      let inside!: () => void;
      const written = new Promise<void>((r) => (inside = r));
      const tx = db.transaction().execute(async (t) => {
        await t.insertInto('settings').values({ key: 'pending', value: 'x' }).execute();
        expect(await get(t, { key: 'pending' })).toEqual([{ value: 'x' }]);
        inside();
        await open;
      });
      await written;
      // On SQLite this runs on the read connection while the writer's transaction is open.
      if (dialect === 'sqlite') expect(await get(db, { key: 'pending' })).toEqual([]);
      release();
      await tx;
      expect(await get(db, { key: 'pending' })).toEqual([{ value: 'x' }]);
    } finally {
      await s.close();
    }
  });

  it('a batch statement is compiled once per number of rows and writes the values of each batch', async () => {
    const s = await startTestStandin({ dialect, seed: false });
    try {
      const db = s.ctx.store.db;
      let builds = 0;
      const insert = precompiledRows<{ key: string; value: string }>(['key', 'value'], (k, rows) => {
        builds++;
        return k.insertInto('settings').values(rows);
      });
      await runAlone(db, insert(db, [{ key: 'one', value: '1' }]));
      // The rows' own key order does not matter: values are placed by column name.
      await runAlone(db, insert(db, [{ value: '2', key: 'two' }]));
      await runAlone(
        db,
        insert(db, [
          { key: 'three', value: 'row0:0' },
          { key: 'four', value: '' },
        ]),
      );
      await runAlone(db, insert(db, [{ key: 'five', value: "o'neil" }]));
      expect(builds).toBe(2);
      const rows = await db
        .selectFrom('settings')
        .select(['key', 'value'])
        .where('key', 'in', ['one', 'two', 'three', 'four', 'five'])
        .orderBy('key')
        .execute();
      expect(rows).toEqual([
        { key: 'five', value: "o'neil" },
        { key: 'four', value: '' },
        { key: 'one', value: '1' },
        { key: 'three', value: 'row0:0' },
        { key: 'two', value: '2' },
      ]);
      // A failed batch leaves nothing behind, and the statement is still good for the next.
      await expect(
        runAlone(
          db,
          insert(db, [
            { key: 'six', value: '6' },
            { key: 'one', value: 'again' },
          ]),
        ),
      ).rejects.toThrow();
      expect(await db.selectFrom('settings').select('key').where('key', '=', 'six').execute()).toEqual([]);
      await runAlone(
        db,
        insert(db, [
          { key: 'six', value: '6' },
          { key: 'seven', value: '7' },
        ]),
      );
      expect(await db.selectFrom('settings').select('value').where('key', 'in', ['six', 'seven']).orderBy('key').execute()).toEqual([
        { value: '7' },
        { value: '6' },
      ]);
    } finally {
      await s.close();
    }
  });

  it('a batch statement refuses a row with a column it does not name, and a write tells the rows it changed', async () => {
    const s = await startTestStandin({ dialect, seed: false });
    try {
      const db = s.ctx.store.db;
      const insert = precompiledRows<{ key: string; value: string }>(['key'], (k, rows) =>
        k.insertInto('settings').values(rows.map((r) => ({ key: r.key, value: 'default' }))),
      );
      // The value would be dropped without a word: refused before anything is written.
      expect(() => insert(db, [{ key: 'x', value: 'lost' }])).toThrow(/value is not among the statement's columns/);
      expect(await db.selectFrom('settings').select('key').where('key', '=', 'x').execute()).toEqual([]);
      await db.insertInto('settings').values({ key: 'w', value: '1' }).execute();
      const set = precompiledWrite(['key', 'from', 'to'] as const, (k, a: { key: string; from: string; to: string }) =>
        k.updateTable('settings').set({ value: a.to }).where('key', '=', a.key).where('value', '=', a.from),
      );
      expect(await set(db, { key: 'w', from: '1', to: '2' })).toBe(1);
      expect(await db.transaction().execute((tx) => set(tx, { key: 'w', from: '1', to: '3' }))).toBe(0);
      expect(await set(db, { key: 'w', from: '2', to: '3' })).toBe(1);
      expect(await db.selectFrom('settings').select('value').where('key', '=', 'w').execute()).toEqual([{ value: '3' }]);
    } finally {
      await s.close();
    }
  });
});
