import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaimLost } from '../../src/core/jobs.js';
import type { Exec, Tx } from '../../src/store/db.js';
import { ingestFile } from '../../src/vector-stores/ingest.js';
import { TEXT_PART } from '../../src/vector-stores/ingest-protocol.js';
import { attachFile, createVectorStore, deleteStoreFile, type IngestPayload } from '../../src/vector-stores/service.js';
import * as store from '../../src/vector-stores/store.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { filler } from './fixtures.js';
import { uploadFile } from './upload.js';

/**
 * An ingestion writes a file's rows over several short transactions (ingest.ts): each only while the
 * attachment is current and in progress, none of them read before the last one completes the file, and
 * what was written dropped when the file is cancelled, removed or attached again meanwhile. The job is
 * run here by hand; its claim's fence, which opens each of its transactions, is where the test steps in.
 */
describe.each(dialects())('an ingestion written a part at a time (%s)', (dialect) => {
  let s: TestStandin;
  let storeId: string;
  let fileId: string;
  // About 1 MB of text in PARTS parts, and chunks for several statements; what JSON escapes throughout
  // (`…/content` writes each part's JSON on its own), and a character of two UTF-16 units across the first
  // parts' edge.
  const PARTS = Math.ceil((1 << 20) / TEXT_PART) + 1;
  const length = (PARTS - 1) * TEXT_PART + 1000;
  let text = '';
  for (let seed = 1; text.length < length; seed++) text += filler(200, seed) + ' "quoted" C:\\dir\ttab\r\n\u2028 😀 ';
  text = (text.slice(0, TEXT_PART - 1) + '😀' + text.slice(TEXT_PART + 1)).slice(0, length);

  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    storeId = (await createVectorStore(s.ctx, 'proj_demo', { name: 'staged' })).id;
    fileId = await uploadFile(s, 'manual.txt', text);
  });
  afterAll(() => s?.close());

  /** Attaches the file (again) and returns its ingestion's payload; the queued job is not run. */
  async function attach(): Promise<IngestPayload> {
    await attachFile(s.ctx, 'proj_demo', storeId, {
      file_id: fileId,
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 } },
    });
    const row = await store.getStoreFile(s.ctx.store.db, storeId, fileId);
    return { vectorStoreId: storeId, fileId, ingestId: row!.ingest_id };
  }
  const rowsOf = async (exec: Exec = s.ctx.store.db) => ({
    chunks: Number(
      (
        await exec
          .selectFrom('vector_store_chunks')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('file_id', '=', fileId)
          .executeTakeFirst()
      )?.n,
    ),
    parts: Number(
      (
        await exec
          .selectFrom('vector_store_texts')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('file_id', '=', fileId)
          .executeTakeFirst()
      )?.n,
    ),
  });
  const search = async () =>
    (
      await s.req('POST', `/v1/vector_stores/${storeId}/search`, {
        key: 'platform',
        body: { query: 'the archive keeps', max_num_results: 5 },
      })
    ).body.data.length;
  // `…/content` as a client reads it: a text of several parts is written a part at a time, one JSON document.
  const content = async () => {
    const res = await s.req('GET', `/v1/vector_stores/${storeId}/files/${fileId}/content`, { key: 'platform' });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toMatchObject({ object: 'vector_store.file_content.page', has_more: false, next_page: null });
    expect(res.body.data).toHaveLength(1);
    return res.body.data[0].text as string;
  };

  it('writes a large file over several transactions of about 1 MB, and nothing of it is read before the last completes it', async () => {
    const payload = await attach();
    // What each transaction finds as it starts: rows written, and what reads chunks and text reads of them.
    const seen: { chunks: number; parts: number; read: number; texts: (string | undefined)[]; content: string | undefined }[] = [];
    await ingestFile(s.ctx, payload, {
      attempts: 1,
      async fence(tx: Tx) {
        seen.push({
          ...(await rowsOf(tx)),
          read: (await store.readChunkPage(tx, storeId, null, 10)).rows.length,
          texts: await store.chunkTexts(tx, storeId, [{ fileId, seq: 0 }]),
          content: (await store.getStoreFile(tx, storeId, fileId))?.status,
        });
      },
    });
    const done = await rowsOf();
    // The text cut at its parts' edges and at every chunk's (chunks of 100 tokens, 50 of them shared).
    expect(done.parts).toBeGreaterThan(done.chunks);
    expect(done.chunks).toBeGreaterThan(3 * store.CHUNK_ROWS);
    // About 2 MB in all (text and vectors): at least three transactions, the first finding nothing.
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen[0]).toMatchObject({ chunks: 0, parts: 0 });
    expect(seen.at(-1)!.chunks).toBeGreaterThan(0);
    for (const look of seen) expect(look).toMatchObject({ read: 0, texts: [undefined], content: 'in_progress' });
    expect((await store.getStoreFile(s.ctx.store.db, storeId, fileId))?.status).toBe('completed');
    expect(await content()).toBe(text);
    // A part is read only while the attachment is still this ingestion's, completed (a reply is cut, not mixed).
    const key = { storeId, fileId, ingestId: payload.ingestId };
    expect(text.startsWith((await store.readTextParts(s.ctx.store.db, key, 0, 2))!.join(''))).toBe(true);
    expect(await store.readTextParts(s.ctx.store.db, { ...key, ingestId: 'ingest_another' }, 0, 2)).toBeUndefined();
    expect(await store.readTextParts(s.ctx.store.db, key, done.parts - 1, done.parts)).toBeUndefined();
    expect(await search()).toBeGreaterThan(0);
  });

  it('stops and drops what it wrote when the file is cancelled, attached again or removed midway', async () => {
    for (const how of ['cancelled', 'attached again', 'removed'] as const) {
      const payload = await attach();
      const key = { storeId, fileId, ingestId: payload.ingestId };
      let transactions = 0;
      let meanwhile: Promise<unknown> | undefined;
      let again: IngestPayload | undefined;
      await ingestFile(s.ctx, payload, {
        attempts: 1,
        // A request between the second transaction and the third: on SQLite it runs before the third (they
        // share one connection, in turn), on PostgreSQL the third waits for it here. The second holds the
        // attachment's row first (as its own check does next): otherwise, on PostgreSQL, the request could
        // take it before that check and stop the second transaction already.
        async fence(tx: Tx) {
          transactions++;
          if (transactions === 2) {
            await store.attachmentStatus(tx, key);
            if (how === 'cancelled')
              meanwhile = store.endIngestion(s.ctx.store.db, key, { status: 'cancelled', usage_bytes: 0, last_error: null });
            if (how === 'removed') meanwhile = deleteStoreFile(s.ctx, 'proj_demo', storeId, fileId);
            if (how === 'attached again') meanwhile = attach().then((p) => (again = p));
          }
          if (transactions === 3 && dialect === 'postgres') await meanwhile;
        },
      });
      await meanwhile;
      expect(transactions, how).toBe(3);
      const row = await store.getStoreFile(s.ctx.store.db, storeId, fileId);
      if (how === 'cancelled') expect(row?.status).toBe('cancelled');
      if (how === 'removed') expect(row).toBeUndefined();
      if (how === 'attached again') expect(row).toMatchObject({ ingest_id: again!.ingestId, status: 'in_progress' });
      expect(await rowsOf(), how).toEqual({ chunks: 0, parts: 0 });
      if (how === 'attached again') {
        // The new attachment's ingestion writes under the same keys, and completes.
        await ingestFile(s.ctx, again!, { attempts: 1 });
        expect(await content()).toBe(text);
      }
    }
  });

  it('after a crash midway, runs again from the start, or drops what it wrote if the file was cancelled meanwhile', async () => {
    for (const cancelled of [false, true]) {
      const payload = await attach();
      let transactions = 0;
      const crash = new Error('the process died');
      const first = ingestFile(s.ctx, payload, {
        attempts: 1,
        async fence() {
          if (++transactions === 3) throw crash;
        },
      });
      await expect(first).rejects.toBe(crash);
      expect((await rowsOf()).chunks).toBeGreaterThan(0);
      const key = { storeId, fileId, ingestId: payload.ingestId };
      if (cancelled) await store.endIngestion(s.ctx.store.db, key, { status: 'cancelled', usage_bytes: 0, last_error: null });
      await ingestFile(s.ctx, payload, { attempts: 2 });
      if (cancelled) expect(await rowsOf()).toEqual({ chunks: 0, parts: 0 });
      else {
        expect((await store.getStoreFile(s.ctx.store.db, storeId, fileId))?.status).toBe('completed');
        expect(await content()).toBe(text);
        const rows = await rowsOf();
        expect(rows.parts).toBeGreaterThan(rows.chunks);
      }
    }
  });
});

