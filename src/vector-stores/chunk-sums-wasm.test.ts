import { describe, expect, it } from 'vitest';
import { wasmChunkSums, wasmMemoryBytes } from './chunk-sums-wasm.js';

// embedder.test.ts and ingest-equivalence.test.ts hold embedChunks, which plans the chunks and has them
// summed here, to embedding each chunk alone; these check the kernel's own arithmetic on plans made by hand.

/** A feature's weight from its sum (embedder.ts): 1 + ln sum from 1 on. */
const weightOf = (count: number) => (count >= 1 ? 1 + Math.log(count) : count);
const HALVES = Float64Array.from({ length: 512 }, (_, i) => weightOf(i / 2));

/** The vector of a chunk's additions (feature, weight), made as the embedder makes it: sums in the order met, then each weight hashed to one of 256 dimensions with a sign, and normalized. */
function vectorOf(adds: [number, number][], keys: Uint32Array): Float32Array {
  const sums = new Map<number, number>();
  for (const [f, w] of adds) sums.set(f, (sums.get(f) ?? 0) + w);
  const v = new Float32Array(256);
  for (const [n, count] of sums) v[keys[n] & 255] += keys[n] >>> 31 ? -weightOf(count) : weightOf(count);
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return norm > 0 ? v.map((x) => x / norm) : v;
}

/** The additions of a word: its record's feature (1), its pair (0.5), its trigrams (0.5 shared). */
const addsOf = (words: Int32Array, base: number, pair: number): [number, number][] => [
  [words[base + 2], 1],
  ...(pair >= 0 ? [[pair, 0.5] as [number, number]] : []),
  ...Array.from(words.subarray(base + 3, base + 3 + words[base + 1]), (f): [number, number] => [f, 0.5 / words[base + 1]]),
];

describe('chunk-sums.c', () => {
  // Two words: records at 0 (its hash, 3 trigrams: features 1, 2, 3; the word's feature 0) and at 6
  // (2 trigrams: features 2 and 4; the word's feature 5). Pairs are features 6 and 7.
  const words = Int32Array.of(11, 3, 0, 1, 2, 3, 22, 2, 5, 2, 4);
  const keys = Uint32Array.of(0x8000_0001, 2, 0x8000_0003, 3, 260, 7, 0x8000_0007, 9);
  // Runs (start, end, record, pair, kept before): the first word, the second after it, a run that is no word, the first again.
  const runs = Int32Array.of(0, 3, 0, -1, -1, 4, 6, 6, 6, 0, 7, 9, -1, -1, 1, 10, 13, 0, 7, 1);
  const features = { words, wordsUsed: words.length, keys, count: keys.length };

  it('sums each chunk as planned, in one call: words before and after the runs, and the runs between as the text has them', () => {
    const plan = Int32Array.of(
      // Chunk 0: runs 0 to 4 as found.
      0,
      0,
      4,
      0,
      // Chunk 1: the second word without its pair, runs 2 and 3, then the first word cut (as the second word's record) with pair 6.
      1,
      6,
      -1,
      2,
      4,
      1,
      6,
      6,
    );
    const vectors = wasmChunkSums(plan, 2, runs, features, HALVES)!;
    // Chunk 0: the first word, the second with pair 6, the first with pair 7 (trigram 2 shared, and dimension 3 holding two features).
    const first = [...addsOf(words, 0, -1), ...addsOf(words, 6, 6), ...addsOf(words, 0, 7)];
    expect(vectors.subarray(0, 256)).toEqual(vectorOf(first, keys));
    const second = [...addsOf(words, 6, -1), ...addsOf(words, 0, 7), ...addsOf(words, 6, 6)];
    expect(vectors.subarray(256, 512)).toEqual(vectorOf(second, keys));
    expect(vectors.subarray(0, 256)).not.toEqual(vectors.subarray(256, 512));
  });

  it('weighs a sum past the table with Math.log, and leaves every sum at zero for the next call', () => {
    // The first word eight times: the word's sum 8 (the table's weight), its trigrams' 8/6 (Math.log's).
    const eight = Int32Array.of(0, 0, 1, 0).subarray(0, 4);
    const plan = new Int32Array(4 * 8);
    for (let i = 0; i < 8; i++) plan.set(eight, 4 * i);
    // Eight chunks of one word each, then one chunk of eight words: each chunk starts from zero.
    const alone = wasmChunkSums(plan, 8, runs, features, HALVES)!;
    for (let c = 0; c < 8; c++) expect(alone.subarray(256 * c, 256 * c + 256)).toEqual(alone.subarray(0, 256));
    const many = Int32Array.of(8, ...Array.from({ length: 8 }, () => [0, -1]).flat(), 0, 0, 0);
    const summed = wasmChunkSums(many, 1, runs, features, HALVES)!;
    // Trigram sums of 8/6: neither whole nor half.
    expect(summed).toEqual(vectorOf(Array.from({ length: 8 }, () => addsOf(words, 0, -1)).flat(), keys));
    expect(summed).not.toEqual(alone.subarray(0, 256));
  });

  it('answers undefined for a text its memory cannot hold', () => {
    const many = new Int32Array(wasmMemoryBytes() / 4);
    expect(wasmChunkSums(Int32Array.of(0, 0, 0, 0), 1, many, features, HALVES)).toBeUndefined();
    expect(wasmChunkSums(Int32Array.of(0, 0, 0, 0), 1, runs, features, HALVES)).toEqual(new Float32Array(256));
  });
});
