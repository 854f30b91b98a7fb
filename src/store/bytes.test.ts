import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/process.js';
import { bytesColumn, bytesOf, openStore, type Store } from './db.js';

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** Every byte value; sizes about a base64 line of PostgreSQL's (57 bytes, 76 characters and a line break); a part of 1 MiB. */
const values = [
  Buffer.alloc(0),
  Buffer.from([0]),
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
  ...[1, 2, 3, 56, 57, 58, 114, 115].map((n) => randomBytes(n)),
  randomBytes(1 << 20),
];

async function roundTrip(s: Store) {
  const db = s.db as any;
  const binary = s.dialect === 'postgres' ? 'bytea' : 'blob';
  await db.schema.createTable('bytes_test').addColumn('id', 'integer').addColumn('data', binary).execute();
  for (const [id, data] of values.entries()) await db.insertInto('bytes_test').values({ id, data }).execute();
  const rows = await db
    .selectFrom('bytes_test')
    .select(['id', bytesColumn(db, 'data').as('data')])
    .orderBy('id')
    .execute();
  expect(rows.map((r: { data: Uint8Array | string }) => bytesOf(r.data))).toEqual(values);
  return rows as { data: unknown }[];
}

describe('binary columns read through bytesColumn', () => {
  it('come back byte for byte from SQLite, as the blobs it hands over', async () => {
    store = openStore({ dataDir: ':memory:' });
    const rows = await roundTrip(store);
    expect(rows.every((r) => Buffer.isBuffer(r.data))).toBe(true);
  });

  it.runIf(process.env.STANDIN_TEST_DATABASE_URL)(
    'come back byte for byte from PostgreSQL, read as base64 text (line breaks and all)',
    async () => {
      store = openStore({ databaseUrl: await freshDatabaseUrl('bytes'), dataDir: ':memory:' });
      const rows = await roundTrip(store);
      expect(rows.every((r) => typeof r.data === 'string')).toBe(true);
      // PostgreSQL breaks its base64 into lines of 76 characters: the decoder skips them.
      expect(rows.at(-1)!.data).toContain('\n');
    },
  );
});