describe.each(dialects())("an ingestion job's project (%s)", (dialect) => {
  let s: TestStandin;
  beforeAll(async () => void (s = await startTestStandin({ dialect })));
  afterAll(() => s?.close());

  it("reads the file and the holds of its attachment's project, whatever project the job names", async () => {
    const { setWorkHolds, clearWorkHolds } = await import('../../src/holds/service.js');
    const storeId = (await createVectorStore(s.ctx, 'proj_demo', { name: 'named' })).id;
    const fileId = await uploadFile(s, 'named.txt', filler(300, 7));
    const attach = async (): Promise<IngestPayload> => {
      await attachFile(s.ctx, 'proj_demo', storeId, { file_id: fileId });
      return { vectorStoreId: storeId, fileId, ingestId: (await store.getStoreFile(s.ctx.store.db, storeId, fileId))!.ingest_id };
    };
    const status = async () => (await store.getStoreFile(s.ctx.store.db, storeId, fileId))?.status;
    // Queued before jobs named their project, naming it, and naming another (a snapshot's job, say).
    for (const projectId of [undefined, 'proj_demo', 'proj_other', 42 as unknown as string]) {
      const payload = await attach();
      expect(await ingestFile(s.ctx, { ...payload, projectId }, { attempts: 1 }), projectId).toBeUndefined();
      expect(await status(), projectId).toBe('completed');
    }
    // The attachment's project holds its ingestion: a job naming another project is held all the same.
    await setWorkHolds(s.ctx, s.ctx.store.db, 'proj_demo', { ingestion: 'hold' });
    const held = await attach();
    for (const projectId of [undefined, 'proj_demo', 'proj_other'])
      expect(await ingestFile(s.ctx, { ...held, projectId }, { attempts: 1 }), projectId).toMatchObject({ recheck: true });
    expect(await status()).toBe('in_progress');
    await clearWorkHolds(s.ctx.store.db, 'proj_demo');
    await setWorkHolds(s.ctx, s.ctx.store.db, 'proj_other', { ingestion: 'hold' });
    expect(await ingestFile(s.ctx, { ...held, projectId: 'proj_other' }, { attempts: 1 })).toBeUndefined();
    expect(await status()).toBe('completed');
  });
});

