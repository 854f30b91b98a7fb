import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openStore, precompiled, precompiledColumn, type Store } from './db.js';

let dir: string;
let store: Store;
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open() {
  dir = mkdtempSync(join(tmpdir(), 'standin-reader-'));
  store = openStore({ dataDir: dir });
  await store.db.schema
    .createTable('kv')
    .addColumn('k', 'text', (c) => c.primaryKey())
    .addColumn('v', 'text')
    .execute();
}
const get = precompiled(['k'] as const, (db, a: { k: string }) => (db as any).selectFrom('kv').select('v').where('k', '=', a.k));
const values = precompiledColumn(['k'] as const, (db, a: { k: string }) =>
  (db as any).selectFrom('kv').select('v').where('k', '>=', a.k).orderBy('k'),
);
const nextTurn = () => new Promise((r) => setImmediate(r));

describe('snapshot reader (SQLite)', () => {
  it('a read right after a commit of this process sees it, in the same turn of the event loop', async () => {
    await open();
    expect(await get(store.db, { k: 'a' })).toEqual([]); // opens this turn's snapshot
    await (store.db as any).insertInto('kv').values({ k: 'a', v: '1' }).execute();
    expect(await get(store.db, { k: 'a' })).toEqual([{ v: '1' }]);
    await store.db.transaction().execute((tx) => (tx as any).updateTable('kv').set({ v: '2' }).where('k', '=', 'a').execute());
    expect(await get(store.db, { k: 'a' })).toEqual([{ v: '2' }]);
  });

  it("another process's commit shows from the next turn on", async () => {
    await open();
    expect(await get(store.db, { k: 'b' })).toEqual([]);
    const other = new SQLite(join(dir, 'standin.db'));
    other.prepare("insert into kv (k, v) values ('b', 'x')").run();
    other.close();
    expect(await get(store.db, { k: 'b' })).toEqual([]); // same snapshot: this turn began before the commit
    await nextTurn();
    expect(await get(store.db, { k: 'b' })).toEqual([{ v: 'x' }]);
  });

  describe('remembered column reads', () => {
    it('are forgotten by every commit of this process', async () => {
      await open();
      await (store.db as any).insertInto('kv').values({ k: 'a', v: '1' }).execute();
      expect(await values(store.db, { k: 'a' })).toEqual(['1']);
      await nextTurn();
      const first = await values(store.db, { k: 'a' });
      expect(first).toEqual(['1']);
      expect(await values(store.db, { k: 'a' })).toBe(first); // unchanged database: remembered
      await nextTurn();
      expect(await values(store.db, { k: 'a' })).toBe(first);
      await sql`update kv set v = '2' where k = 'a'`.execute(store.db);
      expect(await values(store.db, { k: 'a' })).toEqual(['2']);
      await store.db.transaction().execute((tx) => (tx as any).insertInto('kv').values({ k: 'b', v: '3' }).execute());
      expect(await values(store.db, { k: 'a' })).toEqual(['2', '3']);
      expect(await values(store.db, { k: 'b' })).toEqual(['3']);
    });

    it("are forgotten by another process's commit from the next turn on", async () => {
      await open();
      await (store.db as any).insertInto('kv').values({ k: 'a', v: '1' }).execute();
      expect(await values(store.db, { k: 'a' })).toEqual(['1']);
      await nextTurn();
      expect(await values(store.db, { k: 'a' })).toEqual(['1']);
      const other = new SQLite(join(dir, 'standin.db'));
      other.prepare("update kv set v = 'x' where k = 'a'").run();
      other.close();
      expect(await values(store.db, { k: 'a' })).toEqual(['1']); // this turn's snapshot began before the commit
      await nextTurn();
      expect(await values(store.db, { k: 'a' })).toEqual(['x']);
    });

    it('tell parameters apart by type', async () => {
      await open();
      await (store.db as any)
        .insertInto('kv')
        .values([
          { k: '1', v: 'text' },
          { k: 'null', v: 'n' },
        ])
        .execute();
      const byKey = precompiledColumn(['k'] as const, (db, a: { k: unknown }) =>
        (db as any).selectFrom('kv').select('v').where('k', '=', a.k),
      );
      expect(await byKey(store.db, { k: 'null' })).toEqual(['n']);
      expect(await byKey(store.db, { k: null })).toEqual([]);
      expect(await byKey(store.db, { k: '1' })).toEqual(['text']);
    });

    it('are kept by each parameter in turn: no two lists of parameters share a result', async () => {
      await open();
      await (store.db as any)
        .insertInto('kv')
        .values([
          { k: 'a', v: 'b' },
          { k: 'ab', v: '' },
        ])
        .execute();
      const byPair = precompiledColumn(['k', 'v'] as const, (db, a: { k: string; v: string }) =>
        (db as any).selectFrom('kv').select('k').where('k', '=', a.k).where('v', '=', a.v),
      );
      expect(await byPair(store.db, { k: 'a', v: 'b' })).toEqual(['a']);
      await nextTurn(); // results are kept from a version's second snapshot on
      const ab = await byPair(store.db, { k: 'a', v: 'b' });
      expect(ab).toEqual(['a']);
      expect(await byPair(store.db, { k: 'ab', v: '' })).toEqual(['ab']);
      expect(await byPair(store.db, { k: 'a', v: '' })).toEqual([]);
      expect(await byPair(store.db, { k: 'a', v: 'b' })).toBe(ab); // remembered
    });

    it('read a Buffer parameter by its content, each time', async () => {
      await open();
      await sql`insert into kv (k, v) values (cast(x'01' as text), 'one'), (cast(x'02' as text), 'two')`.execute(store.db);
      const byBytes = precompiledColumn(['k'] as const, (db, a: { k: Buffer }) =>
        (db as any)
          .selectFrom('kv')
          .select('v')
          .where(sql`cast(k as blob)`, '=', a.k),
      );
      await nextTurn();
      const key = Buffer.from([1]);
      expect(await byBytes(store.db, { k: key })).toEqual(['one']);
      key[0] = 2; // the same object, another content
      expect(await byBytes(store.db, { k: key })).toEqual(['two']);
      expect(await byBytes(store.db, { k: Buffer.from([1]) })).toEqual(['one']);
    });
  });
});
