import { describe, expect, it } from 'vitest';
import { random } from '../../test/random.js';
import { words } from './lexical.js';
import { Terms } from './terms.js';

// What `words` tells apart: cases, digits, function words in any case, runs past LONGEST (48 units), marks,
// letters past the BMP, a lone half of a surrogate pair, emoji, CJK, Σ and İ (whose lowercase is not one
// unit a unit), NUL, and what is no letter.
const PIECES = [
  'a',
  'Z',
  'é',
  'É',
  'ß',
  'ǅ',
  '7',
  '٣',
  'the',
  'The',
  'WHICH',
  'whom',
  'would',
  'x'.repeat(48),
  'Y'.repeat(49),
  ' ',
  '\n',
  '.',
  "'",
  '-',
  '_',
  '\u0301',
  '𝐀',
  '𝐚',
  '\ud835',
  '\udc00',
  '😀',
  '日本',
  'Σ',
  'σ',
  'İ',
  '\u0000',
  '\u00a0',
  'Кириллица',
  'retrieval',
  'BM25',
];

/** The words termsOf gave, as strings. */
function wordsOf(terms: Terms, text: string): string[] {
  const n = terms.termsOf(text);
  return Array.from(terms.ids.subarray(0, n), (t) => terms.word(t));
}

describe('Terms', () => {
  it("reads a text's words as lexical.ts `words` does, with a term each, numbered in the order first met", () => {
    const r = random(38);
    const terms = new Terms();
    const ids = new Map<string, number>();
    for (let i = 0; i < 600; i++) {
      const text = Array.from({ length: 1 + Math.floor(r() * 60) }, () => PIECES[Math.floor(r() * PIECES.length)]).join(
        r() < 0.5 ? ' ' : '',
      );
      const expected = words(text);
      expect(wordsOf(terms, text), JSON.stringify(text)).toEqual(expected);
      // The same word always the same term; a new one the next.
      const n = terms.termsOf(text);
      expected.forEach((w, j) => {
        if (!ids.has(w)) ids.set(w, ids.size);
        expect(terms.ids[j]).toBe(ids.get(w));
      });
      expect(n).toBe(expected.length);
    }
    expect(terms.size).toBe(ids.size);
    for (const [w, t] of ids) expect(terms.id(w)).toBe(t);
    expect(terms.id('zorbania')).toBe(-1);
    expect(terms.id('the')).toBe(-1);
  });

  it("grows past its first sizes, and takes a saved index's words only once each and only words", () => {
    const terms = new Terms();
    const text = Array.from({ length: 20_000 }, (_, i) => `z${i.toString(36)}`).join(' ');
    expect(terms.termsOf(text)).toBe(20_000);
    expect(terms.size).toBe(20_000);
    expect(terms.word(19_999)).toBe(`z${(19_999).toString(36)}`);
    expect(terms.id('z0')).toBe(0);

    const saved = new Terms();
    expect(['zorbania', 'río', '日本'].map((w) => saved.add(w))).toEqual([0, 1, 2]);
    // A word twice, a function word, a capital, two words, an empty or overlong run: none is a saved index's word.
    for (const w of ['río', 'the', 'Río', 'two words', '', 'x'.repeat(49)]) expect(saved.add(w), w).toBe(-1);
    expect(wordsOf(saved, 'Río ZORBANIA the new')).toEqual(['río', 'zorbania', 'new']);
    expect(saved.termsOf('Río ZORBANIA the new')).toBe(3);
    expect(Array.from(saved.ids.subarray(0, 3))).toEqual([1, 0, 3]);
  });
});
