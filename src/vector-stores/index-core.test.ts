import { describe, expect, it } from 'vitest';
import { embedBuiltin } from './embedder.js';
import { searchIndexes, StoreIndex, type FileMeta } from './index-core.js';
import { words } from './lexical.js';

const D = 256;

/** Adds files (id → chunk texts) to an index, as the server's thread hands them over. */
function add(index: StoreIndex, files: Record<string, string[]>, attributes: FileMeta['attributes'] = null): void {
  index.setFiles(Object.keys(files).map((id) => ({ id, filename: `${id}.txt`, attributes })));
  const fileIds: string[] = [];
  const seqs: number[] = [];
  const texts: string[] = [];
  for (const [id, chunks] of Object.entries(files))
    chunks.forEach((t, seq) => {
      fileIds.push(id);
      seqs.push(seq);
      texts.push(t);
    });
  const vectors = new Float32Array(texts.length * D);
  texts.forEach((t, i) => vectors.set(embedBuiltin(t), i * D));
  index.addChunks({ fileIds, seqs, texts, vectors, hasVector: new Uint8Array(texts.length).fill(1), dimensions: D });
}

const ask = (index: StoreIndex, q: string, ranker = 'auto') =>
  searchIndexes([index], [{ vector: embedBuiltin(q), words: words(q) }], { ranker, max: 50, threshold: 0 });

const corpus = (n: number, seed: number) => {
  const vocab = 'ferry harbour copper mine railway signal ledger bread oven valley river bridge tower lamp clock'.split(' ');
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  return Array.from({ length: n }, () => Array.from({ length: 12 }, () => vocab[next() % vocab.length]).join(' '));
};

