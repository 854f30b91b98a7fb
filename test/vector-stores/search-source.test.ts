import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinEmbedder, embedBuiltin, toBlob } from '../../src/vector-stores/embedder.js';
import { openSource, type Source } from '../../src/vector-stores/search-source.js';
import { createVectorStore } from '../../src/vector-stores/service.js';
import * as store from '../../src/vector-stores/store.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

/**
 * The search worker's own reads (search-source.ts), on a connection of their own to the server's database:
 * a store's completed files, and their chunks a page at a time after a key, of some files only when asked —
 * the same rows the server's own queries (store.ts) give, a chunk's text its own or its run of its file's
 * text parts.
 */
describe.each(dialects())('the search worker’s reads (%s)', (dialect) => {
  let s: TestStandin;
  let source: Source;
  let storeId: string;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    source = openSource(s.ctx.store.location!);
    storeId = (await createVectorStore(s.ctx, 'proj_demo', { name: 'source' })).id;
    await s.ctx.store.db.transaction().execute(async (tx) => {
      for (const [f, status] of [
        [0, 'completed'],
        [1, 'completed'],
        [2, 'in_progress'],
      ] as const) {
        const fileId = `file-src${f}`;
        await store.upsertStoreFile(tx, {
          vector_store_id: storeId,
          file_id: fileId,
          project_id: 'proj_demo',
          filename: `${fileId}.txt`,
          status,
          usage_bytes: 1,
          created_at: 0,
          last_error: null,
          chunking: '{}',
          attributes: f === 1 ? JSON.stringify({ team: 'harbour' }) : null,
          batch_id: null,
          ingest_id: 'ingest_src',
        });
        const rows: store.ChunkRow[] = [];
        // File 1's chunks are stored as runs of its text's parts (ingest-segments.ts), the others with their text.
        const parts: string[] = [];
        for (let seq = 0; seq < 5; seq++) {
          const text = `chunk ${seq} of file ${f}`;
          if (f === 1) parts.push(`chunk ${seq} `, `of file ${f}`);
          rows.push({
            vector_store_id: storeId,
            file_id: fileId,
            seq,
            ...(f === 1 ? { text: '', text_from: 2 * seq, text_to: 2 * seq + 1 } : { text }),
            tokens: 5,
            embedding: toBlob(embedBuiltin(text)),
            embedder: builtinEmbedder.id,
          });
        }
        await store.insertTextParts(tx, storeId, fileId, 0, parts);
        await store.insertChunks(tx, rows);
      }
    });
  });
  afterAll(async () => {
    await source?.close();
    await s?.close();
  });

  it('reads a chunk naming a run longer than any ingestion makes (a hostile snapshot’s row) as no text', async () => {
    const other = (await createVectorStore(s.ctx, 'proj_demo', { name: 'runs' })).id;
    await store.upsertStoreFile(s.ctx.store.db, {
      vector_store_id: other,
      file_id: 'file-runs',
      project_id: 'proj_demo',
      filename: 'runs.txt',
      status: 'completed',
      usage_bytes: 1,
      created_at: 0,
      last_error: null,
      chunking: '{}',
      attributes: null,
      batch_id: null,
      ingest_id: 'ingest_runs',
    });
    await store.insertTextParts(
      s.ctx.store.db,
      other,
      'file-runs',
      0,
      Array.from({ length: 40 }, (_, i) => `${i} `),
    );
    const runs = [
      [3, 5],
      [0, 39],
      [0, 2 ** 31 - 1],
      [5, 3],
    ];
    await store.insertChunks(
      s.ctx.store.db,
      runs.map(([from, to], seq) => ({
        vector_store_id: other,
        file_id: 'file-runs',
        seq,
        text: '',
        text_from: from,
        text_to: to,
        tokens: 1,
        embedding: toBlob(embedBuiltin('x')),
        embedder: builtinEmbedder.id,
      })),
    );
    expect((await source.chunks(other, null, 10)).map((r) => r[2])).toEqual(['3 4 5 ', '', '', '']);
  });

  it('reads the completed files, of some files only when asked', async () => {
    expect((await source.files(storeId)).sort()).toEqual([
      ['file-src0', 'file-src0.txt', null],
      ['file-src1', 'file-src1.txt', '{"team":"harbour"}'],
    ]);
    expect(await source.files(storeId, ['file-src1', 'file-src2', 'file-none'])).toEqual([
      ['file-src1', 'file-src1.txt', '{"team":"harbour"}'],
    ]);
  });

  it('reads chunks a page at a time after a key, in file and chunk order, as the server reads them', async () => {
    const all: string[] = [];
    let after: { fileId: string; seq: number } | null = null;
    for (;;) {
      const page = await source.chunks(storeId, after, 4);
      for (const [fileId, seq, text, embedding, embedder] of page) {
        all.push(`${fileId}/${seq}`);
        expect(text).toBe(`chunk ${seq} of file ${fileId.slice(-1)}`);
        expect(Buffer.from(embedding)).toEqual(toBlob(embedBuiltin(text)));
        expect(embedder).toBe(builtinEmbedder.id);
      }
      if (page.length < 4) break;
      const last = page[page.length - 1];
      after = { fileId: last[0], seq: last[1] };
    }
    const server = await store.readChunkPage(s.ctx.store.db, storeId, null, 100);
    expect(all).toEqual(server.map((r) => `${r.file_id}/${r.seq}`));
    for (const r of server) expect(r.text).toBe(`chunk ${r.seq} of file ${r.file_id.slice(-1)}`);
    // A search's hits, of either kind; a chunk of a file in progress is none.
    const keys = [1, 0].flatMap((f) => [4, 0].map((seq) => ({ fileId: `file-src${f}`, seq })));
    expect(await store.chunkTexts(s.ctx.store.db, storeId, [...keys, { fileId: 'file-src2', seq: 0 }])).toEqual([
      ...keys.map((k) => `chunk ${k.seq} of file ${k.fileId.slice(-1)}`),
      undefined,
    ]);
    // The chunks of completed files only: a file in progress may have some of its rows written already.
    expect(all).toHaveLength(10);
    expect(all.some((k) => k.startsWith('file-src2/'))).toBe(false);

    const some = await source.chunks(storeId, { fileId: 'file-src0', seq: 2 }, 100, ['file-src0', 'file-src1', 'file-src2']);
    expect(some.map((r) => `${r[0]}/${r[1]}`)).toEqual([
      'file-src0/3',
      'file-src0/4',
      'file-src1/0',
      'file-src1/1',
      'file-src1/2',
      'file-src1/3',
      'file-src1/4',
    ]);
    const server2 = await store.readChunkPage(s.ctx.store.db, storeId, { fileId: 'file-src0', seq: 2 }, 100, [
      'file-src0',
      'file-src1',
      'file-src2',
    ]);
    expect(server2.map((r) => `${r.file_id}/${r.seq}`)).toEqual(some.map((r) => `${r[0]}/${r[1]}`));
  });
});
