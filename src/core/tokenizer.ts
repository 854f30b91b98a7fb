import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type * as Tokenizer from 'gpt-tokenizer';
import { lazy } from '../store/lazy.js';
import { PieceCache, pieceHash } from './piece-cache.js';
import { classesOf, pretokenEnd, warmClasses } from './pretokens.js';
import { WASM_UNITS, wasmTokenEnds } from './token-ends-wasm.js';
import { decodeVocabulary, rankOf, vocabularyOfRanks, type Vocabulary } from './vocabulary.js';

/**
 * The o200k tokenizer, in time linear in the text, for every count, truncation and chunking in Standin:
 * gpt-tokenizer's tokens exactly, but for a token or two at each block edge of a pre-token over BLOCK
 * characters.
 *
 * The text is cut into pre-tokens by a scan over a table of character classes (pretokens.ts: the pieces
 * of gpt-tokenizer's regex, at a tenth of its cost). A pre-token of at most LONG units is looked up in a
 * cache of pre-tokens with their tokens (piece-cache.ts: natural text repeats its words), and merged on a
 * miss; a longer one is merged a BLOCK at a time with a heap. gpt-tokenizer merged every pre-token by
 * rescanning all its pairs for the lowest rank and splicing two arrays at every merge: O(n²) in the
 * pre-token's length, where a run without spaces (`aaaa…`, `[[[[…`, one emoji repeated) is one pre-token:
 * 16 K characters took a second, 150 K half a minute, on the event loop.
 *
 * The ranks are vocabulary.ts's typed arrays, read from the file the build writes beside the bundle.
 * gpt-tokenizer itself is loaded only to name a special token being decoded, and its module of ranks only
 * where the build's file is absent (a run from the sources).
 */
const library = lazy<typeof Tokenizer>('gpt-tokenizer');
const ranksFile = lazy<{ default: readonly (string | readonly number[] | undefined)[] }>('gpt-tokenizer/bpeRanks/o200k_base');

/** Pre-tokens longer than this (UTF-16 units) are merged in blocks with a heap, and not remembered. */
const LONG = 256;
/** Tokens are handed out in pieces of about this many UTF-16 units of text, so a caller can stop early. */
const SEGMENT = 65_536;
/**
 * A longer pre-token is merged in blocks of this many UTF-16 units: the merge holds about 40 bytes per
 * byte of its input, so a block costs at most ~30 MB, and a caller can stop after one. A block edge may
 * shift the count by a token or two from a whole merge's — on 256 K characters.
 */
const BLOCK = 262_144;
/** Pre-tokens of more bytes than this are merged with the heap (mergeLong), shorter ones by rescanning (mergeShort). */
const SHORT_BYTES = 48;

/** Where the build writes the ranks (dist/o200k.bin, beside the bundle); from the sources there is none. */
const FILE = new URL('./o200k.bin', import.meta.url);

let vocab: Vocabulary | undefined;
/** The ranks: the build's file, or else (or if it is not one) gpt-tokenizer's module. Immutable, shared by every Standin of the process. */
export function vocabulary(): Vocabulary {
  if (vocab) return vocab;
  try {
    vocab = decodeVocabulary(readFileSync(FILE));
  } catch {
    vocab = vocabularyOfRanks(ranksFile().default);
  }
  return vocab;
}

/**
 * Loads the ranks and the pre-tokenizer's classes ahead of the first use, off the start path. The ranks'
 * file (4.5 MB) is read off the server's thread, and taken as it is; without it (a run from the sources,
 * a file of another build) they are made from gpt-tokenizer's module.
 */
export const warmTokenizer = () => {
  warmClasses();
  readFile(FILE)
    .then((file) => {
      vocab ??= decodeVocabulary(file);
    })
    .catch(() => vocabulary());
};

const cache = new PieceCache();

/** UTF-16 units a window holds: a segment, and the longest pre-token the cache takes past its end. */
const WINDOW = SEGMENT + LONG;
/**
 * A stretch of the text being tokenized as UTF-16 units, copied a window at a time into one array
 * (`Buffer.write` as UTF-16: a copy of the units, lone surrogates as they are): the cache's hash and
 * compares read a typed array, which took 4–10 % less of the token ends' time than `charCodeAt` on the
 * string (the same pre-tokens, one process). Memory stays one window whatever the text's length.
 */
