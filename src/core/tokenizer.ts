import type * as Tokenizer from 'gpt-tokenizer';
import { lazy } from '../store/lazy.js';

/**
 * The o200k tokenizer (gpt-tokenizer's default encoding) in time linear in the text, for every count,
 * truncation and chunking in Standin. It gives gpt-tokenizer's tokens exactly, but for a token or two at
 * each block edge of a pre-token over BLOCK characters.
 *
 * Why not gpt-tokenizer alone: it splits the text into pre-tokens with a regex (words, number groups,
 * punctuation runs, whitespace runs), then merges the bytes of each pre-token by rescanning all its
 * pairs for the lowest rank and splicing two arrays at every merge: O(n²) in the pre-token's length.
 * Words are short, but a run without spaces (`aaaa…`, `[[[[…`, random letters, one emoji or CJK
 * character repeated, a long whitespace run) is one pre-token: 16 K characters took a second, 150 K half
 * a minute, on the event loop. Here pre-tokens longer than `LONG` are merged with a heap (the same merge
 * order: the lowest rank, the leftmost on ties), O(n log n); the text between them goes to gpt-tokenizer,
 * whose merge cache makes ordinary words fast.
 */
const library = lazy<typeof Tokenizer>('gpt-tokenizer');
const constants = lazy<{ O200K_TOKEN_SPLIT_REGEX: RegExp }>('gpt-tokenizer/encodingParams/constants');
const ranksFile = lazy<{ default: readonly (string | readonly number[] | undefined)[] }>('gpt-tokenizer/bpeRanks/o200k_base');

/** Special-token look-alikes (`<|endoftext|>`) in a text are text, as the platform counts user input. */
const PLAIN = { disallowedSpecial: new Set<string>() };

/** Pre-tokens longer than this (UTF-16 units) skip gpt-tokenizer's quadratic merge. */
export const LONG = 256;
/** Ordinary text goes to gpt-tokenizer in pieces of about this size, so a caller can stop early. */
const SEGMENT = 65_536;
/**
 * A longer pre-token is merged in blocks of this many UTF-16 units: the merge holds about 40 bytes per
 * byte of its input, so a block costs at most ~30 MB, and a caller can stop after one. A block edge may
 * shift the count by a token or two from gpt-tokenizer's (one whole merge) — on 256 K characters.
 */
const BLOCK = 262_144;

/** Loads the tokenizer's tables (about 0.2 s of CPU) ahead of the first use, off the start path. */
export const warmTokenizer = () => void library();

/** The tokens of `text`, in order, a bounded piece at a time. */
export function* encodePieces(text: string): Generator<number[]> {
  if (!text) return;
  if (text.length <= LONG) yield library().encode(text, PLAIN);
  else if (!mayHoldLong(text)) yield* ordinaryPieces(text);
  else yield* piecesAroundLong(text);
}

/** Text without a long pre-token, to gpt-tokenizer in pieces cut before a space that starts a word. */
function* ordinaryPieces(text: string): Generator<number[]> {
  let from = 0;
  while (text.length - from > SEGMENT) {
    // Before " word" after a non-space, both sides pre-tokenize as the whole does: " word" starts a pre-token.
    WORD_START.lastIndex = from + SEGMENT;
    const cut = WORD_START.exec(text);
    if (!cut) break;
    yield library().encode(text.slice(from, cut.index), PLAIN);
    from = cut.index;
  }
  yield library().encode(from ? text.slice(from) : text, PLAIN);
}
const WORD_START = /(?<=\S) (?=\p{L})/gu;

/** Text with long pre-tokens: those to the heap merge, the text between to gpt-tokenizer. */
function* piecesAroundLong(text: string): Generator<number[]> {
  let from = 0;
  // matchAll clones the regex: generators may interleave without sharing its lastIndex.
  for (const m of text.matchAll(constants().O200K_TOKEN_SPLIT_REGEX)) {
    const at = m.index;
    const long = m[0].length > LONG;
    // Cuts fall only between pre-tokens, so gpt-tokenizer splits each piece as it would the whole.
    if (at > from && (long || at - from >= SEGMENT)) {
      yield library().encode(text.slice(from, at), PLAIN);
      from = at;
    }
    if (long) {
      yield* blocks(m[0]);
      from = at + m[0].length;
    }
  }
  if (from < text.length) yield library().encode(text.slice(from), PLAIN);
}

