import { createServer, type Server } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { embedBuiltin } from '../../src/vector-stores/embedder.js';
import { dialects, startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';
import { filler, makeDocx, makePdf } from './fixtures.js';

/** A small OpenAI-compatible `/embeddings` server answering with the built-in embedder's vectors. */
function embeddingsServer(): Promise<{ url: string; calls: { model: string; inputs: number }[]; close(): Promise<void> }> {
  const calls: { model: string; inputs: number }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url !== '/v1/embeddings' || req.headers.authorization !== 'Bearer emb-key') {
        res.writeHead(404).end();
        return;
      }
      const { model, input } = JSON.parse(body) as { model: string; input: string[] };
      calls.push({ model, inputs: input.length });
      const data = input.map((text, index) => ({ object: 'embedding', index, embedding: Array.from(embedBuiltin(text)) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}/v1`, calls, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}

const FACT = 'The capital of Zorbania is Quillport, a city of glass bridges.';

/** The openai SDK end to end: uploadAndPoll a batch of documents, then search; with the built-in embedder and an upstream one. */
describe.each(dialects())('vector stores through the openai SDK (%s)', (dialect) => {
  let s: TestStandin;
  let client: OpenAI;
  let emb: Awaited<ReturnType<typeof embeddingsServer>>;
  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${await s.listen()}/v1`, maxRetries: 0 });
    emb = await embeddingsServer();
  });
  afterAll(async () => {
    await s?.close();
    await emb?.close();
  });

  const documents = async () => [
    await toFile(Buffer.from(filler(80)), 'background.txt'),
    await toFile(Buffer.from(`# Atlas\n\n${filler(10, 3)}\n\n${FACT}\n\n${filler(10, 5)}`), 'atlas.md'),
    await toFile(makePdf(['Copper mines of the northern valley.', 'They closed in the year 1911.']), 'mines.pdf'),
    await toFile(makeDocx(['Lighthouse keepers log the tides twice a day.']), 'keepers.docx'),
  ];

  const ingestAndSearch = async (name: string) => {
    const store = await client.vectorStores.create({
      name,
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 120, chunk_overlap_tokens: 30 } },
    });
    const batch = await client.vectorStores.fileBatches.uploadAndPoll(store.id, { files: await documents() }, { pollIntervalMs: 50 });
    expect(batch).toMatchObject({ status: 'completed', file_counts: { completed: 4, failed: 0, in_progress: 0, total: 4 } });
    const files = [];
    for await (const f of client.vectorStores.files.list(store.id)) files.push(f);
    expect(files).toHaveLength(4);
    const page = await client.vectorStores.search(store.id, { query: 'What is the capital of Zorbania?', max_num_results: 3 });
    const results = page.data;
    expect(results[0].filename).toBe('atlas.md');
    expect(results[0].content[0].text).toContain('Quillport');
    const mines = await client.vectorStores.search(store.id, { query: 'When did the copper mines close?' });
    expect(mines.data[0].filename).toBe('mines.pdf');
    const keepers = await client.vectorStores.search(store.id, { query: 'lighthouse tides' });
    expect(keepers.data[0].filename).toBe('keepers.docx');
    expect((await client.vectorStores.retrieve(store.id)).status).toBe('completed');
    return store.id;
  };

  it('ingests an uploaded batch and finds the unique fact first (built-in embedder)', async () => {
    const id = await ingestAndSearch('builtin');
    const chunks = await s.ctx.store.db.selectFrom('vector_store_chunks').select('embedder').where('vector_store_id', '=', id).execute();
    expect(new Set(chunks.map((c) => c.embedder))).toEqual(new Set(['builtin:hashed-ngrams-256-v1']));
  });

  it('does the same with an upstream /embeddings server set in the config file', async () => {
    await applyConfig(s.ctx, s.modules, {
      vector_stores: { embeddings: { base_url: emb.url, model: 'test-embed', api_key: 'emb-key', batch_size: 16 } },
    });
    try {
      const id = await ingestAndSearch('upstream');
      expect(emb.calls.length).toBeGreaterThan(3);
      expect(emb.calls.every((c) => c.model === 'test-embed' && c.inputs <= 16)).toBe(true);
      const chunks = await s.ctx.store.db.selectFrom('vector_store_chunks').select('embedder').where('vector_store_id', '=', id).execute();
      expect(new Set(chunks.map((c) => c.embedder))).toEqual(new Set(['upstream:test-embed']));
    } finally {
      await applyConfig(s.ctx, s.modules, { vector_stores: {} });
    }
  });

  it('answers bad search input with a BadRequestError naming the parameter', async () => {
    const store = await client.vectorStores.create({ name: 'bad' });
    for (const [body, param] of [
      [{ query: 'x', max_num_results: 0 }, 'max_num_results'],
      [{ query: 'x', max_num_results: 51 }, 'max_num_results'],
      [{ query: 'x', ranking_options: { score_threshold: 1.5 } }, 'ranking_options.score_threshold'],
    ] as const) {
      const err = await client.vectorStores.search(store.id, body).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.param).toBe(param);
    }
    const file = await client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'assistants' });
    const err = await client.vectorStores.files
      .create(store.id, {
        file_id: file.id,
        chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 5000, chunk_overlap_tokens: 0 } },
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('chunking_strategy.static.max_chunk_size_tokens');
  });
});
