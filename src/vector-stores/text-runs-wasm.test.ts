import { describe, expect, it } from 'vitest';
import { classesOf } from '../core/pretokens.js';
import { random } from '../../test/random.js';
import { embedKernel } from './embed-kernel.js';
import { embedBuiltin, embedChunks } from './embedder.js';
import { NO_ROOM, NOT_IN_TABLE, WasmText, wasmTextUnits } from './text-runs-wasm.js';
import { keyHash, WordFeatureCache } from './word-features.js';

// embedder.test.ts and ingest-equivalence.test.ts hold embedChunks (whose scan is this one, where the
// memory holds the text) to embedding each chunk alone, to the bit; these check the scan's own answers.

const scanned = (text: string, lowering = true) => {
  const t = WasmText.of(text, classesOf(text))!;
  const n = t.scan(lowering);
  return { t, n, runs: n >= 0 ? Array.from({ length: n }, (_, i) => Array.from(t.runs(n).subarray(5 * i, 5 * i + 5))) : [] };
};

/** The record at `base` as word-cache.c and text-runs.c made it: the word's hash, its feature's value and its trigrams' values. */
function recordAt(base: number) {
  const w = embedKernel();
  const words = new Int32Array(w.memory.buffer, w.words_at(), base + 3 + 48);
  const keys = new Uint32Array(w.memory.buffer, w.keys_at(), w.features());
  const grams = words[base + 1];
  return [words[base] >>> 0, keys[words[base + 2]], ...Array.from(words.subarray(base + 3, base + 3 + grams), (n) => keys[n])];
}

/** The same from word-features.ts, the JavaScript's word cache. */
function valuesOf(word: string) {
  const units = Uint16Array.from({ length: word.length }, (_, i) => word.charCodeAt(i));
  const cache = new WordFeatureCache();
  const entry = cache.find(units, 0, units.length, keyHash(units, 0, units.length));
  const start = cache.start(entry);
  return Array.from(cache.values().subarray(start, start + 2 + cache.grams(entry)));
}

describe('text-runs.c and word-cache.c', () => {
  it('finds the runs, lowercased in place, with their records, pairs and the word before', () => {
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
    // Records: hello at 0 (its hash, 5 trigrams, its feature, the trigrams'), world after it, `the` none (a
    // function word), x2 after world; hello again as met. Each holds the features word-features.ts gives.
    expect(runs.map((r) => r[2])).toEqual([0, 8, -1, 16, 0]);
    expect(recordAt(0)).toEqual(valuesOf('hello'));
    expect(recordAt(8)).toEqual(valuesOf('world'));
    expect(recordAt(16)).toEqual(valuesOf('x2'));
    // The word before each (the run's number; `the` is none) and the pairs: none for the first word, one feature each after.
    expect(runs.map((r) => r[4])).toEqual([-1, 0, 1, 1, 3]);
    const pairs = runs.map((r) => r[3]);
    expect([pairs[0], pairs[2]]).toEqual([-1, -1]);
    expect(new Set([pairs[1], pairs[3], pairs[4]]).size).toBe(3);
    // A word cut from a run (a chunk's edge) gets a record of its own; a pair asked again is the same feature.
    const cut = t.word(1, 5);
    expect(cut).toBe(21);
    expect(recordAt(cut)).toEqual(valuesOf('ello'));
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
    expect(recordAt(runs[1][2])).toEqual(valuesOf('𐐨x'));
  });

  it('takes no text its memory cannot hold, and answers NO_ROOM for one whose runs outgrow it; embedChunks then scans in JavaScript', () => {
    expect(WasmText.of('x'.repeat(wasmTextUnits() + 1), new Uint8Array(0))).toBeUndefined();
    // A run every two units: 20 bytes of run for 3 of text (units and classes), past the memory before the text's end.
    const text = 'b '.repeat(Math.floor(wasmTextUnits() / 2));
    expect(scanned(text).n).toBe(NO_ROOM);
    const chunks = [0, 1000, 4000].map((start) => ({ start, text: text.slice(start, start + 1500) }));
    const vectors = embedChunks(
      text,
      chunks,
      chunks.map((c) => c.start),
    );
    chunks.forEach((c, i) => expect(vectors.subarray(256 * i, 256 * i + 256)).toEqual(embedBuiltin(c.text)));
  });

  it('answers no vectors when the memory left after the scan cannot hold them (embedChunks then scans in JavaScript)', () => {
    const { t } = scanned('Hello world');
    const halves = new Float64Array(512);
    expect(t.sums(Int32Array.of(0, 0, 2, 0), 1, halves)?.length).toBe(256);
    expect(t.sums(Int32Array.of(0, 0, 2, 0), Math.ceil((12 * wasmTextUnits()) / 1024), halves)).toBeUndefined();
    // Counts whose bytes pass 2^32, which would wrap in the module's 32 bits.
    expect(t.sums(Int32Array.of(0, 0, 2, 0), 2 ** 22 + 1, halves)).toBeUndefined();
  });

  it('starts its word cache over when its pools are full, and embeds as before', () => {
    // 24,000 distinct words of 48 letters: more units than the cache's pool holds (2^20). Then a text of the
    // first of them, which the cache (started over, or not) must give as they are.
    const r = random(5);
    const words = Array.from({ length: 24_000 }, () =>
      Array.from({ length: 48 }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join(''),
    );
    for (const text of [words.join(' '), words.slice(0, 2_000).join(' ')]) {
      const chunks = Array.from({ length: 40 }, (_, i) => ({ start: i * 2_400, text: text.slice(i * 2_400, i * 2_400 + 2_000) }));
      const vectors = embedChunks(
        text,
        chunks,
        chunks.map((c) => c.start),
      );
      chunks.forEach((c, i) => expect(vectors.subarray(256 * i, 256 * i + 256)).toEqual(embedBuiltin(c.text)));
    }
  });
});
