import { createServer } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyConfig } from '../admin/config-file.js';
import { dialects, startTestStandin, turnsDuring, type TestStandin } from '../../test/helpers.js';
import { filler, makeDocx, makePdf } from '../../test/vector-stores/fixtures.js';
import { uploadFile } from '../../test/vector-stores/upload.js';
import { ATTACH_ROWS } from './service.js';

/** `/v1/vector_stores…`: stores, ingestion jobs, files, batches, search, rule 5; errors and project scoping. */
describe.each(dialects())('vector stores (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  const post = (url: string, body?: unknown, key = 'platform') => s.req('POST', url, { key, body });
  const get = (url: string, key = 'platform') => s.req('GET', url, { key });
  const ready = async (id: string) => {
    await s.ctx.jobs.drain(60_000);
    return (await get(`/v1/vector_stores/${id}`)).body;
  };

  it('ingests every supported type, fails an unsupported file (not the store), and reports counts and usage', async () => {
    const ids = [
      await uploadFile(s, 'notes.txt', 'Plain notes about the harbour.'),
      await uploadFile(s, 'readme.md', '# Readme\nThe markdown file.'),
      await uploadFile(s, 'page.html', '<html><body><p>An HTML page about orchards.</p></body></html>'),
      await uploadFile(s, 'data.json', '{"topic":"weaving looms"}'),
      await uploadFile(s, 'table.csv', 'river,length\nNile,6650'),
      await uploadFile(s, 'report.pdf', makePdf(['The PDF report covers copper mines.'])),
      await uploadFile(s, 'memo.docx', makeDocx(['The DOCX memo covers lighthouse keepers.'])),
      await uploadFile(s, 'photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47])),
    ];
    const created = await post('/v1/vector_stores', { name: 'all types', file_ids: ids, metadata: { team: 'docs' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      object: 'vector_store',
      name: 'all types',
      status: 'in_progress',
      usage_bytes: 0,
      metadata: { team: 'docs' },
    });
    expect(created.body.file_counts).toEqual({ in_progress: 8, completed: 0, failed: 0, cancelled: 0, total: 8 });
    expect(created.body.id).toMatch(/^vs_/);
    const done = await ready(created.body.id);
    expect(done.status).toBe('completed');
    expect(done.file_counts).toEqual({ in_progress: 0, completed: 7, failed: 1, cancelled: 0, total: 8 });
    expect(done.usage_bytes).toBeGreaterThan(100);
    const png = await get(`/v1/vector_stores/${created.body.id}/files/${ids[7]}`);
    expect(png.body).toMatchObject({
      object: 'vector_store.file',
      status: 'failed',
      last_error: { code: 'unsupported_file' },
      vector_store_id: created.body.id,
    });
    const pdf = await get(`/v1/vector_stores/${created.body.id}/files/${ids[5]}`);
    expect(pdf.body).toMatchObject({
      status: 'completed',
      last_error: null,
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } },
    });
    const content = await get(`/v1/vector_stores/${created.body.id}/files/${ids[6]}/content`);
    expect(content.body).toMatchObject({ object: 'vector_store.file_content.page', has_more: false, next_page: null });
    expect(content.body.data[0].text).toContain('The DOCX memo covers lighthouse keepers.');
    const failed = await get(`/v1/vector_stores/${created.body.id}/files?filter=failed`);
    expect(failed.body.data.map((f: { id: string }) => f.id)).toEqual([ids[7]]);
    const search = await post(`/v1/vector_stores/${created.body.id}/search`, { query: 'copper mines report' });
    expect(search.body.data[0]).toMatchObject({ file_id: ids[5], filename: 'report.pdf' });
  });

  it('ranks the chunk holding a unique fact first, on small static chunks among filler', async () => {
    const background = await uploadFile(s, 'background.txt', filler(120));
    const fact = await uploadFile(
      s,
      'fact.txt',
      `${filler(20, 7)}\n\nThe capital of Zorbania is Quillport, a city of glass bridges.\n\n${filler(20, 9)}`,
    );
    const vs = await post('/v1/vector_stores', {
      name: 'facts',
      file_ids: [background, fact],
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 20 } },
    });
    await ready(vs.body.id);
    const chunks = await s.ctx.store.db.selectFrom('vector_store_chunks').select('seq').where('vector_store_id', '=', vs.body.id).execute();
    expect(chunks.length).toBeGreaterThan(30);
    const res = await post(`/v1/vector_stores/${vs.body.id}/search`, { query: 'What is the capital of Zorbania?', max_num_results: 5 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      object: 'vector_store.search_results.page',
      search_query: ['What is the capital of Zorbania?'],
      has_more: false,
      next_page: null,
    });
    expect(res.body.data.length).toBeLessThanOrEqual(5);
    expect(res.body.data[0].file_id).toBe(fact);
    expect(res.body.data[0].content[0]).toMatchObject({ type: 'text' });
    expect(res.body.data[0].content[0].text).toContain('Quillport');
    const scores = res.body.data.map((d: { score: number }) => d.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(scores.every((x: number) => x > 0 && x <= 1)).toBe(true);
    // Deterministic: the same query answers the same.
    expect(
      (await post(`/v1/vector_stores/${vs.body.id}/search`, { query: 'What is the capital of Zorbania?', max_num_results: 5 })).body,
    ).toEqual(res.body);
    // Several queries: each chunk scores its best.
    const many = await post(`/v1/vector_stores/${vs.body.id}/search`, {
      query: ['glass bridges', 'unrelated words here'],
      max_num_results: 1,
    });
    expect(many.body.data[0].content[0].text).toContain('glass bridges');
    // Embeddings alone still find it.
    const vector = await post(`/v1/vector_stores/${vs.body.id}/search`, {
      query: 'capital of Zorbania',
      ranking_options: { ranker: 'none' },
    });
    expect(vector.body.data[0].content[0].text).toContain('Quillport');
    // The threshold drops weak matches.
    const strict = await post(`/v1/vector_stores/${vs.body.id}/search`, {
      query: 'capital of Zorbania',
      ranking_options: { score_threshold: 0.99 },
    });
    expect(strict.body.data).toEqual([]);
    const rewritten = await post(`/v1/vector_stores/${vs.body.id}/search`, {
      query: 'What is the Capital of Zorbania?',
      rewrite_query: true,
    });
    expect(rewritten.body.search_query).toEqual(['capital zorbania']);
    expect(rewritten.body.data[0].file_id).toBe(fact);
  });

  it('filters by file attributes, and sees attribute updates at once', async () => {
    const a = await uploadFile(s, 'eu.txt', 'Tariff schedule for the harbour of Velmora.');
    const b = await uploadFile(s, 'us.txt', 'Tariff schedule for the harbour of Ostrand.');
    const vs = await post('/v1/vector_stores', { name: 'filtered' });
    expect((await post(`/v1/vector_stores/${vs.body.id}/files`, { file_id: a, attributes: { region: 'eu', year: 2024 } })).status).toBe(
      200,
    );
    const attached = await post(`/v1/vector_stores/${vs.body.id}/files`, { file_id: b, attributes: { region: 'us', year: 2021 } });
    expect(attached.body).toMatchObject({ id: b, status: 'in_progress', attributes: { region: 'us', year: 2021 } });
    expect(attached.headers['openai-poll-after-ms']).toBeDefined();
    await ready(vs.body.id);
    const search = (filters: unknown) => post(`/v1/vector_stores/${vs.body.id}/search`, { query: 'tariff schedule harbour', filters });
    expect((await search({ type: 'eq', key: 'region', value: 'eu' })).body.data.map((d: { file_id: string }) => d.file_id)).toEqual([a]);
    expect(
      (
        await search({
          type: 'and',
          filters: [
            { type: 'gte', key: 'year', value: 2020 },
            { type: 'ne', key: 'region', value: 'eu' },
          ],
        })
      ).body.data.map((d: { file_id: string }) => d.file_id),
    ).toEqual([b]);
    expect(
      (
        await search({
          type: 'or',
          filters: [
            { type: 'eq', key: 'region', value: 'eu' },
            { type: 'eq', key: 'region', value: 'us' },
          ],
        })
      ).body.data,
    ).toHaveLength(2);
    const updated = await post(`/v1/vector_stores/${vs.body.id}/files/${b}`, { attributes: { region: 'eu' } });
    expect(updated.body.attributes).toEqual({ region: 'eu' });
    expect((await search({ type: 'eq', key: 'region', value: 'eu' })).body.data).toHaveLength(2);
    expect((await search({ type: 'eq', key: 'region', value: 'us' })).body.data[0]?.attributes).toBeUndefined();
  });

  it('runs batches: create, poll, list files, cancel', async () => {
    const ids = [await uploadFile(s, 'b1.txt', 'first batch file'), await uploadFile(s, 'b2.md', 'second batch file')];
    const vs = await post('/v1/vector_stores', { name: 'batches' });
    const batch = await post(`/v1/vector_stores/${vs.body.id}/file_batches`, { file_ids: ids, attributes: { kind: 'batch' } });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body).toMatchObject({
      object: 'vector_store.files_batch',
      vector_store_id: vs.body.id,
      status: 'in_progress',
      file_counts: { in_progress: 2, total: 2 },
    });
    expect(batch.body.id).toMatch(/^vsfb_/);
    await s.ctx.jobs.drain();
    const done = await get(`/v1/vector_stores/${vs.body.id}/file_batches/${batch.body.id}`);
    expect(done.body).toMatchObject({ status: 'completed', file_counts: { completed: 2, in_progress: 0, total: 2 } });
    const files = await get(`/v1/vector_stores/${vs.body.id}/file_batches/${batch.body.id}/files?order=asc`);
    expect(files.body.data.map((f: { id: string; attributes: unknown }) => [f.id, f.attributes])).toEqual(
      ids.map((id) => [id, { kind: 'batch' }]),
    );
    expect((await post(`/v1/vector_stores/${vs.body.id}/file_batches/${batch.body.id}/cancel`)).status).toBe(400);

    const third = await uploadFile(s, 'b3.txt', 'third');
    const perFile = await post(`/v1/vector_stores/${vs.body.id}/file_batches`, {
      files: [
        {
          file_id: third,
          chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 0 } },
          attributes: { n: 3 },
        },
      ],
    });
    const cancelled = await post(`/v1/vector_stores/${vs.body.id}/file_batches/${perFile.body.id}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', file_counts: { cancelled: 1, in_progress: 0, total: 1 } });
    await s.ctx.jobs.drain();
    const after = await get(`/v1/vector_stores/${vs.body.id}/files/${third}`);
    expect(after.body).toMatchObject({
      status: 'cancelled',
      attributes: { n: 3 },
      chunking_strategy: { static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 0 } },
    });
    expect((await post(`/v1/vector_stores/${vs.body.id}/file_batches`, {})).body.error.param).toBe('file_ids');
    expect((await post(`/v1/vector_stores/${vs.body.id}/file_batches`, { file_ids: [third], files: [{ file_id: third }] })).status).toBe(
      400,
    );
  });

  it('attaches a batch ATTACH_ROWS files a round of statements, with a turn of the event loop between rounds', async () => {
    const n = 2 * ATTACH_ROWS + 1;
    const ids = await Promise.all(Array.from({ length: n }, (_, i) => uploadFile(s, `turn${i}.txt`, `turn file ${i}`)));
    const vs = await post('/v1/vector_stores', { name: 'turns' });
    // Attached before, with chunks: attached again, its earlier rows go.
    await post(`/v1/vector_stores/${vs.body.id}/files`, { file_id: ids[5] });
    await ready(vs.body.id);
    const chunksOf = (fileId: string) =>
      s.ctx.store.db
        .selectFrom('vector_store_chunks')
        .select('seq')
        .where('vector_store_id', '=', vs.body.id)
        .where('file_id', '=', fileId)
        .execute();
    expect(await chunksOf(ids[5])).toHaveLength(1);
    // The statements of the request, where PostgreSQL's are counted (each a round trip): a few a round, not a few a file.
    const { default: pg } = await import('pg');
    const query = vi.spyOn(pg.Client.prototype, 'query');
    // A file named twice is attached once, as the last names it.
    const files = [...ids.map((file_id) => ({ file_id })), { file_id: ids[7], attributes: { twice: true } }];
    try {
      // On SQLite the statements run on this thread: without the turns, none of these ticks would run meanwhile.
      const { result: batch, turns } = await turnsDuring(() => post(`/v1/vector_stores/${vs.body.id}/file_batches`, { files }));
      expect(batch.body.file_counts).toMatchObject({ in_progress: n, total: n });
      expect(turns).toBeGreaterThanOrEqual(3);
      if (dialect === 'postgres') expect(query.mock.calls.length).toBeLessThan(n);
    } finally {
      query.mockRestore();
    }
    expect(await chunksOf(ids[5])).toEqual([]);
    await ready(vs.body.id);
    expect((await get(`/v1/vector_stores/${vs.body.id}/files/${ids[7]}`)).body).toMatchObject({
      attributes: { twice: true },
      status: 'completed',
    });
    expect((await get(`/v1/vector_stores/${vs.body.id}`)).body.file_counts).toMatchObject({ completed: n, total: n });
    expect(await chunksOf(ids[5])).toHaveLength(1);
    // A file that is not there, in the last round: a 404 naming it, and no round before it kept.
    const empty = await post('/v1/vector_stores', { name: 'refused' });
    const refused = await post(`/v1/vector_stores/${empty.body.id}/file_batches`, { file_ids: [...ids, 'file-nope'] });
    expect(refused.status).toBe(404);
    expect(refused.body.error.param).toBe(`file_ids[${n}]`);
    expect((await get(`/v1/vector_stores/${empty.body.id}`)).body.file_counts).toMatchObject({ in_progress: 0, total: 0 });
  });

  it('gives a store made with its files, and a batch, one time for all they write', async () => {
    const ids = [await uploadFile(s, 'one-time-1.txt', 'first'), await uploadFile(s, 'one-time-2.txt', 'second')];
    // Every reading of the clock a second after the one before: a request that read it twice would show two times.
    const clock = s.ctx.clock;
    const real = clock.nowSeconds.bind(clock);
    let reads = 0;
    const spy = vi.spyOn(clock, 'nowSeconds').mockImplementation(() => real() + reads++);
    try {
      const vs = await post('/v1/vector_stores', { name: 'one time', file_ids: ids });
      expect(vs.body.last_active_at).toBe(vs.body.created_at);
      const stored = (await get(`/v1/vector_stores/${vs.body.id}`)).body;
      expect(stored.last_active_at).toBe(vs.body.created_at);
      const files = (await get(`/v1/vector_stores/${vs.body.id}/files`)).body.data;
      expect(files.map((f: { created_at: number }) => f.created_at)).toEqual([vs.body.created_at, vs.body.created_at]);

      const other = await post('/v1/vector_stores', { name: 'one time, a batch' });
      const batch = await post(`/v1/vector_stores/${other.body.id}/file_batches`, { file_ids: ids });
      const batchFiles = (await get(`/v1/vector_stores/${other.body.id}/file_batches/${batch.body.id}/files`)).body.data;
      expect(batchFiles.map((f: { created_at: number }) => f.created_at)).toEqual([batch.body.created_at, batch.body.created_at]);
      expect((await get(`/v1/vector_stores/${other.body.id}`)).body.last_active_at).toBe(batch.body.created_at);
    } finally {
      spy.mockRestore();
    }
    await s.ctx.jobs.drain(60_000);
  });

  it('removes a file from a store, and from every store when the file is deleted', async () => {
    const keep = await uploadFile(s, 'keep.txt', 'The orchard keeps apple trees.');
    const gone = await uploadFile(s, 'gone.txt', 'The orchard keeps pear trees.');
    const vs = await post('/v1/vector_stores', { file_ids: [keep, gone] });
    expect(vs.body.name).toBe('');
    await ready(vs.body.id);
    const hits = async () =>
      (await post(`/v1/vector_stores/${vs.body.id}/search`, { query: 'orchard trees' })).body.data
        .map((d: { file_id: string }) => d.file_id)
        .sort();
    expect(await hits()).toEqual([keep, gone].sort());
    expect((await s.req('DELETE', `/v1/vector_stores/${vs.body.id}/files/${keep}`, { key: 'platform' })).body).toEqual({
      id: keep,
      object: 'vector_store.file.deleted',
      deleted: true,
    });
    expect(await hits()).toEqual([gone]);
    expect((await get(`/v1/files/${keep}`)).status).toBe(200);
    await s.req('DELETE', `/v1/files/${gone}`, { key: 'platform' });
    expect(await hits()).toEqual([]);
    expect((await get(`/v1/vector_stores/${vs.body.id}`)).body.file_counts.total).toBe(0);
    const del = await s.req('DELETE', `/v1/vector_stores/${vs.body.id}`, { key: 'platform' });
    expect(del.body).toEqual({ id: vs.body.id, object: 'vector_store.deleted', deleted: true });
    expect((await get(`/v1/vector_stores/${vs.body.id}`)).status).toBe(404);
  });

  it('fails the file, not the store, when its file disappears before ingestion', async () => {
    const id = await uploadFile(s, 'brief.txt', 'short lived');
    const vs = await post('/v1/vector_stores', { file_ids: [id] });
    await s.ctx.store.db.deleteFrom('files').where('id', '=', id).execute();
    await ready(vs.body.id);
    expect((await get(`/v1/vector_stores/${vs.body.id}/files/${id}`)).body).toMatchObject({
      status: 'failed',
      last_error: { code: 'invalid_file' },
    });
  });

  it('modifies, lists and expires stores on the Standin clock', async () => {
    const vs = await post('/v1/vector_stores', { name: 'old', expires_after: { anchor: 'last_active_at', days: 1 } });
    expect(vs.body.expires_at).toBe(vs.body.last_active_at + 86_400);
    const renamed = await post(`/v1/vector_stores/${vs.body.id}`, { name: 'new', metadata: { k: 'v' } });
    expect(renamed.body).toMatchObject({ name: 'new', metadata: { k: 'v' }, expires_after: { anchor: 'last_active_at', days: 1 } });
    const list = await get('/v1/vector_stores?limit=1');
    expect(list.body).toMatchObject({ object: 'list', first_id: vs.body.id, has_more: true });
    s.ctx.clock.advance(2 * 86_400_000);
    expect((await get(`/v1/vector_stores/${vs.body.id}`)).body.status).toBe('expired');
    const search = await post(`/v1/vector_stores/${vs.body.id}/search`, { query: 'x' });
    expect(search.status).toBe(400);
    expect(search.body.error.code).toBe('vector_store_expired');
    const cleared = await post(`/v1/vector_stores/${vs.body.id}`, { expires_after: null });
    expect(cleared.body).toMatchObject({ status: 'completed', expires_at: null });
    expect(cleared.body.expires_after).toBeUndefined();
  });

  it('retries ingestion while the embeddings server is down, then fails the file; a search answers 503', async () => {
    const closed = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as { port: number };
        srv.close(() => resolve(port));
      });
    });
    const id = await uploadFile(s, 'down.txt', 'The embeddings server is down.');
    const vs = (await post('/v1/vector_stores', { name: 'down' })).body.id;
    await applyConfig(s.ctx, s.modules, { vector_stores: { embeddings: { base_url: `http://127.0.0.1:${closed}/v1`, model: 'gone' } } });
    try {
      await post(`/v1/vector_stores/${vs}/files`, { file_id: id });
      for (let attempt = 1; attempt <= 5; attempt++) {
        await s.ctx.jobs.drain();
        const file = (await get(`/v1/vector_stores/${vs}/files/${id}`)).body;
        expect(file.status).toBe(attempt < 5 ? 'in_progress' : 'failed');
        s.ctx.clock.advance(6_000);
      }
      expect((await get(`/v1/vector_stores/${vs}/files/${id}`)).body.last_error).toMatchObject({ code: 'server_error' });
      const search = await post(`/v1/vector_stores/${vs}/search`, { query: 'embeddings' });
      expect(search.status).toBe(503);
      expect(search.body.error.code).toBe('embeddings_unavailable');
    } finally {
      await applyConfig(s.ctx, s.modules, { vector_stores: {} });
    }
  });

  it('strips NUL from extracted text on every store, so the file completes', async () => {
    const id = await uploadFile(s, 'nul.txt', 'The Velmora archive\u0000 keeps its vault code, 7311.');
    const vs = (await post('/v1/vector_stores', { name: 'nul', file_ids: [id] })).body.id;
    expect((await ready(vs)).file_counts).toMatchObject({ completed: 1, failed: 0, in_progress: 0 });
    const content = await get(`/v1/vector_stores/${vs}/files/${id}/content`);
    expect(content.body.data[0].text).toBe('The Velmora archive keeps its vault code, 7311.');
  });

  it('fails the file, not leaves it in progress, when the store refuses every commit of its ingestion', async () => {
    const refuse =
      dialect === 'sqlite'
        ? [sql`create trigger refuse_texts before insert on vector_store_texts begin select raise(abort, 'the store refuses'); end`]
        : [
            sql`create function refuse_texts() returns trigger language plpgsql as $$ begin raise exception 'the store refuses'; end $$`,
            sql`create trigger refuse_texts before insert on vector_store_texts for each row execute function refuse_texts()`,
          ];
    for (const q of refuse) await q.execute(s.ctx.store.db);
    try {
      const id = await uploadFile(s, 'refused.txt', 'Text the store will not take.');
      const vs = (await post('/v1/vector_stores', { name: 'refused', file_ids: [id] })).body.id;
      for (let attempt = 1; attempt <= 5; attempt++) {
        await s.ctx.jobs.drain(60_000);
        const file = (await get(`/v1/vector_stores/${vs}/files/${id}`)).body;
        expect(file.status).toBe(attempt < 5 ? 'in_progress' : 'failed');
        s.ctx.clock.advance(6_000);
      }
      const file = (await get(`/v1/vector_stores/${vs}/files/${id}`)).body;
      expect(file.last_error).toEqual({ code: 'server_error', message: expect.stringMatching(/failed 5 times.*the store refuses/) });
    } finally {
      await sql`drop trigger refuse_texts${sql.raw(dialect === 'sqlite' ? '' : ' on vector_store_texts')}`.execute(s.ctx.store.db);
      if (dialect === 'postgres') await sql`drop function refuse_texts()`.execute(s.ctx.store.db);
    }
  });

  it('refuses bad input with 400 and the parameter', async () => {
    const id = await uploadFile(s, 'x.txt', 'x');
    const vs = (await post('/v1/vector_stores', { name: 'bad input' })).body.id;
    const param = async (url: string, body: unknown) => {
      const res = await post(url, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      return res.body.error.param;
    };
    const search = `/v1/vector_stores/${vs}/search`;
    expect(await param(search, { query: 'x', max_num_results: 0 })).toBe('max_num_results');
    expect(await param(search, { query: 'x', max_num_results: 51 })).toBe('max_num_results');
    expect(await param(search, { query: 'x', ranking_options: { score_threshold: 1.5 } })).toBe('ranking_options.score_threshold');
    expect(await param(search, { query: 'x', ranking_options: { ranker: 'best' } })).toBe('ranking_options.ranker');
    expect(await param(search, { query: 'x', filters: { type: 'like', key: 'a', value: 1 } })).toBe('filters.type');
    expect(await param(search, { max_num_results: 3 })).toBe('query');
    const files = `/v1/vector_stores/${vs}/files`;
    expect(
      await param(files, {
        file_id: id,
        chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 99, chunk_overlap_tokens: 0 } },
      }),
    ).toBe('chunking_strategy.static.max_chunk_size_tokens');
    expect(
      await param(files, {
        file_id: id,
        chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 4097, chunk_overlap_tokens: 0 } },
      }),
    ).toBe('chunking_strategy.static.max_chunk_size_tokens');
    expect(
      await param(files, {
        file_id: id,
        chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 400, chunk_overlap_tokens: 201 } },
      }),
    ).toBe('chunking_strategy.static.chunk_overlap_tokens');
    expect(await param(files, { file_id: id, chunking_strategy: { type: 'static' } })).toBe('chunking_strategy.static');
    expect(await param(files, { file_id: id, chunking_strategy: { type: 'fixed' } })).toBe('chunking_strategy.type');
    expect(await param(files, { file_id: id, attributes: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i])) })).toBe(
      'attributes',
    );
    expect(await param(files, { file_id: id, attributes: { k: { nested: true } } })).toBe('attributes.k');
    expect(await param('/v1/vector_stores', { expires_after: { anchor: 'last_active_at', days: 366 } })).toBe('expires_after.days');
    expect(await param('/v1/vector_stores', { metadata: { k: 'v'.repeat(513) } })).toBe('metadata.k');
    expect(await param('/v1/vector_stores', { colour: 'red' })).toBe('colour');
    const missing = await post(files, { file_id: 'file-nope' });
    expect(missing.status).toBe(404);
    expect((await post('/v1/vector_stores', { file_ids: [id, 'file-nope'] })).body.error.param).toBe('file_ids[1]');
    expect((await get('/v1/vector_stores?limit=101')).status).toBe(400);
    expect((await get(`/v1/vector_stores/${vs}/files?filter=done`)).status).toBe(400);
  });

  it('holds writes to a store’s files and batches to 300 a minute (rule 5), with the rate-limit headers', async () => {
    const id = await uploadFile(s, 'r.txt', 'rate');
    const vs = (await post('/v1/vector_stores', { name: 'busy' })).body.id;
    const other = (await post('/v1/vector_stores', { name: 'quiet' })).body.id;
    const first = await post(`/v1/vector_stores/${vs}/files`, { file_id: id });
    expect(first.headers['x-ratelimit-limit-requests']).toBe('300');
    expect(first.headers['x-ratelimit-remaining-requests']).toBe('299');
    expect(first.headers['x-ratelimit-reset-requests']).toMatch(/^\d+(\.\d+)?m?s$/);
    // The bucket refills continuously (5 a second), so a few more than 300 may pass while this runs.
    let admitted = 1;
    let refused: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 1; i < 400 && !refused; i++) {
      const r =
        i % 2
          ? await post(`/v1/vector_stores/${vs}/files/${id}`, { attributes: { i } })
          : await post(`/v1/vector_stores/${vs}/file_batches`, { file_ids: [id] });
      if (r.status === 429) refused = r;
      else {
        expect(r.status).toBe(200);
        admitted++;
      }
      // Reads do not count.
      if (i === 150) expect((await get(`/v1/vector_stores/${vs}/files`)).headers['x-ratelimit-limit-requests']).toBeUndefined();
    }
    expect(admitted).toBeGreaterThanOrEqual(300);
    expect(refused?.status).toBe(429);
    if (!refused) return;
    expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await post(`/v1/vector_stores/${other}/files`, { file_id: id })).status).toBe(200);
    s.ctx.clock.advance(60_000);
    expect((await post(`/v1/vector_stores/${vs}/files`, { file_id: id })).status).toBe(200);
    await s.ctx.jobs.drain(60_000);
  });

  it('keeps projects apart and needs the vector_stores scope', async () => {
    const id = await uploadFile(s, 'private.txt', 'a private note');
    const vs = (await post('/v1/vector_stores', { file_ids: [id] })).body.id;
    await ready(vs);
    await s.req('POST', '/admin/v1/projects/proj_demo/api_keys', {
      key: 'admin',
      body: { name: 'ro', value: 'sk-proj-vs-read-only-key-000000000000', permissions: { vector_stores: 'read' } },
    });
    expect((await get(`/v1/vector_stores/${vs}`, 'sk-proj-vs-read-only-key-000000000000')).status).toBe(200);
    expect((await post(`/v1/vector_stores/${vs}/search`, { query: 'note' }, 'sk-proj-vs-read-only-key-000000000000')).status).toBe(200);
    expect((await post('/v1/vector_stores', {}, 'sk-proj-vs-read-only-key-000000000000')).status).toBe(403);
    expect((await post(`/v1/vector_stores/${vs}/files`, { file_id: id }, 'sk-proj-vs-read-only-key-000000000000')).status).toBe(403);
    expect((await s.req('GET', '/v1/vector_stores')).status).toBe(401);
    const other = await s.req('POST', '/admin/v1/organizations/org_demo/projects', { key: 'admin', body: { name: 'elsewhere' } });
    await s.req('POST', `/admin/v1/projects/${other.body.id}/api_keys`, {
      key: 'admin',
      body: { name: 'k', value: 'sk-proj-vs-other-project-000000000000' },
    });
    const k = 'sk-proj-vs-other-project-000000000000';
    expect((await get(`/v1/vector_stores/${vs}`, k)).status).toBe(404);
    expect((await post(`/v1/vector_stores/${vs}/search`, { query: 'note' }, k)).status).toBe(404);
    expect((await get(`/v1/vector_stores/${vs}/files/${id}`, k)).status).toBe(404);
    expect((await get('/v1/vector_stores', k)).body.data).toEqual([]);
    // Nor may another project attach this project's file to its own store.
    const theirs = (await post('/v1/vector_stores', {}, k)).body.id;
    expect((await post(`/v1/vector_stores/${theirs}/files`, { file_id: id }, k)).status).toBe(404);
  });
});
