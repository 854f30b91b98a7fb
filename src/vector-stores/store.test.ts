import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { insertChunks, type ChunkRow } from './store.js';

describe.each(dialects())('chunk inserts (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => void (s = await startTestStandin({ dialect, seed: false })));
  afterAll(() => s.close());

  const rows = (fileId: string, n: number): ChunkRow[] =>
    Array.from({ length: n }, (_, seq) => ({
      vector_store_id: 'vs_insert_test',
      file_id: fileId,
      seq,
      text: `chunk ${seq} of ${fileId} ‘ünïcode’ 😀`,
      tokens: seq + 1,
      embedding: Buffer.from(Float32Array.of(seq, -seq, seq / 3).buffer),
      embedder: 'builtin:test',
    }));

  // Full statements of 128 rows, then a tail in powers of two: every count lands whole and in order.
  it.each([0, 1, 5, 64, 100, 127, 128, 129, 255, 300, 1000])('stores %i chunks of a file, each as given', async (n) => {
    const fileId = `file-${dialect}-${n}`;
    const given = rows(fileId, n);
    await s.ctx.store.db.transaction().execute((tx) => insertChunks(tx, given));
    const stored = await s.ctx.store.db
      .selectFrom('vector_store_chunks')
      .selectAll()
      .where('vector_store_id', '=', 'vs_insert_test')
      .where('file_id', '=', fileId)
      .orderBy('seq')
      .execute();
    expect(stored.map((r) => ({ ...r, embedding: Buffer.from(r.embedding) }))).toEqual(given);
  });
});
