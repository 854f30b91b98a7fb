import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ctx } from '../../src/core/module.js';
import { builtinEmbedder, embedBuiltin } from '../../src/vector-stores/embedder.js';
import { createIndexCache, type IndexCache } from '../../src/vector-stores/index-cache.js';
import { savedPath, sourceKey } from '../../src/vector-stores/index-file.js';
import { createVectorStore, deleteVectorStore } from '../../src/vector-stores/service.js';
import * as store from '../../src/vector-stores/store.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { putChunks } from './fixtures.js';

/**
 * Saved search indexes end to end (docs/files.md, "Saved indexes"): a store's first load on a new worker
 * reads the file the last one saved and applies the changes since; every search answers exactly as a
 * store loaded from its rows; a file that is corrupt, or whose version the change log no longer reaches,
 * is passed over; files leave with their store, at a reset, and by the sweep.
 */

/** Adds `files × perFile` chunks of generated prose to a store (no ingestion), logged as one change. */
const addFiles = (ctx: Ctx, storeId: string, files: number, perFile: number, seed: number) =>
  putChunks(ctx, storeId, {
    files,
    perFile,
    seed,
    words: 40,
    fileId: (f) => `file-saved${seed}x${String(f).padStart(4, '0')}`,
    marker: (f, seq) => `marker${seed}x${f}x${seq}`,
    attributes: (f) => (f % 2 ? JSON.stringify({ team: 'odd' }) : null),
  });