const stretch = { from: 0, to: 0, bytes: Buffer.allocUnsafeSlow(2 * WINDOW) };
const stretchUnits = new Uint16Array(stretch.bytes.buffer, stretch.bytes.byteOffset, WINDOW);
/**
 * Empties the stretch: called as a text's tokenizing starts, and as encodePieces resumes (another text may
 * have been tokenized meanwhile), so a look-up checks its bounds alone.
 */
const restart = () => void (stretch.to = stretch.from = 0);

/**
 * The tokens of the pre-token `text[p, e)` (at most LONG units), from the cache or merged and remembered:
 * `cache.count` of them in the cache's pool, read with `tokenAt` two units apart from the returned index.
 */
function lookUp(text: string, p: number, e: number): number {
  if (p < stretch.from || e > stretch.to) {
    stretch.to = Math.min(text.length, p + WINDOW);
    stretch.bytes.write(text.slice(p, stretch.to), 0, 'utf16le');
    stretch.from = p;
  }
  const from = p - stretch.from;
  const to = e - stretch.from;
  const h = pieceHash(stretchUnits, from, to);
  const at = cache.find(stretchUnits, from, to, h);
  return at >= 0 ? at : cache.add(stretchUnits, from, to, h, at, merge(text, p, e));
}
/** The token at `at` of the cache's pool. */
const tokenAt = (pool: Uint16Array, at: number) => pool[at] | (pool[at + 1] << 16);

/** The tokens of `text`, in order, a bounded piece at a time. */
export function* encodePieces(text: string): Generator<number[]> {
  if (!text) return;
  const k = classesOf(text);
  let out: number[] = [];
  let from = 0;
  restart();
  for (let p = 0; p < text.length;) {
    const e = pretokenEnd(text, k, p);
    if (e - p > LONG) {
      if (out.length) yield out;
      out = [];
      yield* blocks(text.slice(p, e));
      restart();
      from = e;
    } else {
      const at = lookUp(text, p, e);
      const pool = cache.values();
      for (let i = 0, n = cache.count; i < n; i++) out.push(tokenAt(pool, at + 2 * i));
      if (e - from >= SEGMENT) {
        yield out;
        restart();
        out = [];
        from = e;
      }
    }
    p = e;
  }
  if (out.length) yield out;
}

/** The tokens of one long pre-token, merged a BLOCK at a time (never between a surrogate pair). */
function* blocks(piece: string): Generator<number[]> {
  for (let at = 0; at < piece.length;) {
    let end = Math.min(at + BLOCK, piece.length);
    if (end < piece.length && (piece.charCodeAt(end) & 0xfc00) === 0xdc00) end--;
    yield mergeLong(at === 0 && end === piece.length ? piece : piece.slice(at, end));
    at = end;
  }
}

/**
 * Where each token of a text ends, in bytes of its UTF-8, and how many there are: what the chunker needs
 * (vector-stores/chunk.ts), without the token ids. Undefined as soon as the text holds more than `max`
 * tokens (it stops reading there). `k`: the text's classes (pretokens.ts `classesOf`), where the caller has them.
 * A text of at most WASM_UNITS units goes through the WebAssembly of token-ends-wasm.ts (the same ends);
 * a longer one through tokenEndsInJs, which holds one window of it at a time.
 */
export function tokenEnds(text: string, max: number, k = classesOf(text)): { ends: Uint32Array; count: number } | undefined {
  if (text.length > WASM_UNITS) return tokenEndsInJs(text, max, k);
  return wasmTokenEnds(text, max, k, vocabulary(), (p, e) => (e - p > LONG ? blocks(text.slice(p, e)) : [merge(text, p, e)]));
}

