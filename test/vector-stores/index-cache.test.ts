import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { threadId } from 'node:worker_threads';
import type { Ctx } from '../../src/core/module.js';
import { builtinEmbedder, embedBuiltin } from '../../src/vector-stores/embedder.js';
import { createIndexCache } from '../../src/vector-stores/index-cache.js';
import { createVectorStore } from '../../src/vector-stores/service.js';
import * as store from '../../src/vector-stores/store.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { putChunks } from './fixtures.js';

/** Puts `files × perFile` chunks of generated prose straight into a new store (no ingestion); its id. */
async function fill(ctx: Ctx, files: number, perFile: number, seed: number): Promise<string> {
  const vs = await createVectorStore(ctx, 'proj_demo', { name: `filled ${seed}` });
  await putChunks(ctx, vs.id, {
    files,
    perFile,
    seed,
    words: 60,
    fileId: (f) => `file-fill${seed}x${String(f).padStart(5, '0')}`,
    marker: (f, seq) => `marker${f}x${seq}`,
  });
  return vs.id;
}

const rowOf = async (ctx: Ctx, id: string) => (await store.getStore(ctx.store.db, 'proj_demo', id))!;
const queries = (text: string) => [{ vector: embedBuiltin(text), text }];
const options = { ranker: 'auto', max: 5, threshold: 0 };

describe.each(dialects())('search indexes: memory and the server thread (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('holds no more than its memory budget between searches, the least recently searched leaving first', async () => {
    const one = await fill(s.ctx, 10, 100, 1);
    const two = await fill(s.ctx, 10, 100, 2);
    const probe = createIndexCache({ memoryBytes: 1 << 30 });
    await probe.search(s.ctx, [await rowOf(s.ctx, one)], builtinEmbedder, queries('ferry'), options);
    const size = probe.stats().bytes;
    await probe.close();
    expect(size).toBeGreaterThan(1000 * 256 * 4);

    const cache = createIndexCache({ memoryBytes: Math.floor(size * 1.5) });
    try {
      const hit = await cache.search(s.ctx, [await rowOf(s.ctx, one)], builtinEmbedder, queries('marker3x7'), options);
      expect(hit[0]).toMatchObject({ fileId: 'file-fill1x00003', seq: 7 });
      expect(cache.stats()).toMatchObject({ stores: 1, fullLoads: 1 });
      const other = await cache.search(s.ctx, [await rowOf(s.ctx, two)], builtinEmbedder, queries('marker4x2'), options);
      expect(other[0]).toMatchObject({ fileId: 'file-fill2x00004', seq: 2 });
      // Both would not fit: the first left.
      expect(cache.stats().stores).toBe(1);
      expect(cache.stats().bytes).toBeLessThanOrEqual(size * 1.5);
      await cache.search(s.ctx, [await rowOf(s.ctx, one)], builtinEmbedder, queries('ferry'), options);
      expect(cache.stats().fullLoads).toBe(3);
    } finally {
      await cache.close();
    }

    // A budget smaller than one store: the search answers in full, and the most recently searched store
    // stays (searching it again loads nothing), the other leaves.
    const none = createIndexCache({ memoryBytes: 0 });
    try {
      const both = await none.search(
        s.ctx,
        [await rowOf(s.ctx, one), await rowOf(s.ctx, two)],
        builtinEmbedder,
        queries('marker9x99'),
        options,
      );
      expect(both.slice(0, 2).map((h) => h.fileId)).toEqual(['file-fill1x00009', 'file-fill2x00009']);
      expect(none.stats()).toMatchObject({ stores: 1, fullLoads: 2 });
      await none.search(s.ctx, [await rowOf(s.ctx, two)], builtinEmbedder, queries('marker9x98'), options);
      expect(none.stats()).toMatchObject({ stores: 1, fullLoads: 2 });
      await none.search(s.ctx, [await rowOf(s.ctx, one)], builtinEmbedder, queries('marker9x98'), options);
      expect(none.stats()).toMatchObject({ stores: 1, fullLoads: 3 });
    } finally {
      await none.close();
    }
  }, 120_000);

  it('indexes a large store in its worker thread while the server keeps answering', async () => {
    const big = await fill(s.ctx, 40, 500, 3);
    const base = await s.listen();
    const indexes = s.ctx.services.vectorStores.indexes;
    const pagesBefore = indexes.stats().pages;
    let done = false;
    const searching = fetch(`${base}/v1/vector_stores/${big}/search`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-proj-test-platform-key-000000000000`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'marker17x250' }),
    }).finally(() => (done = true));
    let answeredMeanwhile = 0;
    while (!done) {
      const live = await fetch(`${base}/livez`);
      if (live.status === 200 && !done) answeredMeanwhile++;
    }
    const res = await (await searching).json();
    expect(res.data[0].file_id).toBe('file-fill3x00017');
    // The worker read the 20,000 chunks itself, page by page, and /livez was answered meanwhile.
    expect(indexes.stats().pages - pagesBefore).toBeGreaterThanOrEqual(10);
    expect(indexes.stats().workerThreadId).not.toBe(threadId);
    expect(answeredMeanwhile).toBeGreaterThan(0);
  }, 300_000);
});