describe('incremental store index', () => {
  it('scores BM25 in 0..1, highest for the chunk holding every query word', () => {
    const index = new StoreIndex();
    add(index, { a: ['quillport is the capital of zorbania'], b: ['zorbania exports copper'], c: ['bread ovens of the valley'] });
    const hits = ask(index, 'capital of Zorbania');
    expect(hits.map((h) => h.fileId)).toEqual(['a', 'b']);
    expect(hits[0].score).toBeLessThan(1);
  });

  it('keeps room in the postings a load made in one go: a file added after it copies none of them', () => {
    const index = new StoreIndex();
    add(index, { big: corpus(4_096, 7) });
    index.flush();
    const postings = () =>
      (index as unknown as { postings: { docs: Int32Array; tfs: Uint16Array }[] }).postings.map((p) => [p.docs, p.tfs]);
    const loaded = postings();
    add(index, { late: corpus(20, 8) });
    index.flush();
    const after = postings();
    expect(after.length).toBe(loaded.length);
    after.forEach(([docs, tfs], t) => {
      expect(docs).toBe(loaded[t][0]);
      expect(tfs).toBe(loaded[t][1]);
    });
    expect(ask(index, 'copper ferry').length).toBeGreaterThan(0);
  });

  it('answers after adds, removals and re-adds exactly as an index built from the surviving files', () => {
    const grown = new StoreIndex();
    const files: Record<string, string[]> = {};
    for (let f = 0; f < 40; f++) files[`file_${String(f).padStart(2, '0')}`] = corpus(60, f + 1);
    for (const [id, chunks] of Object.entries(files)) add(grown, { [id]: chunks });
    // Remove most files (a compaction runs: dead chunks outnumber the live ones), then re-add one changed.
    const removed = Object.keys(files).filter((_, i) => i % 4 !== 0);
    grown.removeFiles(removed);
    grown.removeFiles(['file_00']);
    add(grown, { file_00: corpus(30, 99) });
    const fresh = new StoreIndex();
    const surviving = Object.keys(files).filter((id) => !removed.includes(id) && id !== 'file_00');
    for (const id of surviving) add(fresh, { [id]: files[id] });
    add(fresh, { file_00: corpus(30, 99) });
    expect(grown.size).toBe(fresh.size);
    for (const q of ['copper ferry', 'clock tower lamp', 'bridge']) {
      const a = ask(grown, q);
      const b = ask(fresh, q);
      expect(a.map((h) => [h.fileId, h.seq])).toEqual(b.map((h) => [h.fileId, h.seq]));
      a.forEach((h, i) => expect(h.score).toBeCloseTo(b[i].score, 6));
      expect(a.every((h) => !removed.includes(h.fileId))).toBe(true);
    }
  });

  it('follows attribute changes in filters, and breaks ties by file and chunk', () => {
    const index = new StoreIndex();
    add(index, { b: ['same words here'], a: ['same words here'] }, { team: 'x' });
    expect(ask(index, 'same words').map((h) => h.fileId)).toEqual(['a', 'b']);
    index.setFiles([{ id: 'a', filename: 'a.txt', attributes: { team: 'y' } }]);
    const hits = searchIndexes([index], [{ vector: null, words: ['same'] }], {
      ranker: 'auto',
      filter: { type: 'eq', key: 'team', value: 'x' },
      max: 10,
      threshold: 0,
    });
    expect(hits.map((h) => h.fileId)).toEqual(['b']);
  });

  it('searches a large store through its coarse quantizer, finding what the full scan finds', () => {
    const exact = new StoreIndex(Infinity);
    const coarse = new StoreIndex(2000);
    const files: Record<string, string[]> = {};
    for (let f = 0; f < 30; f++) files[`f${String(f).padStart(2, '0')}`] = corpus(100, f + 7).map((t, i) => `${t} tag${f}x${i}`);
    for (const [id, chunks] of Object.entries(files)) {
      add(exact, { [id]: chunks });
      add(coarse, { [id]: chunks });
    }
    let same = 0;
    const asked = 60;
    for (let q = 0; q < asked; q++) {
      const f = (q * 7) % 30;
      const text = `${files[`f${String(f).padStart(2, '0')}`][(q * 13) % 100].split(' ').slice(2, 6).join(' ')}`;
      const a = ask(exact, text, 'none')[0];
      const b = ask(coarse, text, 'none')[0];
      if (a.fileId === b.fileId && a.seq === b.seq) same++;
    }
    // Approximate: most answers equal the full scan's (the quantizer probes 16 of its lists).
    expect(same / asked).toBeGreaterThan(0.8);
    // And a removal still takes the file out.
    coarse.removeFiles(['f03']);
    expect(ask(coarse, files.f03[5], 'none').every((h) => h.fileId !== 'f03')).toBe(true);
  });

  it('counts what it holds, and gives it back when files go', () => {
    const index = new StoreIndex();
    add(index, { a: corpus(2000, 7) });
    const full = index.bytes();
    expect(full).toBeGreaterThan(2000 * D * 4);
    index.removeFiles(['a']);
    expect(index.bytes()).toBeLessThan(full / 4);
  });
});

