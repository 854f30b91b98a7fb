import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/process.js';
import { copyData, copyStatement, keptCopyBuffers, type CopyData } from './copy.js';
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

  it('writes bytes given as pieces one after the other, as the bytes joined', () => {
    const pieces = [Buffer.from([1, 2]), Buffer.alloc(0), Buffer.from([3])];
    const rows = (v: unknown) => [[v, 7]];
    expect(copyData(['bytea', 'int4'], rows(pieces)).bytes.equals(copyData(['bytea', 'int4'], rows(Buffer.concat(pieces))).bytes)).toBe(
      true,
    );
    expect(copyData(['bytea'], [[[]]]).bytes.equals(copyData(['bytea'], [[Buffer.alloc(0)]]).bytes)).toBe(true);
  });

  it("a COPY's buffer serves a later one once its bytes have left, and not before; a large one is never kept", () => {
    const row = (n: number, byte: number) => [[Buffer.alloc(n, byte)]];
    const isKept = (d: CopyData) => keptCopyBuffers().filter((k) => k.buffer === d.messages.buffer).length;
    const a = copyData(['bytea'], row(100_000, 1));
    const b = copyData(['bytea'], row(100_000, 2));
    expect(a.messages.buffer === b.messages.buffer).toBe(false);
    expect(isKept(a)).toBe(0);
    // Released (twice: once is what counts), its buffer is kept, even over smaller ones.
    for (let i = 0; i < 4; i++) copyData(['bytea'], row(1_000, 0)).release();
    a.release();
    a.release();
    expect(isKept(a)).toBe(1);
    expect(keptCopyBuffers().length).toBeLessThanOrEqual(4);
    // A COPY the size of a's takes a kept buffer at least as large: a's, or one of the same size.
    const sizes = keptCopyBuffers().map((k) => k.length);
    const c = copyData(['bytea'], row(100_000, 3));
    expect(sizes).toContain(c.messages.buffer.byteLength);
    expect(c.messages.buffer.byteLength).toBe(a.messages.buffer.byteLength);
    // What c wrote is c's, and b's rows (their buffer never given back) are untouched.
    expect(c.bytes.subarray(25, 100_025).every((x) => x === 3)).toBe(true);
    expect(b.bytes.subarray(25, 100_025).every((x) => x === 2)).toBe(true);
    const large = copyData(['bytea'], row(5 << 20, 6));
    large.release();
    expect(isKept(large)).toBe(0);
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

  it('arrive as sent when many run at once on the pool, their buffers passed from one to the next; a statement runs once', async () => {
    // Forty transactions at once, each a COPY of its own bytes, of sizes that fit the kept buffers and not.
    const sizes = Array.from({ length: 40 }, (_, i) => 2_000 + ((i * 7_919) % 90_000));
    const bodyOf = (i: number, r: number) => String.fromCharCode(97 + ((i + r) % 26)).repeat(sizes[i] / 4) + `:${i}:${r}`;
    await Promise.all(
      sizes.map((_, i) =>
        store.db.transaction().execute((tx) =>
          tx.executeQuery(
            copyStatement(
              'copied',
              ['id', 'body', 'n', 'data'],
              ['int4', 'text', 'int4', 'bytea'],
              Array.from({ length: 4 }, (_, r) => [10_000 + 10 * i + r, bodyOf(i, r), i, Buffer.alloc(sizes[i], i)]),
            ).compile(),
          ),
        ),
      ),
    );
    const rows = (await rowsOf()).filter((r) => r.id >= 10_000);
    expect(rows.length).toBe(4 * sizes.length);
    for (const row of rows) {
      const i = Math.floor((row.id - 10_000) / 10);
      expect(row.body).toBe(bodyOf(i, row.id % 10));
      expect(row.n).toBe(i);
      expect(row.data?.equals(Buffer.alloc(sizes[i], i))).toBe(true);
    }
    // Compiled once and run twice, a COPY is refused the second time: its buffer may hold other rows by then.
    const query = copyStatement('copied', ['id', 'body'], ['int4', 'text'], [[20_000, 'once']]).compile();
    await store.db.executeQuery(query);
    await expect(store.db.executeQuery(query)).rejects.toThrow(/runs once/);
    expect((await rowsOf()).filter((r) => r.id === 20_000).length).toBe(1);
  });
});