/** tokenEnds in JavaScript alone (exported for the tests, which hold the WebAssembly to it). */
export function tokenEndsInJs(text: string, max: number, k = classesOf(text)): { ends: Uint32Array; count: number } | undefined {
  const { lengths } = vocabulary();
  restart();
  let ends = new Uint32Array(Math.min(max + 1, 1024 + (text.length >> 2)));
  let count = 0;
  let at = 0;
  /** Room in `ends` for `n` more, or false past `max`. */
  const room = (n: number) => {
    if (count + n > max) return false;
    if (count + n > ends.length) {
      const grown = new Uint32Array(Math.min(max + 1, Math.max(ends.length * 2, count + n)));
      grown.set(ends);
      ends = grown;
    }
    return true;
  };
  for (let p = 0; p < text.length;) {
    const e = pretokenEnd(text, k, p);
    if (e - p > LONG) {
      for (const tokens of blocks(text.slice(p, e))) {
        if (!room(tokens.length)) return undefined;
        for (const t of tokens) ends[count++] = at += lengths[t];
      }
    } else {
      const from = lookUp(text, p, e);
      const n = cache.count;
      if (!room(n)) return undefined;
      const pool = cache.values();
      for (let i = 0; i < n; i++) ends[count++] = at += lengths[tokenAt(pool, from + 2 * i)];
    }
    p = e;
  }
  return { ends, count };
}

/** The tokens of `text`. */
export function encodeText(text: string): number[] {
  const out: number[] = [];
  for (const piece of encodePieces(text)) for (const t of piece) out.push(t);
  return out;
}

/** How many tokens `text` holds. */
export function countText(text: string): number {
  let n = 0;
  for (const piece of encodePieces(text)) n += piece.length;
  return n;
}

/** The text of `tokens`; throws on an id the tokenizer does not know. A cut multi-byte character becomes U+FFFD. */
export function decodeTokens(tokens: readonly number[]): string {
  const { count, bytes, offsets } = vocabulary();
  const parts: Uint8Array[] = [];
  for (const t of tokens) {
    // Special tokens (and unknown ids, which throw) are gpt-tokenizer's to name.
    parts.push(
      Number.isInteger(t) && t >= 0 && t < count ? bytes.subarray(offsets[t], offsets[t + 1]) : Buffer.from(library().decode([t]), 'utf8'),
    );
  }
  // One decode of all the bytes, so a character that tokens split is whole again.
  return Buffer.concat(parts).toString('utf8');
}

/** UTF-8 of a pre-token, made here without a string or buffer a look-up (grown as needed). */
let utf8 = new Uint8Array(1024);

/** Writes the UTF-8 of `text[from, to)` into `utf8` (a lone surrogate as U+FFFD, as Buffer and TextEncoder do); returns its length. */
function encodeUtf8(text: string, from: number, to: number): number {
  if (3 * (to - from) > utf8.length) utf8 = new Uint8Array(3 * (to - from));
  const b = utf8;
  let n = 0;
  for (let i = from; i < to; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) b[n++] = c;
    else if (c < 0x800) {
      b[n++] = 0xc0 | (c >> 6);
      b[n++] = 0x80 | (c & 0x3f);
    } else if ((c & 0xfc00) === 0xd800 && i + 1 < to && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      c = 0x10000 + ((c - 0xd800) << 10) + (text.charCodeAt(++i) - 0xdc00);
      b[n++] = 0xf0 | (c >> 18);
      b[n++] = 0x80 | ((c >> 12) & 0x3f);
      b[n++] = 0x80 | ((c >> 6) & 0x3f);
      b[n++] = 0x80 | (c & 0x3f);
    } else {
      if ((c & 0xf800) === 0xd800) c = 0xfffd;
      b[n++] = 0xe0 | (c >> 12);
      b[n++] = 0x80 | ((c >> 6) & 0x3f);
      b[n++] = 0x80 | (c & 0x3f);
    }
  }
  return n;
}

/** The tokens of the pre-token `text[from, to)`: a token as a whole, or merged (mergeShort's way when short, mergeLong's otherwise). */
function merge(text: string, from: number, to: number): number[] {
  const n = encodeUtf8(text, from, to);
  const v = vocabulary();
  const whole = rankOf(v, utf8, 0, n);
  if (whole >= 0) return [whole];
  return n <= SHORT_BYTES ? mergeShortBytes(v, utf8, n) : mergeLongBytes(v, utf8.subarray(0, n));
}