const QUERIES = ['copper ferry', 'clock tower lamp', 'marker1x3x7', 'marker2x1x4 bridge', 'ledger oven signal harbour'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(dialects())('saved search indexes (%s)', (dialect) => {
  let s: TestStandin;
  const dir = mkdtempSync(join(tmpdir(), 'standin-saved-indexes-'));
  const caches: IndexCache[] = [];
  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { searchIndexDir: dir, searchIndexSaveFrom: 1 } });
  });
  afterAll(async () => {
    for (const c of caches) await c.close();
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cache = (saved = true) => {
    const c = createIndexCache({ memoryBytes: 1 << 30, ...(saved ? { saved: { dir, from: 1 } } : {}) });
    caches.push(c);
    return c;
  };
  const rowOf = async (id: string) => (await store.getStore(s.ctx.store.db, 'proj_demo', id))!;
  /** Every query's hits, with and without a filter, through one cache. */
  const answers = async (c: IndexCache, id: string) => {
    const out = [];
    for (const q of QUERIES)
      for (const filter of [undefined, { type: 'eq' as const, key: 'team', value: 'odd' }])
        out.push(
          await c.search(s.ctx, [await rowOf(id)], builtinEmbedder, [{ vector: embedBuiltin(q), text: q }], {
            ranker: 'auto',
            max: 10,
            threshold: 0,
            filter,
          }),
        );
    return out;
  };
  const fileOf = (id: string) => savedPath(dir, sourceKey(s.ctx.store.location!), id);
  /** Waits for the worker's background save of a store (a file newer than `after`). */
  const saved = async (id: string, after = 0) => {
    for (let i = 0; i < 200; i++) {
      if (existsSync(fileOf(id)) && statSync(fileOf(id)).mtimeMs > after) return statSync(fileOf(id)).mtimeMs;
      await sleep(50);
    }
    throw new Error('no saved index');
  };

  it('a new worker loads the saved index and the changes since, and answers as a load from the rows', async () => {
    const vs = await createVectorStore(s.ctx, 'proj_demo', { name: 'saved' });
    await addFiles(s.ctx, vs.id, 12, 50, 1);
    const first = cache();
    const fromRows = await answers(first, vs.id);
    expect(first.stats()).toMatchObject({ fullLoads: 1, restores: 0 });
    const at = await saved(vs.id);

    const second = cache();
    expect(await answers(second, vs.id)).toEqual(fromRows);
    expect(second.stats()).toMatchObject({ fullLoads: 0, restores: 1, deltas: 0 });

    // Two changes: files added, one file removed. A new worker reads the file and applies both.
    await addFiles(s.ctx, vs.id, 3, 20, 2);
    await s.ctx.store.db.transaction().execute(async (tx) => {
      await store.deleteStoreFile(tx, vs.id, 'file-saved1x0005');
      await store.bumpVersion(tx, vs.id, ['file-saved1x0005']);
    });
    const third = cache();
    const restored = await answers(third, vs.id);
    expect(third.stats()).toMatchObject({ fullLoads: 0, restores: 1, deltas: 1 });
    const plain = cache(false);
    expect(restored).toEqual(await answers(plain, vs.id));
    expect(plain.stats()).toMatchObject({ fullLoads: 1, restores: 0 });
    expect(restored[4][0]).toMatchObject({ fileId: 'file-saved1x0003', seq: 7 });
    expect(restored[6][0]).toMatchObject({ fileId: 'file-saved2x0001', seq: 4 });
    expect(restored.flat().some((h) => h.fileId === 'file-saved1x0005')).toBe(false);
    // A tenth of the chunks changed since the file: the worker that applied them saved the store again.
    await saved(vs.id, at);

    // A flipped byte: passed over, the store loaded from its rows (and saved anew).
    const bytes = readFileSync(fileOf(vs.id));
    bytes[bytes.length >> 1] ^= 0x40;
    writeFileSync(fileOf(vs.id), bytes);
    const corruptAt = statSync(fileOf(vs.id)).mtimeMs;
    const fourth = cache();
    expect(await answers(fourth, vs.id)).toEqual(restored);
    expect(fourth.stats()).toMatchObject({ fullLoads: 1, restores: 0 });
    await saved(vs.id, corruptAt);

    // The change log no longer reaches the file's version (a change's entry is gone): loaded from the rows.
    await addFiles(s.ctx, vs.id, 1, 5, 3);
    await addFiles(s.ctx, vs.id, 1, 5, 4);
    const version = (await rowOf(vs.id)).index_version;
    await s.ctx.store.db
      .deleteFrom('vector_store_changes')
      .where('vector_store_id', '=', vs.id)
      .where('version', '=', version - 1)
      .execute();
    const fifth = cache();
    const afterGap = await answers(fifth, vs.id);
    expect(fifth.stats()).toMatchObject({ fullLoads: 1, restores: 0 });
    expect(afterGap).toEqual(await answers(cache(false), vs.id));
  }, 300_000);

  it("removes a store's file with the store, at a reset, and by the sweep of stores deleted elsewhere", async () => {
    const vs = await createVectorStore(s.ctx, 'proj_demo', { name: 'deleted' });
    await addFiles(s.ctx, vs.id, 2, 20, 5);
    const own = s.ctx.services.vectorStores.indexes;
    await own.search(s.ctx, [await rowOf(vs.id)], builtinEmbedder, [{ vector: null, text: 'ferry' }], {
      ranker: 'auto',
      max: 5,
      threshold: 0,
    });
    await saved(vs.id);
    await deleteVectorStore(s.ctx, 'proj_demo', vs.id);
    expect(existsSync(fileOf(vs.id))).toBe(false);

    // A file of a store this database no longer has (deleted on another instance): a new cache's first search sweeps it.
    const kept = await createVectorStore(s.ctx, 'proj_demo', { name: 'kept' });
    await addFiles(s.ctx, kept.id, 2, 20, 6);
    const sweeper = cache();
    await sweeper.search(s.ctx, [await rowOf(kept.id)], builtinEmbedder, [{ vector: null, text: 'ferry' }], {
      ranker: 'auto',
      max: 5,
      threshold: 0,
    });
    await saved(kept.id);
    copyFileSync(fileOf(kept.id), fileOf('vs_gone0000000000'));
    const next = cache();
    await next.search(s.ctx, [await rowOf(kept.id)], builtinEmbedder, [{ vector: null, text: 'ferry' }], {
      ranker: 'auto',
      max: 5,
      threshold: 0,
    });
    for (let i = 0; i < 100 && existsSync(fileOf('vs_gone0000000000')); i++) await sleep(50);
    expect(existsSync(fileOf('vs_gone0000000000'))).toBe(false);
    expect(existsSync(fileOf(kept.id))).toBe(true);

    // A reset (or a snapshot's import) removes every saved index of the database.
    await own.clear(s.ctx);
    expect(existsSync(fileOf(kept.id))).toBe(false);
  }, 120_000);

  it('saves nothing with --search-index-dir off', async () => {
    const off = await startTestStandin({ dialect, settings: { searchIndexDir: 'off', searchIndexSaveFrom: 1 } });
    try {
      const vs = await createVectorStore(off.ctx, 'proj_demo', { name: 'unsaved' });
      await addFiles(off.ctx, vs.id, 2, 20, 7);
      const row = (await store.getStore(off.ctx.store.db, 'proj_demo', vs.id))!;
      const hits = await off.ctx.services.vectorStores.indexes.search(
        off.ctx,
        [row],
        builtinEmbedder,
        [{ vector: null, text: 'marker7x1x3' }],
        {
          ranker: 'auto',
          max: 1,
          threshold: 0,
        },
      );
      expect(hits[0]).toMatchObject({ fileId: 'file-saved7x0001', seq: 3 });
      await sleep(500);
      expect(existsSync(join(off.ctx.settings.data, 'search-indexes'))).toBe(false);
      expect(existsSync(savedPath(dir, sourceKey(off.ctx.store.location!), vs.id))).toBe(false);
    } finally {
      await off.close();
    }
  });
});
