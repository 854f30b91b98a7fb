import { describe, expect, it } from 'vitest';
import { classesOf } from '../core/pretokens.js';
import { AUTO_CHUNKING, chunkText } from './chunk.js';
import { wasmMemoryBytes } from './chunk-sums-wasm.js';
import { embedBuiltin, embedChunks } from './embedder.js';
import { NO_ROOM, NOT_IN_TABLE, WasmText, type WordFeatures } from './text-runs-wasm.js';
import { WordFeatureCache } from './word-features.js';

// embedder.test.ts and ingest-equivalence.test.ts hold embedChunks (whose scan is this one, where the
// memory holds the text) to embedding each chunk alone, to the bit; these check the scan's own answers.

const cache = new WordFeatureCache();
const asked: string[] = [];
const wordFeatures: WordFeatures = (units, from, to, h, found) => {
  asked.push(String.fromCharCode(...units.subarray(from, to)));
  const entry = cache.find(units, from, to, h);
  if (entry < 0) return -1;
  const grams = cache.grams(entry);
  found.set(cache.values().subarray(cache.start(entry), cache.start(entry) + 2 + grams));
  return grams;
};
const scanned = (text: string, lowering = true) => {
  const t = WasmText.of(text, classesOf(text), wordFeatures)!;
  const n = t.scan(lowering);
  return { t, n, runs: n >= 0 ? Array.from({ length: n }, (_, i) => Array.from(t.runs(n).subarray(5 * i, 5 * i + 5))) : [] };
};

describe('text-runs.c', () => {
  it('finds the runs, lowercased in place, with their records, pairs and the word before; asks the cache once a word', () => {
    asked.length = 0;
    const { t, n, runs } = scanned('Hello, WORLD the X2 hello');
    expect(n).toBe(5);
    expect(String.fromCharCode(...t.units)).toBe('hello, world the x2 hello');
    expect(runs.map(([start, end]) => [start, end])).toEqual([
      [0, 5],
      [7, 12],
      [13, 16],
      [17, 19],
      [20, 25],
    ]);
    // Records: hello at 0 (its hash, 5 trigrams, its feature, the trigrams'), world after it, `the` none, x2 after world; hello again as met.
    expect(runs.map((r) => r[2])).toEqual([0, 8, -1, 16, 0]);
    // The word before each (the run's number; `the` is none) and the pairs: none for the first word, one feature each after.
    expect(runs.map((r) => r[4])).toEqual([-1, 0, 1, 1, 3]);
    const pairs = runs.map((r) => r[3]);
    expect(pairs[0]).toBe(-1);
    expect(pairs[2]).toBe(-1);
    expect(new Set([pairs[1], pairs[3], pairs[4]]).size).toBe(3);
    expect(pairs.every((p) => p >= -1)).toBe(true);
    // The second hello is found among the runs met; a word cut from one is asked for (a chunk's edge).
    expect(asked).toEqual(['hello', 'world', 'the', 'x2']);
    expect(t.word(1, 5)).toBeGreaterThan(16);
    expect(asked.at(-1)).toBe('ello');
    expect(t.pair(0, 8)).toBe(pairs[1]);
  });

  it('answers NOT_IN_TABLE for a run holding a unit the table leaves out, and reads units lowercased already', () => {
    // A Deseret letter: a surrogate pair, its lowercase past the BMP.
    const text = 'Río 𐐀x Straße';
    expect(scanned(text).n).toBe(NOT_IN_TABLE);
    const lower = text.toLowerCase();
    const { runs } = scanned(lower, false);
    // The pair's two units are one run with the letter after them.
    expect(runs.map(([start, end]) => lower.slice(start, end))).toEqual(['río', '𐐨x', 'straße']);
  });

  it('takes no text its memory cannot hold, and answers NO_ROOM for one whose runs outgrow it; embedChunks then scans in JavaScript', () => {
    expect(WasmText.of('x'.repeat(wasmMemoryBytes() / 12 + 1), new Uint8Array(0), wordFeatures)).toBeUndefined();
    // A run every two units: 20 bytes of run for 3 of text (units and classes), past the memory before the text's end.
    const text = 'b '.repeat(Math.floor(wasmMemoryBytes() / 12 / 2));
    expect(scanned(text).n).toBe(NO_ROOM);
    const starts: number[] = [];
    const chunks = [...chunkText(text.slice(0, 30_000), AUTO_CHUNKING, starts)].slice(0, 3);
    const vectors = embedChunks(text, chunks, starts);
    chunks.forEach((c, i) => expect(vectors.subarray(256 * i, 256 * i + 256)).toEqual(embedBuiltin(c.text)));
  });
});