/**
 * Byte-pair merge of one short pre-token, as gpt-tokenizer (and tiktoken) make it: the lowest-ranked
 * pair of neighbouring parts merged first, the leftmost among equals, until no pair is a token. Quadratic
 * in the pre-token, so for short ones; mergeLong for the rest.
 */
export function mergeShort(piece: string): number[] {
  const n = encodeUtf8(piece, 0, piece.length);
  const v = vocabulary();
  const whole = rankOf(v, utf8, 0, n);
  return whole >= 0 ? [whole] : mergeShortBytes(v, utf8, n);
}

function mergeShortBytes(v: Vocabulary, buf: Uint8Array, n: number): number[] {
  if (n > short.token.length) short = { token: new Int32Array(2 * n), start: new Int32Array(2 * n + 1), ranks: new Int32Array(2 * n) };
  // Parts i < m: token[i], starting at byte start[i] (start[m] is the end); ranks[i]: the rank of parts
  // i and i + 1 merged (NONE if that is no token).
  const { token, start, ranks } = short;
  const { byteToken } = v;
  let m = n;
  for (let i = 0; i < n; i++) {
    token[i] = byteToken[buf[i]];
    start[i] = i;
  }
  start[n] = n;
  const pairRank = (i: number): number => {
    if (i + 1 >= m) return NONE;
    const l = token[i];
    const r = token[i + 1];
    // Which token two tokens make depends on them alone: remembered across pre-tokens.
    const h = (Math.imul(l, 0x9e3779b1) ^ Math.imul(r, 0x85ebca6b)) >>> (32 - SHORT_PAIRS_BITS);
    if (pairLeft[h] === l && pairRight[h] === r) return pairMerged[h];
    pairLeft[h] = l;
    pairRight[h] = r;
    return (pairMerged[h] = rankOf(v, buf, start[i], start[i + 2]));
  };
  for (let i = 0; i < m; i++) ranks[i] = pairRank(i);
  for (;;) {
    let lowest = NONE;
    let at = -1;
    for (let i = 0; i < m - 1; i++) {
      if (ranks[i] !== NONE && (at < 0 || ranks[i] < lowest)) {
        lowest = ranks[i];
        at = i;
      }
    }
    if (at < 0) break;
    // Parts at and at + 1 become one: the rest moves down a place.
    token[at] = lowest;
    for (let i = at + 1; i < m - 1; i++) {
      token[i] = token[i + 1];
      ranks[i] = ranks[i + 1];
    }
    for (let i = at + 1; i < m; i++) start[i] = start[i + 1];
    m--;
    ranks[at] = pairRank(at);
    if (at > 0) ranks[at - 1] = pairRank(at - 1);
  }
  // A loop, not Array.from(token.subarray(0, m)): that took 0.4 µs a call, a quarter of a short merge.
  const out = new Array<number>(m);
  for (let i = 0; i < m; i++) out[i] = token[i];
  return out;
}

/** mergeShort's working arrays, grown as needed. */
let short = { token: new Int32Array(1024), start: new Int32Array(1025), ranks: new Int32Array(1024) };
/** Pairs of tokens met by mergeShort and the token they merge into (NONE: none), direct-mapped. */
const SHORT_PAIRS_BITS = 16;
const pairLeft = new Int32Array(1 << SHORT_PAIRS_BITS).fill(-1);
const pairRight = new Int32Array(1 << SHORT_PAIRS_BITS);
const pairMerged = new Int32Array(1 << SHORT_PAIRS_BITS);

const NONE = -1;
const POS = 2 ** 30;
const PAIR_CACHE = 4096;

/**
 * Byte-pair merge of one pre-token with a min-heap of (rank, start) and a linked list of parts: the
 * merges gpt-tokenizer makes, lowest rank first and leftmost among equals, in O(n log n). Exported for
 * the tests, which hold the block edges against one whole merge.
 */
