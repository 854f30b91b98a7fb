import { describe, expect, it } from 'vitest';
import { BUILTIN_DIMENSIONS, embedBuiltin, fromBlob, toBlob } from './embedder.js';
import { addBm25, buildLexicalIndex, words } from './lexical.js';

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

describe('built-in embedder and lexical ranking', () => {
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

  it('scores BM25 in 0..1, highest for the chunk holding every query word', () => {
    const docs = ['quillport is the capital of zorbania', 'zorbania exports copper', 'bread ovens of the valley'].map(words);
    const index = buildLexicalIndex(docs);
    const out = new Float32Array(docs.length);
    addBm25(index, words('capital of Zorbania'), 1, out);
    expect(out[0]).toBeGreaterThan(out[1]);
    expect(out[1]).toBeGreaterThan(0);
    expect(out[2]).toBe(0);
    expect(Math.max(...out)).toBeLessThan(1);
    expect(words('The Capital, of ZORBANIA!')).toEqual(['capital', 'zorbania']);
  });
});
