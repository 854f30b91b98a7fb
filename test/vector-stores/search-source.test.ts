import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinEmbedder, embedBuiltin, toBlob } from '../../src/vector-stores/embedder.js';
import pg from 'pg';
import { openSource, postgresPage, type ChunkKey, type Source } from '../../src/vector-stores/search-source.js';
import { createVectorStore } from '../../src/vector-stores/service.js';
import * as store from '../../src/vector-stores/store.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { putChunks } from './fixtures.js';

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
        await store.upsertStoreFiles(tx, [
          {
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
          },
        ]);
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
        await store.insertTextParts(
          tx,
          storeId,
          fileId,
          0,
          parts.map((p) => Buffer.from(p)),
        );
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
    await store.upsertStoreFiles(s.ctx.store.db, [
      {
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
      },
    ]);
    await store.insertTextParts(
      s.ctx.store.db,
      other,
      'file-runs',
      0,
      Array.from({ length: 40 }, (_, i) => Buffer.from(`${i} `)),
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
    expect((await source.chunks(other, null, 10)).rows.map((r) => r[2])).toEqual(['3 4 5 ', '', '', '']);
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
    // Pages of 4 rows: file 0's five, file 1's five, then file 2's (in progress), whose rows are read and
    // left out: the last full page holds two chunks, the short one after it none.
    type Page = { rows: readonly (readonly [string, number, string, Uint8Array, string])[]; next: ChunkKey | null };
    /** The pages read from the start: each one's chunks and where the next starts. */
    const pagesOf = async (read: (after: ChunkKey | null) => Promise<Page>) => {
      const pages: { rows: string[]; next: string | null }[] = [];
      let after: ChunkKey | null = null;
      do {
        const page = await read(after);
        for (const [fileId, seq, text, embedding, embedder] of page.rows) {
          expect(text).toBe(`chunk ${seq} of file ${fileId.slice(-1)}`);
          expect(Buffer.from(embedding)).toEqual(toBlob(embedBuiltin(text)));
          expect(embedder).toBe(builtinEmbedder.id);
        }
        pages.push({ rows: page.rows.map((r) => `${r[0]}/${r[1]}`), next: page.next && `${page.next.fileId}/${page.next.seq}` });
        after = page.next;
      } while (after);
      return pages;
    };
    const pages = await pagesOf((after) => source.chunks(storeId, after, 4));
    const serverPages = await pagesOf(async (after) => {
      const page = await store.readChunkPage(s.ctx.store.db, storeId, after, 4);
      return { rows: page.rows.map((r) => [r.file_id, r.seq, r.text, r.embedding, r.embedder] as const), next: page.next };
    });
    const keys = (f: number, seqs: number[]) => seqs.map((seq) => `file-src${f}/${seq}`);
    expect(pages).toEqual([
      { rows: keys(0, [0, 1, 2, 3]), next: 'file-src0/3' },
      { rows: [...keys(0, [4]), ...keys(1, [0, 1, 2])], next: 'file-src1/2' },
      // The chunks of completed files only: a file in progress may have some of its rows written already.
      { rows: keys(1, [3, 4]), next: 'file-src2/1' },
      { rows: [], next: null },
    ]);
    expect(serverPages).toEqual(pages);
    // A search's hits, of either kind; a chunk of a file in progress is none.
    const hits = [1, 0].flatMap((f) => [4, 0].map((seq) => ({ fileId: `file-src${f}`, seq })));
    expect(await store.chunkTexts(s.ctx.store.db, storeId, [...hits, { fileId: 'file-src2', seq: 0 }])).toEqual([
      ...hits.map((k) => `chunk ${k.seq} of file ${k.fileId.slice(-1)}`),
      undefined,
    ]);

    const some = await source.chunks(storeId, { fileId: 'file-src0', seq: 2 }, 100, ['file-src0', 'file-src1', 'file-src2']);
    expect(some.rows.map((r) => `${r[0]}/${r[1]}`)).toEqual([...keys(0, [3, 4]), ...keys(1, [0, 1, 2, 3, 4])]);
    expect(some.next).toBeNull();
    const server2 = await store.readChunkPage(s.ctx.store.db, storeId, { fileId: 'file-src0', seq: 2 }, 100, [
      'file-src0',
      'file-src1',
      'file-src2',
    ]);
    expect(server2.rows.map((r) => `${r.file_id}/${r.seq}`)).toEqual(some.rows.map((r) => `${r[0]}/${r[1]}`));
  });
  // A store just filled has no statistics yet: PostgreSQL then read every row after the key and sorted
  // them on disk, for each page of a load (0.36 s a page at 100,000 chunks).
  if (dialect === 'postgres')
    it('reads a whole store’s pages in the key’s order, a delta’s by the files’ ids, a search’s hits by their keys, without statistics', async () => {
      const big = (await createVectorStore(s.ctx, 'proj_demo', { name: 'plan' })).id;
      await putChunks(s.ctx, big, {
        files: 40,
        perFile: 100,
        seed: 1,
        words: 3,
        fileId: (f) => `file-plan${String(f).padStart(3, '0')}`,
        marker: (f, seq) => `m${f}x${seq}`,
      });
      const client = new pg.Client({ connectionString: (s.ctx.store.location as { databaseUrl: string }).databaseUrl });
      await client.connect();
      try {
        type Node = { 'Node Type': string; 'Relation Name'?: string; 'Parent Relationship'?: string; Plans?: Node[] };
        /** The plan's nodes, depth first: type, table read, how its parent uses it. */
        const nodes = (n: Node): string[] => [
          [n['Node Type'], n['Relation Name'] ?? '', n['Parent Relationship'] ?? ''].join(' / '),
          ...(n.Plans ?? []).flatMap(nodes),
        ];
        const planOf = async (sql: string, args: readonly unknown[], setting = 'SET enable_sort = on') => {
          await client.query(setting);
          const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, [...args]);
          return nodes(rows[0]['QUERY PLAN'][0].Plan as Node);
        };
        const pageOf = (page: ReturnType<typeof postgresPage>) => planOf(page.sql, page.args, page.setting);
        // Each row's file is looked up by its key, below the plan of the chunks.
        const filesByKey = (plan: string[]) =>
          plan.filter((n) => n.includes('vector_store_files')).every((n) => n === 'Index Scan / vector_store_files / SubPlan');
        const whole = await pageOf(postgresPage(big, { fileId: 'file-plan010', seq: 5 }, 100));
        expect(whole.join(', ')).not.toContain('Sort');
        expect(whole.join(', ')).toContain('Index Scan / vector_store_chunks');
        expect(filesByKey(whole)).toBe(true);
        // A delta reads its files by their ids, whatever the store's size.
        const delta = await pageOf(postgresPage(big, null, 100, ['file-plan020', 'file-plan021']));
        expect(delta.join(', ')).toMatch(/Index Scan \/ vector_store_chunks|Bitmap Index Scan \/ vector_store_chunks/);
        // A search's hits: each found by its key, its file looked up by key, not a scan of the store's files.
        const hits = store
          .hitsQuery(
            s.ctx.store.db,
            big,
            [3, 17, 29].map((f) => ({ fileId: `file-plan${String(f).padStart(3, '0')}`, seq: f })),
          )
          .compile();
        const hitsPlan = await planOf(hits.sql, hits.parameters);
        expect(filesByKey(hitsPlan), hitsPlan.join(', ')).toBe(true);
        const [fileId, seq, text] = (await source.chunks(big, { fileId: 'file-plan010', seq: 5 }, 100)).rows[0];
        expect([fileId, seq, text.split(' ').at(-1)]).toEqual(['file-plan010', 6, 'm10x6']);
      } finally {
        await client.end();
      }
    });
});
