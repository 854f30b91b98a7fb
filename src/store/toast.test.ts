import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { freshDatabaseUrl } from '../../test/process.js';
import { LZ4_TOAST, openStore, type Store } from './db.js';

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** Text as a file's is: long, and compressible (a changelog's lines, each a little different). */
const text = Array.from({ length: 3000 }, (_, i) => `  * Entry ${i}: fix the parser's handling of line ${i % 97}.\n`).join('');

describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('values kept out of line (PostgreSQL)', () => {
  it('are compressed with lz4 on every pool connection, in a transaction too, where the server has it (else pglz)', async () => {
    const url = await freshDatabaseUrl('toast');
    const probe = new pg.Client({ connectionString: url });
    await probe.connect();
    const methods = (await probe.query(`select enumvals from pg_settings where name = 'default_toast_compression'`)).rows[0]?.enumvals;
    // What the connection had before Standin's statement: the server's default, which this test must not take for Standin's.
    const before = (await probe.query('show default_toast_compression')).rows[0].default_toast_compression;
    await probe.end();
    expect(before).toBe('pglz');
    // A server without lz4 (before 14, or built without it) keeps pglz. CI's (Debian's 15) has it.
    const expected = methods?.includes('lz4') ? 'lz4' : 'pglz';
    if (process.env.STANDIN_TEST_REQUIRE_ALL) expect(expected, 'CI runs a PostgreSQL built with lz4').toBe('lz4');

    store = openStore({ databaseUrl: url, dataDir: ':memory:' });
    const db = store.db as any;
    await db.schema.createTable('texts').addColumn('id', 'integer').addColumn('body', 'text').execute();
    await db.insertInto('texts').values({ id: 1, body: text }).execute();
    await db.transaction().execute((tx: any) => tx.insertInto('texts').values({ id: 2, body: text }).execute());
    // Several connections at once: each is a new one of the pool, with the statement queued ahead.
    await Promise.all([3, 4, 5].map((id) => db.insertInto('texts').values({ id, body: text }).execute()));
    const rows = await sql<{ id: number; method: string; stored: number }>`
      select id, pg_column_compression(body) as method, pg_column_size(body) as stored from texts order by id`.execute(db);
    expect(rows.rows.map((r) => r.method)).toEqual(Array(5).fill(expected));
    // Compressed, not only marked: well under the text's size.
    for (const r of rows.rows) expect(r.stored).toBeLessThan(text.length / 3);
  });

  it('is a statement that changes nothing on a server without lz4 (or before PostgreSQL 14)', async () => {
    const c = new pg.Client({ connectionString: process.env.STANDIN_TEST_DATABASE_URL });
    await c.connect();
    try {
      // The same statement, asked for a method no server has: no row, no error, the setting as it was.
      const absent = LZ4_TOAST.replace(`'lz4' = any`, `'zstd-none' = any`).replace(`'lz4', false`, `'zstd-none', false`);
      expect(absent).not.toBe(LZ4_TOAST);
      expect((await c.query(absent)).rowCount).toBe(0);
      expect((await c.query('show default_toast_compression')).rows[0].default_toast_compression).toBe('pglz');
      expect((await c.query(LZ4_TOAST)).rowCount).toBe(1);
      expect((await c.query('show default_toast_compression')).rows[0].default_toast_compression).toBe('lz4');
    } finally {
      await c.end();
    }
  });
});
