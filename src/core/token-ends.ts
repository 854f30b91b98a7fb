import { classesOf, pretokenEnd } from './pretokens.js';
import { RegionCache } from './region-cache.js';
import { blocks, LONG, mergeShort, tokenByteLength } from './tokenizer.js';

/**
 * Where each o200k token of a text ends, in bytes of its UTF-8: what the chunker needs (token counts and
 * where to cut), without the token ids. The same tokens as core/tokenizer.ts's `encodePieces`: the text is
 * cut into pre-tokens (pretokens.ts), a pre-token of at most LONG units is merged as gpt-tokenizer merges
 * it and its tokens' byte lengths are remembered (natural text repeats its words: most pre-tokens are found in the
 * cache), a longer one is merged a block at a time as there.
 */

/** Pre-tokens remembered, each with its tokens' byte lengths. */
const cache = new RegionCache<readonly number[]>(200_000);
const lengthsOf = (piece: string): readonly number[] => mergeShort(piece).map(tokenByteLength);

/**
 * The end of each token (`ends[i]`, in bytes from the text's start) and how many there are; undefined as
 * soon as the text holds more than `max` tokens (it stops reading there).
 */
export function tokenEnds(text: string, max: number): { ends: Uint32Array; count: number } | undefined {
  let ends = new Uint32Array(Math.min(max + 1, 1024 + (text.length >> 2)));
  let count = 0;
  let at = 0;
  const push = (length: number) => {
    if (count === ends.length) {
      const grown = new Uint32Array(Math.min(max + 1, ends.length * 2));
      grown.set(ends);
      ends = grown;
    }
    ends[count++] = at += length;
  };
  const k = classesOf(text);
  for (let p = 0; p < text.length;) {
    const e = pretokenEnd(text, k, p);
    if (e - p > LONG) {
      for (const tokens of blocks(text.slice(p, e))) {
        for (const t of tokens) {
          if (count > max - 1) return undefined;
          push(tokenByteLength(t));
        }
      }
    } else {
      for (const length of cache.get(text, p, e, lengthsOf)) {
        if (count > max - 1) return undefined;
        push(length);
      }
    }
    p = e;
  }
  return { ends, count };
}