/** The tokens of one long pre-token, merged a BLOCK at a time (never between a surrogate pair). */
export function* blocks(piece: string): Generator<number[]> {
  for (let at = 0; at < piece.length;) {
    let end = Math.min(at + BLOCK, piece.length);
    if (end < piece.length && (piece.charCodeAt(end) & 0xfc00) === 0xdc00) end--;
    yield mergeLong(at === 0 && end === piece.length ? piece : piece.slice(at, end));
    at = end;
  }
}

/**
 * Whether `text` may hold a pre-token longer than LONG, without the regex pass. Every pre-token is, but
 * for one leading character, a run of whitespace, of non-whitespace, or a punctuation run followed by
 * `\r`, `\n` and `/`; one longer than LONG holds a run of one of those kinds of over LONG / 2 - 1.
 */
function mayHoldLong(text: string): boolean {
  const run = (LONG >> 1) - 1;
  let space = 0;
  let solid = 0;
  let tail = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isWhitespace(c)) {
      space++;
      solid = 0;
    } else {
      solid++;
      space = 0;
    }
    tail = c === 10 || c === 13 || c === 47 ? tail + 1 : 0;
    if (space >= run || solid >= run || tail >= run) return true;
  }
  return false;
}

/** Whether UTF-16 code unit `c` is whitespace as the regex `\s` has it. */
export function isWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
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
  const { bytes } = vocabulary();
  const parts: string[] = [];
  for (const t of tokens) {
    const b = bytes[t];
    // Special tokens (and unknown ids, which throw) are gpt-tokenizer's to name.
    parts.push(b ?? Buffer.from(library().decode([t]), 'utf8').toString('latin1'));
  }
  // One decode of all the bytes: gpt-tokenizer's decode copies its byte buffer at every byte token
  // (quadratic over a long run of them) and keeps a cut character's bytes for its next call.
  return Buffer.from(parts.join(''), 'latin1').toString('utf8');
}

/**
 * Byte-pair merge of one short pre-token, as gpt-tokenizer (and tiktoken) make it: the lowest-ranked
 * pair of neighbouring parts merged first, the leftmost among equals, until no pair is a token. Quadratic
 * in the pre-token, so for short ones (the chunker's cache misses); mergeLong for the rest.
 */