describe('approximate search of a large store', () => {
  // 5,000 chunks of 30 words from a skewed vocabulary of 400 (a few words in most chunks, most in few).
  const vocab = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}x`);
  let x = 12345;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const files: Record<string, string[]> = {};
  for (let f = 0; f < 50; f++)
    files[`f${String(f).padStart(2, '0')}`] = Array.from({ length: 100 }, () =>
      Array.from({ length: 30 }, () => vocab[Math.floor(vocab.length * next() ** 2.5)]).join(' '),
    );
  const queries = Array.from({ length: 80 }, (_, q) => {
    const chunk = files[`f${String(q % 50).padStart(2, '0')}`][(q * 37) % 100].split(' ');
    return [3, 11, 23].map((i) => chunk[(i + q) % 30]).join(' ');
  });
  const build = (approximateFrom: number, ids = Object.keys(files)) => {
    const index = new StoreIndex(approximateFrom);
    for (const id of ids) add(index, { [id]: files[id] });
    return index;
  };
  const key = (h: { fileId: string; seq: number }) => `${h.fileId}/${h.seq}`;
  /** Share of the exact top 5 found in the approximate top 5. */
  const recall = (exact: StoreIndex, approx: StoreIndex, ranker: string) => {
    let found = 0;
    for (const q of queries) {
      const want = ask(exact, q, ranker).slice(0, 5).map(key);
      const got = new Set(ask(approx, q, ranker).slice(0, 5).map(key));
      found += want.filter((k) => got.has(k)).length / want.length;
    }
    return found / queries.length;
  };
  const exact = build(Infinity);
  const approx = build(1000);

  it('stays exact below its threshold, and turns approximate at it', () => {
    expect(exact.approximate).toBe(false);
    expect(build(Infinity, ['f00', 'f01']).approximate).toBe(false);
    expect(approx.approximate).toBe(true);
    // int8 vectors: less than half what the exact index holds (words included).
    expect(approx.bytes()).toBeLessThan(exact.bytes() * 0.75);
  });

  it('finds by words alone exactly what the exact search finds, with the same scores', () => {
    // Three words, and a whole chunk's thirty (many postings walked and looked up at once); up to 50 results.
    const long = Array.from({ length: 20 }, (_, q) => files[`f${String((q * 7) % 50).padStart(2, '0')}`][(q * 11) % 100]);
    for (const [q, max] of [...queries.map((q) => [q, 10] as const), ...long.map((q) => [q, 50] as const)]) {
      const a = searchIndexes([exact], [{ vector: null, words: words(q) }], { ranker: 'auto', max, threshold: 0 });
      const b = searchIndexes([approx], [{ vector: null, words: words(q) }], { ranker: 'auto', max, threshold: 0 });
      expect(b.map(key)).toEqual(a.map(key));
      b.forEach((h, i) => expect(h.score).toBeCloseTo(a[i].score, 5));
    }
  });

  it('keeps the hybrid top 5 of the exact search', () => {
    expect(recall(exact, approx, 'auto')).toBeGreaterThan(0.95);
    // The vector half alone reads only the quantizer's nearest lists.
    expect(recall(exact, approx, 'none')).toBeGreaterThan(0.6);
  });

  it('follows removals, compaction and re-adds', () => {
    const grown = build(1000);
    const removed = Object.keys(files).filter((_, i) => i % 3 !== 0);
    grown.removeFiles(removed);
    grown.removeFiles(['f00']);
    add(grown, { f00: files.f01 });
    const survivors = Object.keys(files).filter((id) => !removed.includes(id) && id !== 'f00');
    const fresh = build(Infinity, survivors);
    add(fresh, { f00: files.f01 });
    expect(grown.size).toBe(fresh.size);
    expect(grown.approximate).toBe(true);
    for (const q of queries) expect(ask(grown, q).every((h) => !removed.includes(h.fileId))).toBe(true);
    // By words alone, past the removed chunks still in the postings: what the exact index of the survivors finds.
    for (const q of queries) {
      const a = searchIndexes([fresh], [{ vector: null, words: words(q) }], { ranker: 'auto', max: 20, threshold: 0 });
      const b = searchIndexes([grown], [{ vector: null, words: words(q) }], { ranker: 'auto', max: 20, threshold: 0 });
      expect(b.map((h) => h.score.toFixed(5))).toEqual(a.map((h) => h.score.toFixed(5)));
    }
    expect(recall(fresh, grown, 'auto')).toBeGreaterThan(0.95);
    const filtered = (index: StoreIndex) =>
      searchIndexes([index], [{ vector: embedBuiltin(queries[0]), words: words(queries[0]) }], {
        ranker: 'auto',
        filter: { type: 'eq', key: 'team', value: 'x' },
        max: 10,
        threshold: 0,
      });
    expect(filtered(grown)).toEqual([]);
    grown.setFiles([{ id: 'f00', filename: 'f00.txt', attributes: { team: 'x' } }]);
    expect(filtered(grown).length).toBeGreaterThan(0);
    expect(filtered(grown).every((h) => h.fileId === 'f00')).toBe(true);
  });
});
