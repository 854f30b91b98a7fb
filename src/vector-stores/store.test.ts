import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, pgSchema, startTestStandin, turnsDuring, type TestStandin } from '../../test/helpers.js';
import { openStore, type Exec } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import {
  bumpVersion,
  CHANGES_KEPT,
  chunkTexts,
  clearIngested,
  completeIngestion,
  deleteStore,
  getStoreFile,
  insertChunks,
  insertTextParts,
  FORGET_EVERY,
  readChanges,
  readChunkPage,
  upsertStoreFiles,
  type ChunkRow,
} from './store.js';

/** A file's text, its parts joined in order; undefined when the store holds none. */
const getText = async (exec: Exec, storeId: string, fileId: string) => {
  const parts = await exec
    .selectFrom('vector_store_texts')
    .select('text')
    .where('vector_store_id', '=', storeId)
    .where('file_id', '=', fileId)
    .orderBy('part')
    .execute();
  return parts.length ? parts.map((p) => p.text).join('') : undefined;
};
const insertText = (exec: Exec, storeId: string, fileId: string, parts: string[]) =>
  insertTextParts(
    exec,
    storeId,
    fileId,
    0,
    parts.map((p) => Buffer.from(p)),
  );
import { vectorStoreMigrations } from './tables.js';

const rowsOf = (storeId: string, fileId: string, n: number): ChunkRow[] =>
  Array.from({ length: n }, (_, seq) => ({
    vector_store_id: storeId,
    file_id: fileId,
    seq,
    text: `chunk ${seq} of ${fileId} ‘ünïcode’ 😀`,
    tokens: seq + 1,
    embedding: Buffer.from(Float32Array.of(seq, -seq, seq / 3).buffer),
    embedder: 'builtin:test',
  }));

describe.each(dialects())('chunk inserts (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => void (s = await startTestStandin({ dialect, seed: false })));
  afterAll(() => s.close());

  const rows = (fileId: string, n: number) => rowsOf('vs_insert_test', fileId, n);

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
    // A row that names no run of its text's parts keeps its text (ingest-segments.ts).
    expect(stored.map((r) => ({ ...r, embedding: Buffer.from(r.embedding) }))).toEqual(
      given.map((r) => ({ ...r, text_from: null, text_to: null })),
    );
  });
});

