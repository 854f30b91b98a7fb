import { describe, expect, it } from 'vitest';
import { BUILTIN_DIMENSIONS, embedBuiltin, fromBlob, toBlob } from './embedder.js';
import { words } from './lexical.js';

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

  it('reads words lowercased, without punctuation and function words', () => {
    expect(words('The Capital, of ZORBANIA!')).toEqual(['capital', 'zorbania']);
  });
});