export function mergeShort(piece: string): number[] {
  const { rank, byteToken } = vocabulary();
  const buf = Buffer.from(piece, 'utf8');
  const n = buf.length;
  const bytes = n === piece.length ? piece : buf.toString('latin1');
  const whole = rank.get(bytes);
  if (whole !== undefined) return [whole];
  if (n > short.token.length) short = { token: new Int32Array(2 * n), start: new Int32Array(2 * n + 1), ranks: new Float64Array(2 * n) };
  // Parts i < m: token[i], starting at byte start[i] (start[m] is the end); ranks[i]: the rank of parts
  // i and i + 1 merged (Infinity if that is no token).
  const { token, start, ranks } = short;
  let m = n;
  for (let i = 0; i < n; i++) {
    token[i] = byteToken[buf[i]];
    start[i] = i;
  }
  start[n] = n;
  const pairRank = (i: number): number => {
    if (i + 1 >= m) return Infinity;
    const l = token[i];
    const r = token[i + 1];
    // Which token two tokens make depends on them alone: remembered across pre-tokens.
    const h = (Math.imul(l, 0x9e3779b1) ^ Math.imul(r, 0x85ebca6b)) >>> (32 - SHORT_PAIRS_BITS);
    if (pairLeft[h] === l && pairRight[h] === r) return pairMerged[h] < 0 ? Infinity : pairMerged[h];
    const merged = rank.get(bytes.slice(start[i], start[i + 2]));
    pairLeft[h] = l;
    pairRight[h] = r;
    pairMerged[h] = merged ?? NONE;
    return merged ?? Infinity;
  };
  for (let i = 0; i < m; i++) ranks[i] = pairRank(i);
  for (;;) {
    let lowest = Infinity;
    let at = -1;
    for (let i = 0; i < m - 1; i++) {
      if (ranks[i] < lowest) {
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
  return Array.from(token.subarray(0, m));
}

/** mergeShort's working arrays, grown as needed. */
let short = { token: new Int32Array(1024), start: new Int32Array(1025), ranks: new Float64Array(1024) };
/** Pairs of tokens met by mergeShort and the token they merge into (NONE: none), direct-mapped. */
const SHORT_PAIRS_BITS = 16;
const pairLeft = new Int32Array(1 << SHORT_PAIRS_BITS).fill(-1);
const pairRight = new Int32Array(1 << SHORT_PAIRS_BITS);
const pairMerged = new Int32Array(1 << SHORT_PAIRS_BITS);

/** How many bytes of UTF-8 token `t` stands for (0 for a special token). */
export const tokenByteLength = (t: number): number => vocabulary().bytes[t]?.length ?? 0;

/** The mergeable ranks keyed by their bytes as a latin1 string (one char per byte), and the reverse. */
interface Vocabulary {
  rank: Map<string, number>;
  bytes: string[];
  longest: number;
  /** The token of each single byte. */
  byteToken: Int32Array;
}
// Immutable tables, built on first use (~16 MB, ~0.1 s): shared by every Standin of the process, as the
// lazily loaded modules are.
let vocab: Vocabulary | undefined;
function vocabulary(): Vocabulary {
  if (vocab) return vocab;
  const rank = new Map<string, number>();
  const bytes: string[] = [];
  let longest = 0;
  ranksFile().default.forEach((entry, r) => {
    if (entry === undefined) return;
    const key = typeof entry === 'string' ? Buffer.from(entry, 'utf8').toString('latin1') : String.fromCharCode(...entry);
    rank.set(key, r);
    bytes[r] = key;
    longest = Math.max(longest, key.length);
  });
  const byteToken = Int32Array.from({ length: 256 }, (_, b) => rank.get(String.fromCharCode(b))!);
  return (vocab = { rank, bytes, longest, byteToken });
}

const NONE = -1;
const POS = 2 ** 30;
const PAIR_CACHE = 4096;

/**
 * Byte-pair merge of one pre-token with a min-heap of (rank, start) and a linked list of parts: the
 * merges gpt-tokenizer makes, lowest rank first and leftmost among equals, in O(n log n). Exported for
 * the tests, which hold the block edges against one whole merge.
 */
export function mergeLong(piece: string): number[] {
  const { rank, longest, byteToken } = vocabulary();
  const buf = Buffer.from(piece, 'utf8');
  const n = buf.length;
  if (n >= POS) throw new RangeError('a pre-token of 1 GiB or more cannot be tokenized');
  // One char per byte, so a part's key is a substring (an ASCII piece is its own byte string).
  const bytes = n === piece.length ? piece : buf.toString('latin1');
  const whole = n <= longest ? rank.get(bytes) : undefined;
  if (whole !== undefined) return [whole];
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
  const rankOf = (p: number) => {
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
    return (seenRank[h] = rank.get(bytes.slice(p, end)) ?? NONE);
  };
  for (let p = 0; p < n; p++) {
    next[p] = p + 1;
    prev[p] = p - 1;
    token[p] = byteToken[buf[p]];
  }
  // Each merge pushes at most two entries: n - 1 pairs at first, two per merge after.
  const heap = new MinHeap(3 * n);
  for (let p = 0; p + 1 < n; p++) {
    pairRank[p] = rankOf(p);
    if (pairRank[p] !== NONE) heap.add(pairRank[p] * POS + p);
  }
  pairRank[n - 1] = NONE;
  heap.heapify();
  const rerank = (p: number) => {
    pairRank[p] = rankOf(p);
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
