import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { classesOf, LETTER, NUMBER, SECOND } from '../core/pretokens.js';
import { AUTO_CHUNKING, chunkText } from './chunk.js';
import { BUILTIN_DIMENSIONS, BUILTIN_ID, embedBuiltin, embedChunks, fromBlob, toBlob } from './embedder.js';
import { lowerCased, words } from './lexical.js';
import { wasmMemoryBytes } from './chunk-sums-wasm.js';
import { random } from '../../test/random.js';

// Made by the embedder as it was before stop 60's change to its vectors' sums (which kept them to the bit).
const [BUILTIN_ID_PINNED, CHUNKS_PINNED, DIGEST_PINNED] = [
  'builtin:hashed-ngrams-256-v1',
  25,
  'fd3305d58187ff305fcc258fe892c6a879b61e9e08b436abf6eac55af976cc95',
];

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

describe('built-in embedder and words', () => {
  it('makes deterministic unit vectors that put related texts closer', () => {
    const a = embedBuiltin('The capital of Zorbania is Quillport.');
    expect(a.length).toBe(BUILTIN_DIMENSIONS);
    expect(embedBuiltin('The capital of Zorbania is Quillport.')).toEqual(a);
    expect(cos(a, a)).toBeCloseTo(1, 5);
    const q = embedBuiltin('What is the capital city of Zorbania?');
    expect(cos(q, a)).toBeGreaterThan(cos(q, embedBuiltin('Copper mines and railway signals are described in the ledger.')));
    expect(Array.from(embedBuiltin(''))).toEqual(new Array(BUILTIN_DIMENSIONS).fill(0));
  });

  it('stores vectors as bytes and reads them back', () => {
    const v = embedBuiltin('round trip');
    const blob = toBlob(v);
    expect(fromBlob(Buffer.concat([Buffer.alloc(1), blob]).subarray(1))).toEqual(v);
  });

  it('keeps its vectors to the bit: stored chunks stay comparable with the queries of a newer Standin', () => {
    // A text of every case the embedder meets: repeated and rare words, pairs, numbers, accents, another
    // script, an emoji, words longer than a trigram's edge, a function word; long enough for many chunks.
    let seed = 11;
    const r = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
    const vocabulary = [
      'the',
      'capital',
      'Zorbania',
      'quillport',
      'río',
      'naïve',
      '日本語',
      '😀',
      '2026',
      'x',
      'internationalization',
      'of',
      'Cats',
      'cat',
    ];
    const text = Array.from({ length: 6000 }, (_, i) => vocabulary[Math.floor(r() ** 2 * vocabulary.length)] + (i % 17 ? ' ' : '.\n')).join(
      '',
    );
    const starts: number[] = [];
    const chunks = [...chunkText(text, AUTO_CHUNKING, starts)];
    const vectors = embedChunks(text, chunks, starts);
    const digest = createHash('sha256').update(Buffer.from(vectors.buffer));
    for (const c of chunks) digest.update(toBlob(embedBuiltin(c.text)));
    // Changing these bytes changes every stored vector's meaning: give the embedder a new BUILTIN_ID with it.
    expect([BUILTIN_ID, chunks.length, digest.digest('hex')]).toEqual([BUILTIN_ID_PINNED, CHUNKS_PINNED, DIGEST_PINNED]);
  });

  it("embeds a text's chunks with the text's own character classes, which are the lowercased text's", () => {
    // embedChunks takes the classes the tokenizer made of the text for those of the text lowercased: for
    // every code point whose lowercase is as long (the others, and a text with a contextual case, take
    // another path), its lowercase is one code point of the same class, letter or number.
    const from: string[] = [];
    const to: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      const lower = ch.toLowerCase();
      if (lower.length !== ch.length) continue;
      from.push(ch);
      to.push(lower);
    }
    const bits = (k: Uint8Array) => Array.from(k, (c) => (c === SECOND ? SECOND : c & (LETTER | NUMBER)));
    expect(from.length).toBeGreaterThan(1_100_000);
    expect(bits(classesOf(from.join('')))).toEqual(bits(classesOf(to.join(''))));
    const text = 'Río NAÏVE Straße 日本語 😀 ΣΟΦΊΑ 2026 İstanbul '.repeat(400);
    const starts: number[] = [];
    const chunks = [...chunkText(text, { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 }, starts)];
    expect(embedChunks(text, chunks, starts, classesOf(text))).toEqual(embedChunks(text, chunks, starts));
    const plain = text.replaceAll('İ', 'I').replaceAll('Σ', 'S');
    const plainStarts: number[] = [];
    const plainChunks = [...chunkText(plain, { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 }, plainStarts)];
    expect(embedChunks(plain, plainChunks, plainStarts, classesOf(plain))).toEqual(embedChunks(plain, plainChunks, plainStarts));
  });

  it("lowercases a text unit by unit as toLowerCase does, and leaves to it the characters whose case is not one unit's", () => {
    const lowered = (text: string) => {
      const units = lowerCased(text);
      return units && Buffer.from(units.buffer, units.byteOffset, units.byteLength).toString('utf16le');
    };
    // Every unit of the Basic Multilingual Plane but the surrogates, İ, Σ and U+0000, each between letters and after a space.
    const units: string[] = [];
    for (let c = 1; c < 0x10000; c++) if ((c & 0xf800) !== 0xd800 && c !== 0x130 && c !== 0x3a3) units.push(String.fromCharCode(c));
    const every = units.map((u) => `a${u}B ${u}`).join('');
    expect(lowered(every)).toBe(every.toLowerCase());
    // Those the table leaves out: toLowerCase, kept where it is one unit a unit and no case depends on a neighbour.
    expect(lowered('ÀB 𐐀 Ǆ\u0000x')).toBe('àb 𐐨 ǆ\u0000x');
    expect(lowered('İstanbul')).toBeUndefined();
    expect(lowered('ΣΟΦΊΑ')).toBeUndefined();
    expect(lowered('')).toBe('');
    // The vectors of a text lowercased by the table are those of each chunk embedded alone (toLowerCase).
    const text = 'Río NAÏVE Straße ŁÓDŹ Ωμέγα Кириллица 日本語 2026 Ǆemal '.repeat(300);
    expect(lowered(text)).toBe(text.toLowerCase());
    const starts: number[] = [];
    const chunks = [...chunkText(text, { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 }, starts)];
    const vectors = embedChunks(text, chunks, starts);
    chunks.forEach((c, i) => expect(vectors.subarray(i * BUILTIN_DIMENSIONS, (i + 1) * BUILTIN_DIMENSIONS)).toEqual(embedBuiltin(c.text)));
  });

  it("embeds the chunks of a text of many features as each chunk alone: the text's table of features grows past its first size", () => {
    // 12,000 made-up words, a few common and most rare: far more features than the table's 4,096 first
    // numbers, and a common word's met in every chunk, before and after the table grew.
    let seed = 7;
    const r = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
    const vocabulary = Array.from({ length: 12_000 }, () => `w${Math.floor(r() * 1e9).toString(36)}`);
    const text = Array.from({ length: 50_000 }, () => vocabulary[Math.floor(r() ** 3 * vocabulary.length)]).join(' ');
    const starts: number[] = [];
    const chunks = [...chunkText(text, AUTO_CHUNKING, starts)];
    const vectors = embedChunks(text, chunks, starts);
    chunks.forEach((c, i) => expect(vectors.subarray(i * BUILTIN_DIMENSIONS, (i + 1) * BUILTIN_DIMENSIONS)).toEqual(embedBuiltin(c.text)));
  });

  it("embeds the chunks of a text too large for the WebAssembly's memory in JavaScript, as each chunk alone, one holding İ too", () => {
    // A run of letters a word: more runs than the memory holds at 20 bytes each (their place, record, pair
    // and the word before), so chunk-sums-wasm.ts answers undefined and embedChunks adds them itself.
    const r = random(11);
    const letter = () => String.fromCharCode(97 + Math.floor(r() * 26));
    const count = Math.ceil(wasmMemoryBytes() / 20) + 1000;
    // An İ now and then: the text is lowercased unit by unit, the chunks holding one embedded alone.
    const text = Array.from({ length: count }, (_, i) => letter() + letter() + (i % 13 ? ' ' : i % 100_000 ? '.\n' : 'İ\n')).join('');
    const starts: number[] = [];
    const chunks = [...chunkText(text, AUTO_CHUNKING, starts)];
    const vectors = Buffer.from(embedChunks(text, chunks, starts).buffer);
    // Compared as bytes (3,700 chunks): the first chunk that differs, if any.
    const bytes = 4 * BUILTIN_DIMENSIONS;
    expect(chunks.findIndex((c, i) => !toBlob(embedBuiltin(c.text)).equals(vectors.subarray(i * bytes, (i + 1) * bytes)))).toBe(-1);
  });

  it('embeds a text with emoji between its words, and one with letters past the BMP, as each chunk alone', () => {
    // Emoji are no letters: the runs are lowercased from the table as they are read. A Deseret letter (its
    // lowercase past the BMP too) is two units the table leaves out: the text is lowercased whole first.
    for (const text of ['Río 😀 NAÏVE Straße, ŁÓDŹ 🚀 Ωμέγα 2026. '.repeat(200), 'Río NAÏVE 𐐀𐐁x Straße 😀 2026. '.repeat(200)]) {
      const starts: number[] = [];
      const chunks = [...chunkText(text, { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 }, starts)];
      const vectors = embedChunks(text, chunks, starts);
      chunks.forEach((c, i) =>
        expect(vectors.subarray(i * BUILTIN_DIMENSIONS, (i + 1) * BUILTIN_DIMENSIONS)).toEqual(embedBuiltin(c.text)),
      );
    }
  });

  it('embeds a text holding İ or Σ as each chunk alone: the chunks without one planned, those with one embedded alone', () => {
    // İ's lowercase is two units and Σ's depends on what follows, so the text is not lowercased whole: its
    // chunks that hold neither are planned from its units lowercased one by one, the others embedded alone.
    const prose = 'Río NAÏVE Straße, ŁÓDŹ Ωμέγα 2026 copper ships north. '.repeat(150);
    for (const odd of [' İSTANBUL ', ' ΟΔΥΣΣΕΥΣ ', ' 😀İ ']) {
      const text = prose + odd + prose + odd.trim() + prose;
      const starts: number[] = [];
      const chunks = [...chunkText(text, { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 }, starts)];
      const vectors = embedChunks(text, chunks, starts);
      expect(chunks.filter((c) => /[İΣ]/.test(c.text)).length).toBeGreaterThan(1);
      chunks.forEach((c, i) =>
        expect(vectors.subarray(i * BUILTIN_DIMENSIONS, (i + 1) * BUILTIN_DIMENSIONS)).toEqual(embedBuiltin(c.text)),
      );
    }
  });

  it('embeds chunks given in any order, overlapping or not, as each alone', () => {
    const text = 'Zorbania exports copper; Quillport ships it north. '.repeat(60);
    const starts: number[] = [];
    const chunks = [...chunkText(text, { max_chunk_size_tokens: 40, chunk_overlap_tokens: 15 }, starts)];
    const order = chunks.map((_, i) => i).reverse();
    order.push(3, 0, 7);
    const vectors = embedChunks(
      text,
      order.map((i) => chunks[i]),
      order.map((i) => starts[i]),
    );
    order.forEach((c, i) =>
      expect(vectors.subarray(i * BUILTIN_DIMENSIONS, (i + 1) * BUILTIN_DIMENSIONS)).toEqual(embedBuiltin(chunks[c].text)),
    );
  });

  it('reads words lowercased, without punctuation and function words', () => {
    expect(words('The Capital, of ZORBANIA!')).toEqual(['capital', 'zorbania']);
  });
});
