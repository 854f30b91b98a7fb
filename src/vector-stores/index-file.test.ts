import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { embedBuiltin } from './embedder.js';
import { searchIndexes, StoreIndex } from './index-core.js';
import { prepareDir, restoreIndex, saveIndex, savedPath, type SavedIdentity } from './index-file.js';
import { words } from './lexical.js';

const D = 256;
const dir = mkdtempSync(join(tmpdir(), 'standin-index-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const vocab = 'ferry harbour copper mine railway signal ledger bread oven valley river bridge tower lamp clock'.split(' ');
function chunks(n: number, seed: number): string[] {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  return Array.from({ length: n }, (_, i) => Array.from({ length: 12 }, () => vocab[next() % vocab.length]).join(' ') + ` tag${seed}x${i}`);
}

function add(index: StoreIndex, files: Record<string, string[]>): void {
  index.setFiles(Object.keys(files).map((id) => ({ id, filename: `${id}.txt`, attributes: { team: id.length % 2 ? 'a' : 'b' } })));
  const fileIds: string[] = [];
  const seqs: number[] = [];
  const texts: string[] = [];
  for (const [id, cs] of Object.entries(files))
    cs.forEach((t, seq) => {
      fileIds.push(id);
      seqs.push(seq);
      texts.push(t);
    });
  const vectors = new Float32Array(texts.length * D);
  texts.forEach((t, i) => vectors.set(embedBuiltin(t), i * D));
  index.addChunks({ fileIds, seqs, texts, vectors, hasVector: new Uint8Array(texts.length).fill(1), dimensions: D });
}

/** An index of `files` files of `per` chunks, some files removed (dead slots kept: fewer than the live ones). */
function built(approximateFrom: number, files: number, per: number): StoreIndex {
  const index = new StoreIndex(approximateFrom);
  for (let f = 0; f < files; f++) add(index, { [`file-${String(f).padStart(3, '0')}`]: chunks(per, f + 1) });
  index.removeFiles(['file-003', 'file-007']);
  index.flush();
  return index;
}

const QUERIES = ['copper ferry', 'clock tower lamp', 'bridge over the river', 'tag5x17', 'ledger oven signal harbour'];
const answers = (index: StoreIndex) =>
  QUERIES.flatMap((q) => [
    searchIndexes([index], [{ vector: embedBuiltin(q), words: words(q) }], { ranker: 'auto', max: 20, threshold: 0 }),
    searchIndexes([index], [{ vector: null, words: words(q) }], {
      ranker: 'auto',
      max: 20,
      threshold: 0,
      filter: { type: 'eq', key: 'team', value: 'a' },
    }),
  ]);

const who: SavedIdentity = { store: 'vs_saved1', createdAt: 1_700_000_000, source: '0123456789abcdef', embedder: 'builtin:test' };
const at = { version: 42, fingerprint: 'f00' };
const path = savedPath(dir, who.source, who.store);

describe('saved search indexes (index-file.ts)', () => {
  it('a saved index answers every search as the index it was saved from, before and after later changes', async () => {
    expect(await prepareDir(dir)).toBeNull();
    for (const [mode, approximateFrom, files, per] of [
      ['exact', Infinity, 20, 40],
      // Past the quantizer's 4,096 vectors: it is trained, the slots are in list order, and saved with them.
      ['approximate', 1000, 50, 100],
    ] as const) {
      const index = built(approximateFrom, files, per);
      expect(index.approximate, mode).toBe(approximateFrom !== Infinity);
      expect(await saveIndex(path, who, at, index, 1 << 30, () => true)).toBe(true);
      const r = await restoreIndex(path, who, 1 << 30, approximateFrom);
      if ('refused' in r) throw new Error(r.refused);
      expect(r).toMatchObject({ version: 42, fingerprint: 'f00' });
      expect(r.index.size).toBe(index.size);
      expect(r.index.approximate).toBe(index.approximate);
      // The quantizer came along (trained: 4,800 vectors), its lists as they were.
      const lists = (x: StoreIndex) => (x as unknown as { ivf: { lists: { len: number }[] } | null }).ivf?.lists.map((l) => l.len);
      expect(lists(r.index)).toEqual(lists(index));
      if (mode === 'approximate') expect(lists(index)?.length).toBe(1024);
      expect(answers(r.index)).toEqual(answers(index));
      // The same changes to both: a file re-read, another removed, one added.
      for (const x of [index, r.index]) {
        x.removeFiles(['file-001', 'file-002']);
        add(x, { 'file-001': chunks(30, 77), 'file-new': chunks(25, 78) });
      }
      expect(answers(r.index)).toEqual(answers(index));
      // And a compaction (dead slots outnumber the live ones).
      const most = Array.from({ length: files - 4 }, (_, f) => `file-${String(f + 4).padStart(3, '0')}`);
      for (const x of [index, r.index]) x.removeFiles(most);
      expect(answers(r.index)).toEqual(answers(index));
      expect(r.index.size).toBe(index.size);
    }
  }, 120_000);

  it('gives up a save when the index changes while it is written, and leaves no file', async () => {
    rmSync(path, { force: true });
    const index = built(Infinity, 10, 20);
    const saving = saveIndex(path, who, at, index, 1 << 30, () => true);
    add(index, { 'file-late': chunks(5, 9) });
    expect(await saving).toBe(false);
    expect(existsSync(path)).toBe(false);
    // Nor when the store was dropped meanwhile, or the file would pass the memory budget.
    expect(await saveIndex(path, who, at, index, 1 << 30, () => false)).toBe(false);
    expect(await saveIndex(path, who, at, index, 10_000, () => true)).toBe(false);
    expect(existsSync(path)).toBe(false);
  });

  describe('refuses a truncated, corrupt, foreign or crafted file (the store is then loaded from its rows)', () => {
    const refusal = async (bytes: Buffer, as: SavedIdentity = who, maxBytes = 1 << 30, approximateFrom = Infinity) => {
      writeFileSync(path, bytes);
      const r = await restoreIndex(path, as, maxBytes, approximateFrom);
      return 'refused' in r ? r.refused : 'accepted';
    };
    let good: Buffer;
    const header = (b: Buffer) => JSON.parse(b.subarray(16, 16 + b.readUInt32LE(8)).toString()) as Record<string, unknown>;
    /** The file with its header changed and its checksums made right again (what an attacker can do). */
    const forged = (edit: (h: Record<string, unknown>, body: Buffer) => void) => {
      const b = Buffer.from(good);
      const body = b.subarray(4096);
      const h = header(b);
      edit(h, body);
      h.crc = crc32(body);
      const json = Buffer.from(JSON.stringify(h));
      b.fill(0x20, 16, 4096);
      b.writeUInt32LE(json.length, 8);
      b.writeUInt32LE(crc32(json), 12);
      json.copy(b, 16);
      return b;
    };
    /** The byte offset in the body of an array, by walking the header's layout. */
    const sectionAt = (h: Record<string, unknown>, name: string) => {
      const n = h.n as number;
      const d = h.dimensions as number;
      const e = h.entries as number;
      const sizes: [string, number][] = [
        ['vectors', n * d * 4],
        ['hasVector', n],
        ['alive', n],
        ['fileOf', n * 4],
        ['seqs', n * 4],
        ['lengths', n * 4],
        ['termStart', (n + 1) * 4],
        ['slotTerms', e * 4],
      ];
      let off = 0;
      for (const [k, size] of sizes) {
        if (k === name) return off;
        off += Math.ceil(size / 8) * 8;
      }
      throw new Error(name);
    };

    it('accepts the file as written', async () => {
      expect(await saveIndex(path, who, at, built(Infinity, 10, 20), 1 << 30, () => true)).toBe(true);
      good = readFileSync(path);
      expect(await refusal(good)).toBe('accepted');
    });

    it('a flipped byte, a cut file, a flipped header byte', async () => {
      const flipped = Buffer.from(good);
      flipped[4096 + Math.floor((flipped.length - 4096) / 2)] ^= 0x10;
      expect(await refusal(flipped)).toMatch(/checksum/);
      expect(await refusal(good.subarray(0, good.length - 100))).toMatch(/size/);
      expect(await refusal(good.subarray(0, 100))).toMatch(/truncated/);
      const head = Buffer.from(good);
      head[20] ^= 0x01;
      expect(await refusal(head)).toMatch(/header/);
      expect(await refusal(Buffer.alloc(8192))).toMatch(/not a saved index/);
    });

    it("another store's, database's, embedder's or format's file", async () => {
      expect(await refusal(good, { ...who, store: 'vs_other' })).toMatch(/another store/);
      expect(await refusal(good, { ...who, createdAt: who.createdAt + 1 })).toMatch(/another store/);
      expect(await refusal(good, { ...who, source: 'fedcba9876543210' })).toMatch(/another store/);
      expect(await refusal(good, { ...who, embedder: 'upstream:x' })).toMatch(/another embedder/);
      expect(await refusal(forged((h) => (h.format = 2)))).toMatch(/format 2/);
      // Saved exact, read by an instance that searches the store approximately.
      expect(await refusal(good, who, 1 << 30, 1)).toMatch(/approximate-from/);
    });

    it('lengths that would allocate huge arrays, a file past the memory budget', async () => {
      for (const edit of [
        (h: Record<string, unknown>) => (h.n = 2 ** 31 - 2),
        (h: Record<string, unknown>) => (h.dimensions = 65_536),
        (h: Record<string, unknown>) => (h.entries = 2 ** 40),
        (h: Record<string, unknown>) => (h.n = -1),
        (h: Record<string, unknown>) => (h.terms = 1e300),
        (h: Record<string, unknown>) => (h.ivfSlots = 5),
      ])
        expect(await refusal(forged(edit))).toMatch(/size|header/);
      expect(await refusal(good, who, good.length - 1)).toMatch(/budget/);
    });

    it('arrays that point outside each other, with checksums made right', async () => {
      const int32 = (name: string, value: number) => forged((h, body) => body.writeInt32LE(value, sectionAt(h, name) + 4 * 3));
      expect(await refusal(int32('slotTerms', 1 << 30))).toMatch(/words of chunk/);
      expect(await refusal(int32('slotTerms', -5))).toMatch(/words of chunk/);
      expect(await refusal(int32('fileOf', 99_999))).toMatch(/chunk 3/);
      expect(await refusal(int32('termStart', 0x7fffffff))).toMatch(/word offsets/);
      expect(await refusal(forged((h, body) => (body[sectionAt(h, 'alive') + 2] = 7)))).toMatch(/chunk 2/);
      // A chunk counted alive in a file that was removed (the removed files' slots are dead).
      const removed = forged((h, body) => body.fill(1, sectionAt(h, 'alive'), sectionAt(h, 'alive') + (h.n as number)));
      expect(await refusal(removed)).toMatch(/removed file/);
      // A word of the table written again as one no chunk could hold (a capital), or as another word of it.
      const word = (to: string) =>
        forged((_, body) => {
          const at = body.indexOf('\nharbour\n');
          expect(at).toBeGreaterThan(0);
          body.write(to, at + 1);
        });
      expect(await refusal(word('Harbour'))).toMatch(/word table/);
      expect(await refusal(word('railway'))).toMatch(/word table/);
    });

    it('keeps no file it could not read whole (a directory of the name, none at all)', async () => {
      rmSync(path, { force: true });
      expect(await restoreIndex(path, who, 1 << 30, Infinity)).toEqual({ refused: 'none saved' });
      expect(() => savedPath(dir, who.source, '../etc/passwd')).toThrow();
      expect(() => savedPath(dir, '../x', who.store)).toThrow();
      expect(statSync(dir).mode & 0o077).toBe(0);
    });
  });
});
