import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AUTO_CHUNKING, chunkText } from './chunk.js';
import { BUILTIN_DIMENSIONS, BUILTIN_ID, embedBuiltin, embedChunks, fromBlob, toBlob } from './embedder.js';
import { words } from './lexical.js';

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

  it('reads words lowercased, without punctuation and function words', () => {
    expect(words('The Capital, of ZORBANIA!')).toEqual(['capital', 'zorbania']);
  });
});