export function mergeLong(piece: string): number[] {
  const buf = Buffer.from(piece, 'utf8');
  if (buf.length >= POS) throw new RangeError('a pre-token of 1 GiB or more cannot be tokenized');
  const v = vocabulary();
  const whole = rankOf(v, buf, 0, buf.length);
  return whole >= 0 ? [whole] : mergeLongBytes(v, buf);
}

function mergeLongBytes(v: Vocabulary, buf: Uint8Array): number[] {
  const { longest, byteToken } = v;
  const n = buf.length;
  // Parts are named by their first byte: next[p] starts the following part (n at the end; -1 once
  // merged away), token[p] is the part's token.
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const token = new Int32Array(n);
  const pairRank = new Int32Array(n);
  // A run repeats few pairs: a small direct-mapped cache of pair ranks spares most vocabulary lookups.
  const seenLeft = new Int32Array(PAIR_CACHE).fill(NONE);
  const seenRight = new Int32Array(PAIR_CACHE);
  const seenRank = new Int32Array(PAIR_CACHE);
  const rankAt = (p: number) => {
    const q = next[p];
    if (q >= n) return NONE;
    const end = next[q];
    if (end - p > longest) return NONE;
    const l = token[p];
    const r = token[q];
    const h = (Math.imul(l, 0x9e3779b1) ^ r) & (PAIR_CACHE - 1);
    if (seenLeft[h] === l && seenRight[h] === r) return seenRank[h];
    seenLeft[h] = l;
    seenRight[h] = r;
    return (seenRank[h] = rankOf(v, buf, p, end));
  };
  for (let p = 0; p < n; p++) {
    next[p] = p + 1;
    prev[p] = p - 1;
    token[p] = byteToken[buf[p]];
  }
  // Each merge pushes at most two entries: n - 1 pairs at first, two per merge after.
  const heap = new MinHeap(3 * n);
  for (let p = 0; p + 1 < n; p++) {
    pairRank[p] = rankAt(p);
    if (pairRank[p] !== NONE) heap.add(pairRank[p] * POS + p);
  }
  pairRank[n - 1] = NONE;
  heap.heapify();
  const rerank = (p: number) => {
    pairRank[p] = rankAt(p);
    if (pairRank[p] !== NONE) heap.push(pairRank[p] * POS + p);
  };
  while (heap.size) {
    const key = heap.pop();
    const r = Math.floor(key / POS);
    const p = key - r * POS;
    // An entry is stale once its part was merged away or its pair changed.
    if (next[p] === NONE || pairRank[p] !== r) continue;
    const q = next[p];
    next[p] = next[q];
    if (next[q] < n) prev[next[q]] = p;
    next[q] = NONE;
    token[p] = r;
    rerank(p);
    if (prev[p] >= 0) rerank(prev[p]);
  }
  const out: number[] = [];
  for (let p = 0; p < n; p = next[p]) out.push(token[p]);
  return out;
}

/** A four-ary min-heap of numbers with a fixed capacity (half the levels of a binary one). */
class MinHeap {
  private a: Float64Array;
  size = 0;
  constructor(capacity: number) {
    this.a = new Float64Array(Math.max(1, capacity));
  }
  /** Appends without ordering; call `heapify` before the first pop. */
  add(v: number) {
    this.a[this.size++] = v;
  }
  heapify() {
    for (let i = (this.size - 2) >> 2; i >= 0; i--) this.down(i, this.a[i]);
  }
  push(v: number) {
    const a = this.a;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 2;
      if (a[parent] <= v) break;
      a[i] = a[parent];
      i = parent;
    }
    a[i] = v;
  }
  pop(): number {
    const top = this.a[0];
    const last = this.a[--this.size];
    if (this.size) this.down(0, last);
    return top;
  }
  private down(i: number, v: number) {
    const a = this.a;
    const n = this.size;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= n) break;
      let c = first;
      const end = Math.min(first + 4, n);
      for (let k = first + 1; k < end; k++) if (a[k] < a[c]) c = k;
      if (a[c] >= v) break;
      a[i] = a[c];
      i = c;
    }
    a[i] = v;
  }
}
