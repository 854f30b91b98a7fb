import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../../src/core/settings.js';
import { createStandin, type Standin } from '../../src/server/app.js';
import { dialects, startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';
import { uploadFile } from './upload.js';

/**
 * Two instances on one store (SQLite folder or PostgreSQL schema): A serves searches, B takes the changes
 * and ingests. A's index follows every change by the files it touched — added, removed, re-attributed,
 * re-attached — without loading the store again, and answers as B does. Also with A searching the way
 * large stores are (--search-approximate-from 1: int8 vectors, candidates rescored).
 */
describe.each(dialects().flatMap((d) => [[d, 'exact'] as const, [d, 'approximate'] as const]))(
  'incremental search indexes across instances (%s, %s)',
  (dialect, mode) => {
    let a: TestStandin;
    let b: Standin;
    beforeAll(async () => {
      a = await startTestStandin({ dialect, ...(mode === 'approximate' ? { settings: { searchApproximateFrom: 1 } } : {}) });
      const { settings } = readSettings([], {});
      Object.assign(settings, {
        data: a.ctx.settings.data,
        databaseUrl: a.ctx.settings.databaseUrl,
        port: 0,
        logLevel: 'silent',
        adminKey: TEST_KEYS.admin,
        workers: false,
      });
      b = await createStandin(settings, { logger: false });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    const on = async (s: { app: Standin['app'] }, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => {
      const res = await s.app.inject({ method, url, payload: body as object, headers: { authorization: `Bearer ${TEST_KEYS.platform}` } });
      if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const search = async (s: { app: Standin['app'] }, storeId: string, query: string, filters?: unknown) =>
      (await on(s, 'POST', `/v1/vector_stores/${storeId}/search`, { query, ...(filters ? { filters } : {}) })).data as {
        file_id: string;
        score: number;
        attributes: unknown;
        content: { text: string }[];
      }[];

    it('adds, removes, re-attributes and re-attaches files: the other instance follows each by a delta', async () => {
      const ferry = await uploadFile(a, 'ferry.txt', 'The Brannoch ferry leaves at dawn from the north quay.');
      const mines = await uploadFile(a, 'mines.txt', 'The copper mines of Velm close in winter.');
      const light = await uploadFile(a, 'light.txt', 'The Quillport lighthouse keeper rings the bell at noon.');
      const store = await on(b, 'POST', '/v1/vector_stores', { name: 'shared', file_ids: [ferry, mines] });
      await b.ctx.jobs.drain(60_000);
      expect((await search(a, store.id, 'When does the Brannoch ferry leave?'))[0].file_id).toBe(ferry);
      const before = a.ctx.services.vectorStores.indexes.stats();

      // Added on B: found on A.
      await on(b, 'POST', `/v1/vector_stores/${store.id}/files`, { file_id: light });
      await b.ctx.jobs.drain(60_000);
      expect((await search(a, store.id, 'Quillport lighthouse bell'))[0].file_id).toBe(light);

      // Re-attributed on B: A's filters see it.
      await on(b, 'POST', `/v1/vector_stores/${store.id}/files/${ferry}`, { attributes: { team: 'harbour' } });
      const filtered = await search(a, store.id, 'ferry copper lighthouse', { type: 'eq', key: 'team', value: 'harbour' });
      expect(filtered.map((h) => h.file_id)).toEqual([ferry]);
      expect(filtered[0].attributes).toEqual({ team: 'harbour' });

      // Removed on B: gone on A.
      await on(b, 'DELETE', `/v1/vector_stores/${store.id}/files/${mines}`);
      expect((await search(a, store.id, 'copper mines of Velm')).map((h) => h.file_id)).not.toContain(mines);

      // Re-attached with other chunking (its chunks replaced): A holds the new chunks only.
      await on(b, 'POST', `/v1/vector_stores/${store.id}/files`, {
        file_id: ferry,
        chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 0 } },
      });
      expect((await search(a, store.id, 'Brannoch ferry')).map((h) => h.file_id)).not.toContain(ferry);
      await b.ctx.jobs.drain(60_000);
      const again = await search(a, store.id, 'Brannoch ferry');
      expect(again.filter((h) => h.file_id === ferry)).toHaveLength(1);

      // Every change reached A as a delta; the store was loaded whole once. B answers the same.
      const after = a.ctx.services.vectorStores.indexes.stats();
      expect(after.fullLoads).toBe(before.fullLoads);
      expect(after.deltas - before.deltas).toBe(5);
      for (const q of ['Brannoch ferry', 'Quillport lighthouse', 'copper']) {
        const [onA, onB] = [await search(a, store.id, q), await search(b, store.id, q)];
        if (mode === 'exact') expect(onA).toEqual(onB);
        // The int8 vectors move a score by a few thousandths at most.
        else {
          expect(onA.map((h) => h.file_id)).toEqual(onB.map((h) => h.file_id));
          onA.forEach((h, i) => expect(h.score).toBeCloseTo(onB[i].score, 2));
        }
      }
      // The work was the worker's.
      expect(after.workerThreadId).toBeGreaterThan(0);
      expect(after.pages).toBeGreaterThan(before.pages);
    }, 180_000);
  },
);
