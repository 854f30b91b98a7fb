import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/process.js';
import { copyData, copyStatement } from './copy.js';
import { openStore, type Store } from './db.js';

describe('binary COPY data', () => {
  it('is the signature, each row its fields (NULL as -1), and the trailer', () => {
    const { bytes } = copyData(
      ['text', 'int4', 'bytea'],
      [
        ['é', -2, Buffer.from([0, 255])],
        [null, 7, null],
        [Buffer.from('é'), 7, null],
      ],
    );
    const hex = bytes.toString('hex');
    expect(hex.slice(0, 38)).toBe(Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1').toString('hex') + '0000000000000000');
    expect(hex.slice(38)).toBe(
      [
        ...['0003', '00000002c3a9', '00000004fffffffe', '0000000200ff'],
        ...['0003', 'ffffffff', '0000000400000007', 'ffffffff'],
        // A text given as its UTF-8, the same bytes.
        ...['0003', '00000002c3a9', '0000000400000007', 'ffffffff'],
        'ffff',
      ].join(''),
    );
  });
});

describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('rows copied into PostgreSQL', () => {
  let store: Store;
  beforeAll(async () => {
    store = openStore({ databaseUrl: await freshDatabaseUrl('copy'), dataDir: ':memory:' });
    await sql`create table copied (id integer primary key, body text not null, n integer, data bytea)`.execute(store.db);
  });
  afterAll(() => store?.close());

  const rowsOf = async () =>
    (await sql<{ id: number; body: string; n: number | null; data: Buffer | null }>`select * from copied order by id`.execute(store.db))
      .rows;

  it('arrive as they were sent, in a transaction, with its other statements', async () => {
    // Text of every width in UTF-8 (a surrogate pair is 4 bytes), a long one, NULLs, and bytes of every value.
    const texts = ['plain', 'café', '日本語', 'emoji 🙂 pair', 'x'.repeat(100_000)];
    const data = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await store.db.transaction().execute(async (tx) => {
      await sql`insert into copied (id, body) values (0, 'before')`.execute(tx);
      // A text given as its UTF-8 (as ingestion gives its parts) goes as it is.
      const rows = texts.map((t, i) => [i + 1, i === 2 ? Buffer.from(t) : t, i % 2 ? null : 1 - i, i % 2 ? data : null]);
      await tx.executeQuery(copyStatement('copied', ['id', 'body', 'n', 'data'], ['int4', 'text', 'int4', 'bytea'], rows).compile());
    });
    const rows = await rowsOf();
    expect(rows.map((r) => r.body)).toEqual(['before', ...texts]);
    expect(rows.map((r) => r.n)).toEqual([null, 1, null, -1, null, -3]);
    expect(rows[2].data?.equals(data)).toBe(true);
    expect(rows[1].data).toBeNull();
  });

  it("fail with PostgreSQL's error, and the transaction keeps nothing; the connection serves on", async () => {
    const before = (await rowsOf()).length;
    // A key already there, a NUL in a text (which no text column holds), and a text's bytes that are not
    // UTF-8 (or hold a NUL), each abort the transaction.
    for (const bad of [
      [1, 'again', null, null],
      [99, 'nul \u0000 inside', null, null],
      [99, Buffer.from([0x61, 0xc0, 0xaf]), null, null],
      [99, Buffer.from('nul \u0000 inside'), null, null],
    ]) {
      await expect(
        store.db.transaction().execute(async (tx) => {
          await sql`insert into copied (id, body) values (100, 'kept only if committed')`.execute(tx);
          await tx.executeQuery(copyStatement('copied', ['id', 'body', 'n', 'data'], ['int4', 'text', 'int4', 'bytea'], [bad]).compile());
        }),
      ).rejects.toThrow(/duplicate key|invalid byte sequence|0x00/);
    }
    // A COPY refused before it takes data (its rows were sent with it, unasked): PostgreSQL's error, and
    // the data is ignored, not run as statements.
    await expect(
      store.db.transaction().execute(async (tx) => {
        await tx.executeQuery(copyStatement('nowhere', ['id'], ['int4'], [[1]]).compile());
      }),
    ).rejects.toThrow(/relation "nowhere" does not exist/);
    const large = Array.from({ length: 2_000 }, (_, i) => [1_000 + i, 'y'.repeat(1_000), null, null]);
    await expect(
      store.db.transaction().execute(async (tx) => {
        await sql`select 1 / 0`.execute(tx).catch(() => {});
        // The transaction is aborted: this COPY is refused at once, with 2 MB of rows behind it.
        await tx.executeQuery(copyStatement('copied', ['id', 'body', 'n', 'data'], ['int4', 'text', 'int4', 'bytea'], large).compile());
      }),
    ).rejects.toThrow(/current transaction is aborted/);
    expect((await rowsOf()).length).toBe(before);
    // Every connection of the pool still answers (a failed COPY left none waiting for data).
    await Promise.all(Array.from({ length: 12 }, () => sql`select 1`.execute(store.db)));
  });
});
