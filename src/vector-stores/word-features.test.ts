import { describe, expect, it } from 'vitest';
import { isStopword, LONGEST, LONGEST_STOPWORD, words } from './lexical.js';
import { keyHash, mix, WordFeatureCache } from './word-features.js';

/** 32-bit FNV-1a over the UTF-16 units of `s[from, to)` from `seed`, made from the string: the cache makes it from units. */
function fnv(s: string, from: number, to: number, seed: number): number {
  let h = seed;
  for (let i = from; i < to; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/** What the cache should hold for a word: its hash, its feature, the features of the trigrams of `#w#`. */
function expected(w: string): number[] {
  const hash = fnv(w, 0, w.length, 0x811c9dc5) >>> 0;
  const marked = `#${w}#`;
  return [hash, mix(hash), ...Array.from({ length: w.length }, (_, j) => mix(fnv(marked, j, j + 3, 0x9e3779b9)))];
}

function valuesOf(cache: WordFeatureCache, entry: number): number[] {
  const start = cache.start(entry);
  return Array.from(cache.values().subarray(start, start + 2 + cache.grams(entry)));
}

function find(cache: WordFeatureCache, text: string, from: number, to: number): number {
  const units = Uint16Array.from({ length: text.length }, (_, i) => text.charCodeAt(i));
  return cache.find(units, from, to, keyHash(units, from, to));
}

describe('the word cache of the built-in embedder', () => {
  it('finds a word from any text holding it, with its features, and no features for what is no word', () => {
    const cache = new WordFeatureCache();
    const a = find(cache, 'capital city', 0, 7);
    expect(a).toBeGreaterThanOrEqual(0);
    expect(valuesOf(cache, a)).toEqual(expected('capital'));
    expect(find(cache, 'the capital', 4, 11)).toBe(a);
    expect(valuesOf(cache, find(cache, 'x1', 0, 2))).toEqual(expected('x1'));
    // Function words and runs longer than lexical.ts keeps are no words, as `words` has it.
    expect(words('the')).toEqual([]);
    expect(find(cache, 'the', 0, 3)).toBe(-1);
    expect(find(cache, 'the', 0, 3)).toBe(-1);
    expect(find(cache, 'q'.repeat(LONGEST + 1), 0, LONGEST + 1)).toBe(-1);
    expect(valuesOf(cache, find(cache, 'q'.repeat(LONGEST), 0, LONGEST))).toEqual(expected('q'.repeat(LONGEST)));
  });

  it('tells words from function words as `words` does, in every script', () => {
    const cache = new WordFeatureCache();
    const runs = [
      ...'a an the which would there their'.split(' '),
      ...'ab abc abcde abcdef zzzzz 0 42 2026 x86 utf8'.split(' '),
      // Not ASCII: lowercase letters and digits of other scripts, and marks (`words` decides these).
      ...'straße café ﬁle ǆ привет ελλάδα ٣٤ ۱۲ 東京 ｆｕｌｌ e\u0301'.split(' '),
    ];
    expect(LONGEST_STOPWORD).toBe(Math.max(...runs.filter(isStopword).map((w) => w.length)));
    for (const w of runs) {
      const e = find(cache, w, 0, w.length);
      const isWord = words(w).length === 1 && words(w)[0] === w;
      expect(e >= 0, w).toBe(isWord);
      if (isWord) expect(valuesOf(cache, e), w).toEqual(expected(w));
      // Found again, the same.
      expect(find(cache, `(${w})`, 1, w.length + 1), w).toBe(e);
    }
  });

  it('keys a word by FNV-1a over its units, folded', () => {
    for (const w of ['capital', 'x', 'straße', '東京']) {
      const units = Uint16Array.from({ length: w.length }, (_, i) => w.charCodeAt(i));
      const h = fnv(w, 0, w.length, 0x811c9dc5);
      expect(keyHash(units, 0, w.length), w).toBe(h ^ (h >>> 15));
    }
  });

  it('starts over when full and gives the same features after', () => {
    const cache = new WordFeatureCache();
    const ws = Array.from({ length: 230_000 }, (_, i) => `w${i.toString(36)}`);
    for (const pass of [0, 1]) {
      for (let i = pass; i < ws.length; i += 997) {
        const w = ws[i];
        const e = find(cache, w, 0, w.length);
        expect(valuesOf(cache, e)).toEqual(expected(w));
      }
      // Fill it past its capacity (100,000 words) between the passes.
      for (const w of ws) find(cache, w, 0, w.length);
    }
  });
});