describe.each(dialects())("a file's text and its removal (%s)", (dialect) => {
  let s: TestStandin;
  beforeAll(async () => void (s = await startTestStandin({ dialect, seed: false })));
  afterAll(() => s.close());

  it('keeps a text in its parts and reads it back whole; clearing a file drops its chunks and parts in short statements, nothing of another file', async () => {
    const db = s.ctx.store.db;
    const parts = Array.from({ length: 11 }, (_, i) => `part ${i} ‘ü’ 😀 `.repeat(50));
    await db.transaction().execute(async (tx) => {
      await insertText(tx, 'vs_clear_test', 'file-a', parts);
      await insertText(tx, 'vs_clear_test', 'file-b', ['other']);
      await insertChunks(tx, rowsOf('vs_clear_test', 'file-a', 300));
      await insertChunks(tx, rowsOf('vs_clear_test', 'file-b', 3));
    });
    expect(await getText(db, 'vs_clear_test', 'file-a')).toBe(parts.join(''));
    // Given as UTF-8, stored as text (SQLite's cast, PostgreSQL's decode): each part reads back as a string.
    const stored = await db
      .selectFrom('vector_store_texts')
      .select(['part', 'text'])
      .where('file_id', '=', 'file-a')
      .orderBy('part')
      .execute();
    expect(stored.map((r) => r.text)).toEqual(parts);
    // The event loop turns between the statements (3 of chunks, 3 of text parts): on SQLite they run on this thread.
    const { turns } = await turnsDuring(() => db.transaction().execute((tx) => clearIngested(tx, 'vs_clear_test', 'file-a')));
    expect(turns).toBeGreaterThanOrEqual(6);
    const left = await db
      .selectFrom('vector_store_chunks')
      .select(['file_id', 'seq'])
      .where('vector_store_id', '=', 'vs_clear_test')
      .execute();
    expect(left.map((r) => r.file_id).sort()).toEqual(['file-b', 'file-b', 'file-b']);
    expect(await getText(db, 'vs_clear_test', 'file-a')).toBeUndefined();
    expect(await getText(db, 'vs_clear_test', 'file-b')).toBe('other');
  });

  it('clears a text cut at its chunks’ edges, its chunks naming their parts', async () => {
    const db = s.ctx.store.db;
    const parts = Array.from({ length: 600 }, (_, i) => `half ${i} ‘ü’ 😀 `);
    const chunks = rowsOf('vs_clear_test', 'file-c', 299).map((r, seq) => ({ ...r, text: '', text_from: seq * 2, text_to: seq * 2 + 3 }));
    await db.transaction().execute(async (tx) => {
      await insertText(tx, 'vs_clear_test', 'file-c', parts);
      await insertChunks(tx, chunks);
    });
    expect(await getText(db, 'vs_clear_test', 'file-c')).toBe(parts.join(''));
    // 3 statements of chunks, 3 of parts, a turn after each.
    const { turns } = await turnsDuring(() => db.transaction().execute((tx) => clearIngested(tx, 'vs_clear_test', 'file-c')));
    expect(turns).toBeGreaterThanOrEqual(6);
    expect(await getText(db, 'vs_clear_test', 'file-c')).toBeUndefined();
  });

  it('reads a chunk naming a run longer than any ingestion makes (a hostile snapshot’s row) as no text, at once', async () => {
    const db = s.ctx.store.db;
    await upsertStoreFiles(db, [
      {
        vector_store_id: 'vs_run_test',
        file_id: 'file-r',
        project_id: 'proj_run_test',
        filename: 'r.txt',
        status: 'completed',
        usage_bytes: 1,
        created_at: 1,
        chunking: '{}',
        ingest_id: 'ingest_r',
      },
    ]);
    await insertText(
      db,
      'vs_run_test',
      'file-r',
      Array.from({ length: 40 }, (_, i) => `${i} `),
    );
    const [fine, long, wide, back] = rowsOf('vs_run_test', 'file-r', 4);
    await insertChunks(db, [
      { ...fine, text: '', text_from: 3, text_to: 5 },
      { ...long, text: '', text_from: 0, text_to: 39 },
      { ...wide, text: '', text_from: 0, text_to: 2 ** 31 - 1 },
      { ...back, text: '', text_from: 5, text_to: 3 },
    ]);
    const keys = [0, 1, 2, 3].map((seq) => ({ fileId: 'file-r', seq }));
    expect(await chunkTexts(db, 'vs_run_test', keys)).toEqual(['3 4 5 ', undefined, undefined, '']);
    expect((await readChunkPage(db, 'vs_run_test', null, 10)).rows.map((r) => r.text)).toEqual(['3 4 5 ', '', '', '']);
  });

  it("deleting a store drops its files' rows a file at a time in short statements, nothing of another store", async () => {
    const db = s.ctx.store.db;
    const attach = (storeId: string, fileId: string) =>
      upsertStoreFiles(db, [
        {
          vector_store_id: storeId,
          file_id: fileId,
          project_id: 'proj_delete_test',
          filename: `${fileId}.txt`,
          status: 'completed',
          usage_bytes: 1,
          created_at: 1,
          chunking: '{}',
          ingest_id: fileId,
        },
      ]);
    for (const [storeId, fileId, chunks] of [
      ['vs_delete_test', 'file-a', 300],
      ['vs_delete_test', 'file-b', 200],
      ['vs_kept_test', 'file-a', 3],
    ] as const) {
      await attach(storeId, fileId);
      await db.transaction().execute(async (tx) => {
        await insertText(tx, storeId, fileId, ['one ', 'two']);
        await insertChunks(tx, rowsOf(storeId, fileId, chunks));
      });
    }
    // The event loop turns between the statements (3 + 2 of chunks, 1 + 1 of text parts): on SQLite they run on this thread.
    const { turns } = await turnsDuring(() => db.transaction().execute((tx) => deleteStore(tx, 'vs_delete_test')));
    expect(turns).toBeGreaterThanOrEqual(7);
    const left = await db.selectFrom('vector_store_chunks').select(['vector_store_id', 'file_id']).where('seq', '<', 1000).execute();
    expect(left.filter((r) => r.vector_store_id === 'vs_delete_test')).toEqual([]);
    expect(left.filter((r) => r.vector_store_id === 'vs_kept_test')).toHaveLength(3);
    expect(await getText(db, 'vs_delete_test', 'file-a')).toBeUndefined();
    expect(await getText(db, 'vs_delete_test', 'file-b')).toBeUndefined();
    expect(await getText(db, 'vs_kept_test', 'file-a')).toBe('one two');
    expect(await getStoreFile(db, 'vs_delete_test', 'file-a')).toBeUndefined();
    expect(await getStoreFile(db, 'vs_kept_test', 'file-a')).toBeDefined();
  });

  it('a text stored before texts had parts is its part 0 after the migration', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-text-parts-'));
    const databaseUrl = dialect === 'postgres' ? (await pgSchema()).url : undefined;
    const store = openStore({ dataDir: dir, databaseUrl });
    try {
      const modules = [{ migrations: vectorStoreMigrations }];
      await migrate(store, modules, '202611281200_vector_store_changes', undefined, null);
      await sql`INSERT INTO vector_store_texts (vector_store_id, file_id, text) VALUES ('vs_old', 'file-old', 'an older text')`.execute(
        store.db,
      );
      // A chunk of then, with its text in its row.
      await sql`INSERT INTO vector_store_chunks (vector_store_id, file_id, seq, text, tokens, embedding, embedder) VALUES ('vs_old', 'file-old', 0, 'an older chunk', 3, ${Buffer.alloc(4)}, 'builtin:test')`.execute(
        store.db,
      );
      expect(await migrate(store, modules, undefined, undefined, null)).toEqual([
        '202611301200_vector_store_text_parts',
        '202612010600_vector_store_chunk_spans',
      ]);
      expect(await getText(store.db, 'vs_old', 'file-old')).toBe('an older text');
      // It keeps its text after chunks could name their text's parts.
      await upsertStoreFiles(store.db, [
        {
          vector_store_id: 'vs_old',
          file_id: 'file-old',
          project_id: 'proj_old',
          filename: 'old.txt',
          status: 'completed',
          usage_bytes: 1,
          created_at: 1,
          chunking: '{}',
          ingest_id: 'ingest_old',
        },
      ]);
      expect(await chunkTexts(store.db, 'vs_old', [{ fileId: 'file-old', seq: 0 }])).toEqual(['an older chunk']);
      expect((await readChunkPage(store.db, 'vs_old', null, 10)).rows.map((r) => r.text)).toEqual(['an older chunk']);
      await insertText(store.db, 'vs_old', 'file-new', ['two ', 'parts']);
      expect(await getText(store.db, 'vs_old', 'file-new')).toBe('two parts');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(dialects())("a store's change log (%s)", (dialect) => {
  let s: TestStandin;
  beforeAll(async () => void (s = await startTestStandin({ dialect })));
  afterAll(() => s.close());

  it('keeps at least the last CHANGES_KEPT versions, dropping older ones every FORGET_EVERY versions', async () => {
    const storeId = (await s.req('POST', '/v1/vector_stores', { key: 'platform', body: { name: 'log' } })).body.id as string;
    const db = s.ctx.store.db;
    const start = (await db.selectFrom('vector_stores').select('index_version').where('id', '=', storeId).executeTakeFirstOrThrow())
      .index_version;
    const logged = async () => (await readChanges(db, storeId, 0, 2 ** 31 - 1)).map((c) => c.version);
    for (let i = 1; i <= CHANGES_KEPT + 2 * FORGET_EVERY + 7; i++) {
      await db.transaction().execute((tx) => bumpVersion(tx, storeId, [`file-${i}`]));
      const version = start + i;
      if (version % 50 !== 7 && version % FORGET_EVERY !== 0) continue;
      const versions = await logged();
      // Every version an index may ask for is there; what is older goes by the next multiple of FORGET_EVERY.
      expect(versions.at(-1)).toBe(version);
      expect(versions.length).toBeGreaterThanOrEqual(Math.min(version - start, CHANGES_KEPT));
      expect(versions[0]).toBeGreaterThan(Math.floor(version / FORGET_EVERY) * FORGET_EVERY - CHANGES_KEPT);
      expect(versions.length).toBe(version - versions[0] + 1);
    }
  });

  it("completes an ingestion still in progress with its store's version and change, and nothing else", async () => {
    const storeId = (await s.req('POST', '/v1/vector_stores', { key: 'platform', body: { name: 'complete' } })).body.id as string;
    const db = s.ctx.store.db;
    const version = async () =>
      Number(
        (await db.selectFrom('vector_stores').select('index_version').where('id', '=', storeId).executeTakeFirstOrThrow()).index_version,
      );
    const attachment = (fileId: string, ingestId: string) =>
      upsertStoreFiles(db, [
        {
          vector_store_id: storeId,
          file_id: fileId,
          project_id: 'proj_demo',
          filename: 'a.txt',
          status: 'in_progress',
          usage_bytes: 0,
          created_at: 1,
          last_error: '{"code":"server_error","message":"an earlier attempt"}',
          chunking: '{}',
          ingest_id: ingestId,
        },
      ]);
    await attachment('file-complete', 'ingest_current');
    const key = { storeId, fileId: 'file-complete', ingestId: 'ingest_current' };
    const before = await version();
    // Another ingestion of the file (a newer attachment's) completes nothing.
    expect(await db.transaction().execute((tx) => completeIngestion(tx, { ...key, ingestId: 'ingest_older' }, 5))).toBe(false);
    expect(await version()).toBe(before);
    expect(await db.transaction().execute((tx) => completeIngestion(tx, key, 1234))).toBe(true);
    expect(await getStoreFile(db, storeId, 'file-complete')).toMatchObject({ status: 'completed', usage_bytes: 1234, last_error: null });
    expect(await version()).toBe(before + 1);
    expect(await readChanges(db, storeId, before, before + 1)).toEqual([{ version: before + 1, file_id: 'file-complete' }]);
    // Completed already: nothing more.
    expect(await db.transaction().execute((tx) => completeIngestion(tx, key, 99))).toBe(false);
    expect(await version()).toBe(before + 1);
    // At a multiple of FORGET_EVERY, the changes older than the last CHANGES_KEPT versions go.
    const at = CHANGES_KEPT + FORGET_EVERY;
    await db
      .updateTable('vector_stores')
      .set({ index_version: at - 1 })
      .where('id', '=', storeId)
      .execute();
    await db
      .insertInto('vector_store_changes')
      .values({ vector_store_id: storeId, version: FORGET_EVERY - 1, file_id: 'file-old' })
      .execute();
    await attachment('file-later', 'ingest_later');
    expect(
      await db.transaction().execute((tx) => completeIngestion(tx, { storeId, fileId: 'file-later', ingestId: 'ingest_later' }, 1)),
    ).toBe(true);
    expect((await readChanges(db, storeId, 0, at)).map((c) => c.version)).toEqual([at]);
  });
});
