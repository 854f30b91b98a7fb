import { classesOf, pretokenEnd } from './pretokens.js';
import { blocks, LONG, mergeShort, tokenByteLength } from './tokenizer.js';

/**
 * Where each o200k token of a text ends, in bytes of its UTF-8: what the chunker needs (token counts and
 * where to cut), without the token ids. The same tokens as core/tokenizer.ts's `encodePieces`: the text is
 * cut into pre-tokens (pretokens.ts), a pre-token of at most LONG units is merged as gpt-tokenizer merges
 * it and its tokens' byte lengths are remembered (natural text repeats its words: most pre-tokens are found in the
 * cache), a longer one is merged a block at a time as there.
 */

/**
 * Pre-tokens remembered, each with its tokens' byte lengths, in flat typed arrays: a slot holds the
 * pre-token's hash, where its entry starts in `pool` and its lengths; the entry is the pre-token's UTF-16
 * units followed by its tokens' byte lengths. A look-up reads the slot and one stretch of the pool (the
 * chunker makes one for every pre-token of a file; keys and values as strings and arrays cost a chase
 * through memory each). When full it starts over.
 */
class PieceCache {
  private slots = new Int32Array(4 * SLOTS).fill(-1);
  private pool = new Uint16Array(1 << 20);
  private used = 0;
  private entries = 0;

  /** Where `text[from, to)`'s token lengths start in `values()` (and how many, in `count`), or -1. */
  find(text: string, from: number, to: number, h: number): number {
    const slots = this.slots;
    const pool = this.pool;
    const length = to - from;
    for (let slot = h & (SLOTS - 1); ; slot = (slot + 1) & (SLOTS - 1)) {
      const at = slot * 4;
      if (slots[at] === -1) return -1 - slot;
      if (slots[at + 1] !== h || slots[at + 2] >>> 16 !== length) continue;
      let i = 0;
      const start = slots[at];
      while (i < length && pool[start + i] === text.charCodeAt(from + i)) i++;
      if (i === length) {
        this.count = slots[at + 2] & 0xffff;
        return start + length;
      }
    }
  }

  count = 0;
  values = () => this.pool;

  /** Remembers `lengths` for `text[from, to)` in the free slot `find` named (`-1 - slot`). */
  add(text: string, from: number, to: number, h: number, free: number, lengths: readonly number[]): void {
    const length = to - from;
    const need = length + lengths.length;
    if (length > 0xffff || lengths.length > 0xffff) return;
    if (this.used + need > this.pool.length && this.pool.length < MAX_POOL) {
      const grown = new Uint16Array(Math.max(this.pool.length * 2, this.used + need));
      grown.set(this.pool.subarray(0, this.used));
      this.pool = grown;
    }
    if (this.entries >= CAPACITY || this.used + need > this.pool.length) {
      if (need > this.pool.length) return;
      this.slots.fill(-1);
      this.used = 0;
      this.entries = 0;
      free = -1 - this.find(text, from, to, h);
    } else free = -1 - free;
    const start = this.used;
    for (let i = 0; i < length; i++) this.pool[start + i] = text.charCodeAt(from + i);
    for (let i = 0; i < lengths.length; i++) this.pool[start + length + i] = lengths[i];
    this.used += need;
    this.entries++;
    const at = free * 4;
    this.slots[at] = start;
    this.slots[at + 1] = h;
    this.slots[at + 2] = (length << 16) | lengths.length;
  }
}
/** Pre-tokens remembered at most, and slots (twice as many, a power of two). */
const CAPACITY = 200_000;
const SLOTS = 1 << 19;
/** The pool grows to this many units (16 MB) at most. */
const MAX_POOL = 1 << 23;
const cache = new PieceCache();
const lengthsOf = (piece: string): number[] => mergeShort(piece).map(tokenByteLength);

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
      let h = 0x811c9dc5;
      for (let i = p; i < e; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
      h ^= h >>> 15;
      let at = cache.find(text, p, e, h);
      let n = cache.count;
      let values: ArrayLike<number> = cache.values();
      if (at < 0) {
        const lengths = lengthsOf(text.slice(p, e));
        cache.add(text, p, e, h, at, lengths);
        values = lengths;
        at = 0;
        n = lengths.length;
      }
      for (let i = 0; i < n; i++) {
        if (count > max - 1) return undefined;
        push(values[at + i]);
      }
    }
    p = e;
  }
  return { ends, count };
}
