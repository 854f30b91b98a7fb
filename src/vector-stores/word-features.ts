import { pieceHash } from '../core/piece-cache.js';
import { isWordRun } from './lexical.js';

/**
 * What the built-in embedder (embedder.ts) takes from each word: its hash, its feature and its character
 * trigrams' features, remembered per word in flat typed arrays like core/piece-cache.ts's pre-tokens. The
 * embedder looks up every word of a file; a cache of strings and objects (each with an array of its own)
 * cost a chase through memory a look-up, and the look-ups were a quarter of the embedder's time on new text.
 */

/** murmur3's finalizer: every bit of the result depends on every bit of the input. */
export function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

// Different starting points keep words, word pairs and trigrams apart.
const WORD_SEED = 0x811c9dc5;
export const PAIR_SEED = 0x2545f491;
const GRAM_SEED = 0x9e3779b9;
/** `#`, a trigram's mark of a word's edge. */
const MARK = 0x23;

/** 32-bit FNV-1a over the UTF-16 units `units[from, to)`, starting from `seed`. */
function fnv(units: Uint16Array, from: number, to: number, seed: number): number {
  let h = seed;
  for (let i = from; i < to; i++) h = Math.imul(h ^ units[i], 0x01000193);
  return h;
}

/** The hash `find` takes: the pre-token cache's hash of a stretch of units (a slot's index and check, never stored). */
export const keyHash = pieceHash;

/** Words remembered at most (then it starts over), and slots (a power of two, at least twice as many). */
const CAPACITY = 100_000;
const SLOTS = 1 << 18;
/** Per entry: its key's start in `chars`, its length, its values' start in `values()`, its trigrams (-1: no word). */
const STRIDE = 4;

/**
 * Runs of letters and digits (of a lowercased text) remembered, each with its features or as no word of
 * lexical.ts's `words` (a function word). A slot holds an entry's index plus one and its key's hash; an
 * entry its key's place in one pool of UTF-16 units and its values' place in one pool of 32-bit values:
 * the word's FNV-1a hash, its feature (the hash mixed), then one feature per trigram of `#word#`. A run
 * longer than lexical.ts LONGEST is no word and is not looked up. When full it starts over: an entry's index is good
 * until the next `find`'s miss.
 */
export class WordFeatureCache {
  private slots = new Int32Array(2 * SLOTS);
  private entries = new Int32Array(STRIDE * CAPACITY);
  private chars = new Uint16Array(1 << 16);
  private charsUsed = 0;
  private pool = new Uint32Array(1 << 16);
  private poolUsed = 0;
  private size = 0;

  /**
   * The entry of `units[from, to)` (the UTF-16 units of a lowercased run of letters and digits, at most
   * lexical.ts LONGEST, with `h = keyHash(units, from, to)`), made on a miss; -1 for no word.
   */
  find(units: Uint16Array, from: number, to: number, h: number): number {
    const length = to - from;
    const slots = this.slots;
    const entries = this.entries;
    const chars = this.chars;
    for (let slot = h & (SLOTS - 1); ; slot = (slot + 1) & (SLOTS - 1)) {
      const entry = slots[2 * slot] - 1;
      if (entry < 0) return this.make(units, from, to, h, slot);
      if (slots[2 * slot + 1] !== h) continue;
      const at = entry * STRIDE;
      if (entries[at + 1] !== length) continue;
      const start = entries[at];
      let i = 0;
      while (i < length && chars[start + i] === units[from + i]) i++;
      if (i === length) return entries[at + 3] < 0 ? -1 : entry;
    }
  }

  /** Where the entry's values start in `values()`: its hash, its feature, then `grams(entry)` trigram features. */
  start = (entry: number): number => this.entries[entry * STRIDE + 2];
  /** How many trigram features the entry has (the word's length). */
  grams = (entry: number): number => this.entries[entry * STRIDE + 3];
  values = (): Uint32Array => this.pool;
  private make(units: Uint16Array, from: number, to: number, h: number, slot: number): number {
    if (this.size === CAPACITY) {
      this.slots.fill(0);
      this.size = 0;
      this.charsUsed = 0;
      this.poolUsed = 0;
      slot = h & (SLOTS - 1);
    }
    const length = to - from;
    const isWord = isWordRun(units, from, to);
    if (this.charsUsed + length > this.chars.length) this.chars = grown(this.chars, this.charsUsed + length);
    const need = isWord ? 2 + length : 0;
    if (this.poolUsed + need > this.pool.length) this.pool = grown(this.pool, this.poolUsed + need);
    const entry = this.size++;
    const at = entry * STRIDE;
    this.entries[at] = this.charsUsed;
    this.entries[at + 1] = length;
    this.entries[at + 2] = this.poolUsed;
    this.entries[at + 3] = isWord ? length : -1;
    this.chars.set(units.subarray(from, to), this.charsUsed);
    this.charsUsed += length;
    this.slots[2 * slot] = entry + 1;
    this.slots[2 * slot + 1] = h;
    if (!isWord) return -1;
    const p = this.pool;
    let u = this.poolUsed;
    const hash = fnv(units, from, to, WORD_SEED);
    p[u++] = hash;
    p[u++] = mix(hash);
    // The trigrams of `#w#`: the first and last take the marks.
    for (let j = 0; j < length; j++) {
      let g = GRAM_SEED;
      for (let i = j; i < j + 3; i++) g = Math.imul(g ^ (i === 0 || i === length + 1 ? MARK : units[from + i - 1]), 0x01000193);
      p[u++] = mix(g);
    }
    this.poolUsed = u;
    return entry;
  }
}

/**
 * `a` in a new array of at least `need` (twice its length, or more): the pools here grow to CAPACITY ×
 * lexical.ts LONGEST at most; the embedder's sums grow with a text's distinct features.
 */
export function grown<A extends Uint16Array | Uint32Array | Int32Array | Float64Array>(a: A, need: number): A {
  const b = new (a.constructor as new (n: number) => A)(Math.max(need, 2 * a.length));
  b.set(a);
  return b;
}
