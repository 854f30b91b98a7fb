import { describe, expect, it } from 'vitest';
import { decodeTokens } from '../core/tokenizer.js';
import { AUTO_CHUNKING, chunkText, tokenize, type Chunking } from './chunk.js';
import { BUILTIN_DIMENSIONS, embedBuiltin, embedChunks, normalize } from './embedder.js';
import { words } from './lexical.js';
import { random } from '../../test/random.js';

// The chunker and the built-in embedder are made fast (pre-tokens by a scan, cached token lengths, cached
// word features); their output is part of the contract (stored chunks and vectors, search). Both are held
// here against plain reference implementations: windows over the tokenizer's ids decoded, and the
// embedder as first written (a Map of features).

/** The chunks as first written: windows over all token ids, each decoded. */
function* referenceChunks(text: string, chunking: Chunking) {
  const ids = tokenize(text);
  const step = Math.max(1, chunking.max_chunk_size_tokens - chunking.chunk_overlap_tokens);
  for (let start = 0; start < ids.length; start += step) {
    const end = Math.min(start + chunking.max_chunk_size_tokens, ids.length);
    yield { text: decodeTokens(ids.slice(start, end)).replace(/^\uFFFD+|\uFFFD+$/g, ''), tokens: end - start };
    if (end === ids.length) return;
  }
}

function fnv(s: string, from: number, to: number, seed: number): number {
  let h = seed;
  for (let i = from; i < to; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
/** The built-in embedder as first written. */
function referenceEmbedding(text: string): Float32Array {
  const features = new Map<number, number>();
  const add = (f: number, w: number) => features.set(f, (features.get(f) ?? 0) + w);
  const ws = words(text);
  let previous = 0;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i];
    const hw = fnv(w, 0, w.length, 0x811c9dc5);
    add(mix(hw), 1);
    if (i > 0) add(mix(Math.imul(previous, 31) ^ hw ^ 0x2545f491), 0.5);
    previous = hw;
    const marked = `#${w}#`;
    const grams = marked.length - 2;
    for (let j = 0; j < grams; j++) add(mix(fnv(marked, j, j + 3, 0x9e3779b9)), 0.5 / grams);
  }
  const v = new Float32Array(BUILTIN_DIMENSIONS);
  for (const [h, count] of features) {
    const weight = count >= 1 ? 1 + Math.log(count) : count;
    v[h & (BUILTIN_DIMENSIONS - 1)] += h & 0x80000000 ? -weight : weight;
  }
  return normalize(v);
}

const PIECES = [
  'The quick brown fox jumps over the lazy dog. ',
  "It's 2026: the run's 1,234,567 tokens cost $12.50 (or 11,90 €)!\n\n",
  '    indented code { return a[i] + b[j]; }\r\n',
  'Ünïcödé wörds, 日本語のテキスト。中文文本，한국어 텍스트. ',
  'ΟΔΥΣΣΕΥΣ ΚΑΙ ΟΔΥΣΣΕΑΣ, ελληνικά και Ελληνικά; русский ТЕКСТ; עברית; العربية; हिन्दी ',
  'URLs like https://example.com/a/b?c=d&e=f#g and emails a.b@c.de; ',
  'CamelCaseWords ALLCAPS MixedUP and  double  spaces\ttabs\t\n',
  'emoji 😀👍🏽🇳🇴 and <|endoftext|> look-alikes. 𝐀𝐁𝐂 𝑎𝑏𝑐 ',
  'İstanbul ǅemal ǈubljana straße ſ ᾈ \u0301\u0903 ',
  'a'.repeat(700),
  '語'.repeat(300),
  '[['.repeat(200),
  ' '.repeat(300),
  'x'.repeat(60) + ' ',
  'function f(a,b){return a.map((x)=>x*b).filter(Boolean);}\n',
];
function varied(seed: number, n: number): string {
  const r = random(seed);
  let s = '';
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(r() * PIECES.length)];
  return s;
}
const CHUNKINGS: Chunking[] = [
  AUTO_CHUNKING,
  { max_chunk_size_tokens: 100, chunk_overlap_tokens: 0 },
  { max_chunk_size_tokens: 37, chunk_overlap_tokens: 11 },
  { max_chunk_size_tokens: 100, chunk_overlap_tokens: 7 },
];