/**
 * On PostgreSQL a small file's first attempt writes everything in one transaction sent in one go
 * (store.ts ingestAtOnce), opened by its claim's fence and the attachment's check as statements that fail
 * it. The job is run here by hand: its `fenceQuery` is where the test steps in.
 */
describe.each(dialects().filter((d) => d === 'postgres'))('a small file ingested in one go (%s)', (dialect) => {
  let s: TestStandin;
  let storeId: string;
  let fileId: string;
  const text = filler(12, 3);
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    storeId = (await createVectorStore(s.ctx, 'proj_demo', { name: 'small' })).id;
    fileId = await uploadFile(s, 'small.txt', text);
  });
  afterAll(() => s?.close());

  const attach = async (): Promise<IngestPayload> => {
    await attachFile(s.ctx, 'proj_demo', storeId, { file_id: fileId });
    return { vectorStoreId: storeId, fileId, ingestId: (await store.getStoreFile(s.ctx.store.db, storeId, fileId))!.ingest_id };
  };
  const written = async () => {
    const count = (table: 'vector_store_chunks' | 'vector_store_texts') =>
      s.ctx.store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('file_id', '=', fileId)
        .executeTakeFirst()
        .then((r) => Number(r?.n));
    return { chunks: await count('vector_store_chunks'), parts: await count('vector_store_texts') };
  };
  const held = (sqlText: string, then?: () => void) => () => ({
    compile: () => {
      then?.();
      return CompiledQuery.raw(sqlText);
    },
  });

  it('writes the text and the chunks and completes the file in one transaction, without the fence of a transaction of its own', async () => {
    const payload = await attach();
    let fences = 0;
    await ingestFile(s.ctx, payload, { attempts: 1, fence: async () => void fences++, fenceQuery: held('select 1') });
    expect(fences).toBe(0);
    expect((await store.getStoreFile(s.ctx.store.db, storeId, fileId))?.status).toBe('completed');
    expect((await written()).chunks).toBeGreaterThan(0);
    const res = await s.req('GET', `/v1/vector_stores/${storeId}/files/${fileId}/content`, { key: 'platform' });
    expect(res.body.data[0].text).toBe(text);
  });

  it('writes nothing when the claim is lost: the steps after it find that out', async () => {
    const payload = await attach();
    const lost = await ingestFile(s.ctx, payload, {
      attempts: 1,
      fence: () => Promise.reject(new ClaimLost()),
      fenceQuery: held('select 1 / 0'),
    });
    expect(lost).toBeUndefined();
    expect((await store.getStoreFile(s.ctx.store.db, storeId, fileId))?.status).toBe('in_progress');
    expect(await written()).toEqual({ chunks: 0, parts: 0 });
  });

  it('writes nothing when the file is cancelled, attached again or removed while the transaction is on its way', async () => {
    for (const how of ['cancelled', 'attached again', 'removed'] as const) {
      if (how === 'removed') await attachFile(s.ctx, 'proj_demo', storeId, { file_id: fileId }).catch(() => undefined);
      const payload = await attach();
      const key = { storeId, fileId, ingestId: payload.ingestId };
      let meanwhile: Promise<unknown> | undefined;
      // The change is made (and committed, on another connection) while the claim's statement sleeps, before the attachment's check.
      const change = () => {
        if (how === 'cancelled')
          meanwhile = store.endIngestion(s.ctx.store.db, key, { status: 'cancelled', usage_bytes: 0, last_error: null });
        if (how === 'removed') meanwhile = deleteStoreFile(s.ctx, 'proj_demo', storeId, fileId);
        if (how === 'attached again') meanwhile = attach();
      };
      let fences = 0;
      await ingestFile(s.ctx, payload, { attempts: 1, fence: async () => void fences++, fenceQuery: held('select pg_sleep(0.5)', change) });
      await meanwhile;
      expect(fences, how).toBe(1);
      const row = await store.getStoreFile(s.ctx.store.db, storeId, fileId);
      if (how === 'cancelled') expect(row?.status).toBe('cancelled');
      if (how === 'removed') expect(row).toBeUndefined();
      if (how === 'attached again') expect(row).toMatchObject({ status: 'in_progress' });
      expect(await written(), how).toEqual({ chunks: 0, parts: 0 });
    }
  });
});
