import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { tokenEnds } from './token-ends.js';
import { tokenByteLength } from './tokenizer.js';

/** Where gpt-tokenizer's tokens of `text` end, in bytes of its UTF-8. */
function referenceEnds(text: string): number[] {
  let at = 0;
  return encode(text, { disallowedSpecial: new Set() }).map((t) => (at += tokenByteLength(t)));
}

describe('token ends', () => {
  it('ends tokens where gpt-tokenizer does past the cache of pre-tokens starting over, and again from it', () => {
    let seed = 5;
    const r = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
    // More distinct pre-tokens (random words) than the cache holds (200,000), among repeated ones.
    const words: string[] = [];
    for (let i = 0; i < 230_000; i++) {
      let w = ' ';
      for (let j = 3 + Math.floor(r() * 6); j > 0; j--) w += String.fromCharCode(97 + Math.floor(r() * 26));
      words.push(w);
      if (i % 1000 === 0) words.push(' ünïcödé 日本語 😀\n the of and');
    }
    const text = words.join('');
    const expected = referenceEnds(text);
    for (let pass = 0; pass < 2; pass++) {
      const got = tokenEnds(text, 5_000_000)!;
      expect(got.count).toBe(expected.length);
      expect(Array.from(got.ends.subarray(0, got.count))).toEqual(expected);
    }
  });

  it('stops past the most tokens it may read', () => {
    expect(tokenEnds(' word'.repeat(100), 99)).toBeUndefined();
    expect(tokenEnds(' word'.repeat(100), 100)?.count).toBe(100);
  });
});