describe('chunks and vectors identical to the reference', () => {
  it.each([1, 2, 3, 4, 5])('chunks varied text %i as the reference does, byte for byte', (seed) => {
    const text = varied(seed, 400);
    for (const chunking of CHUNKINGS) expect([...chunkText(text, chunking)]).toEqual([...referenceChunks(text, chunking)]);
  });

  it('chunks short texts, one character and a long run of one word as the reference does', () => {
    for (const text of ['', 'a', '語', '😀', ' ', 'A short note.', 'x'.repeat(300_000), '日本語のテキスト。'.repeat(60)]) {
      for (const chunking of CHUNKINGS) expect([...chunkText(text, chunking)]).toEqual([...referenceChunks(text, chunking)]);
    }
  });

  it('embeds every chunk of varied text to the same vector, to the bit', () => {
    for (const seed of [1, 2, 3]) {
      for (const chunk of chunkText(varied(seed, 300), { max_chunk_size_tokens: 200, chunk_overlap_tokens: 50 })) {
        const a = embedBuiltin(chunk.text);
        const b = referenceEmbedding(chunk.text);
        expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
      }
    }
    for (const text of ['', 'the of and', 'Σ ΟΔΥΣΣΕΥΣ', 'a'.repeat(49), 'b'.repeat(48), '𝐀𝐁𝐂 😀 x1y2', 'İ i̇ I ı']) {
      expect(Buffer.from(embedBuiltin(text).buffer).equals(Buffer.from(referenceEmbedding(text).buffer))).toBe(true);
    }
  });

  it('embeds the chunks of a whole text (embedChunks) as each chunk alone, to the bit', () => {
    const texts = [1, 2, 3].flatMap((seed) => {
      const text = varied(seed, 200);
      // Without İ and Σ the whole text's lowercasing is used; with them, chunk by chunk.
      return [text, text.replace(/[\u0130\u03a3]/g, 'x')];
    });
    texts.push(
      '日本語のテキスト。'.repeat(60),
      '😀👍🏽 word '.repeat(200),
      'ſtraße Straße '.repeat(100),
      'lone \ud800 half \udc00x pairs'.repeat(80),
      '',
    );
    for (const text of texts) {
      for (const chunking of [...CHUNKINGS, { max_chunk_size_tokens: 5, chunk_overlap_tokens: 2 }]) {
        const starts: number[] = [];
        const chunks = [...chunkText(text, chunking, starts)];
        expect(starts).toHaveLength(chunks.length);
        const all = embedChunks(text, chunks, starts);
        expect(all).toHaveLength(chunks.length * BUILTIN_DIMENSIONS);
        const each = new Float32Array(all.length);
        chunks.forEach((c, i) => each.set(embedBuiltin(c.text), i * BUILTIN_DIMENSIONS));
        expect(Buffer.from(all.buffer).equals(Buffer.from(each.buffer))).toBe(true);
      }
    }
  });

  it('embeds the chunks of a text with more distinct words than the word cache holds as the reference does, to the bit', () => {
    // 120,000 distinct words (the cache holds 100,000: it starts over within the text), among repeated ones,
    // in mixed case, with runs of digits and runs too long to be words that chunk edges cut.
    const r = random(11);
    const parts: string[] = [];
    for (let i = 0; i < 120_000; i++) {
      let w = '';
      for (let j = 2 + Math.floor(r() * 7); j > 0; j--) w += String.fromCharCode(97 + Math.floor(r() * 26));
      parts.push(r() < 0.1 ? w.toUpperCase() : w, r() < 0.3 ? ' the ' : r() < 0.05 ? ` ${'z'.repeat(60)}${i} ` : ' ');
      if (i % 9 === 0) parts.push('quick brown fox ');
    }
    const text = parts.join('');
    const starts: number[] = [];
    const chunks = [...chunkText(text, { max_chunk_size_tokens: 400, chunk_overlap_tokens: 150 }, starts)];
    const all = embedChunks(text, chunks, starts);
    chunks.forEach((c, i) => {
      const want = referenceEmbedding(c.text);
      expect(Buffer.from(all.buffer, i * BUILTIN_DIMENSIONS * 4, BUILTIN_DIMENSIONS * 4).equals(Buffer.from(want.buffer))).toBe(true);
    });
    // After a text that large the embedder's arrays start small again: the next texts embed as before.
    for (const small of ['The quick brown fox.', varied(4, 20)]) {
      expect(Buffer.from(embedBuiltin(small).buffer).equals(Buffer.from(referenceEmbedding(small).buffer))).toBe(true);
    }
  });
});
