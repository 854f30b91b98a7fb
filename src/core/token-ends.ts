import { classesOf, pretokenEnd } from './pretokens.js';
import { blocks, LONG, mergeLong, tokenByteLength } from './tokenizer.js';

/**
 * Where each o200k token of a text ends, in bytes of its UTF-8: what the chunker needs (token counts and
 * where to cut), without the token ids. The same tokens as core/tokenizer.ts's `encodePieces`: the text is
 * cut into pre-tokens (pretokens.ts), a pre-token of at most LONG units is merged as gpt-tokenizer merges
 * it and its tokens' byte lengths are remembered (natural text repeats its words: most pre-tokens are found in the
 * cache), a longer one is merged a block at a time as there.
 */

/** Pre-tokens remembered (each its tokens' byte lengths); when full, the older half is forgotten. */
const CACHE_SIZE = 200_000;
const cache = new Map<string, readonly number[]>();

function lengthsOf(piece: string): readonly number[] {
  let lengths = cache.get(piece);
  if (lengths === undefined) {
    if (cache.size >= CACHE_SIZE) forgetOlderHalf(cache);
    // The byte-pair merge gpt-tokenizer makes (mergeLong: the same merges, in the same order).
    lengths = mergeLong(piece).map(tokenByteLength);
    cache.set(piece, lengths);
  }
  return lengths;
}

/** Drops the first half of a map's entries (the longest there: a map keeps the order of insertion). */
export function forgetOlderHalf(map: Map<string, unknown>): void {
  let n = map.size >> 1;
  for (const key of map.keys()) {
    if (n-- <= 0) break;
    map.delete(key);
  }
}

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
  for (let p = 0; p < text.length; ) {
    const e = pretokenEnd(text, k, p);
    if (e - p > LONG) {
      for (const tokens of blocks(text.slice(p, e))) {
        for (const t of tokens) {
          if (count > max - 1) return undefined;
          push(tokenByteLength(t));
        }
      }
    } else {
      for (const length of lengthsOf(text.slice(p, e))) {
        if (count > max - 1) return undefined;
        push(length);
      }
    }
    p = e;
  }
  return { ends, count };
}
