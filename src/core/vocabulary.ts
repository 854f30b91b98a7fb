/**
 * o200k's mergeable ranks (gpt-tokenizer's `bpeRanks/o200k_base`) in typed arrays: every token's bytes in
 * one buffer, in rank order, with a table of slots keyed by the bytes' hash. A look-up hashes a stretch of
 * bytes and compares one stretch of the buffer: no string is made (a Map keyed by strings needed one per
 * look-up, and each key was a chase through memory).
 *
 * The build writes the ranks as a file beside the bundle (`encodeVocabulary`, dist/o200k.bin: the token
 * count, each token's length, their bytes, their offsets and the table of slots; 4.5 MB), which a start
 * reads in a few milliseconds. Loading gpt-tokenizer's module of ranks instead (what a run from the
 * sources does) compiles and runs a script of 200,000 entries: 0.2–0.4 s on the thread that asked.
 */
export interface Vocabulary {
  /** Tokens (ranks) 0 … count - 1. */
  count: number;
  /** Token t's bytes: `bytes[offsets[t], offsets[t + 1])`. */
  bytes: Uint8Array;
  offsets: Uint32Array;
  /** Token t's length in bytes. */
  lengths: Uint8Array;
  /** Open addressing on `hashBytes`: a token + 1, 0 when empty. */
  slots: Int32Array;
  /** The most bytes of a token. */
  longest: number;
  /** The token of each single byte. */
  byteToken: Int32Array;
}

/** FNV-1a over `b[from, to)`, high bits folded into the low ones (the slots' index). */
export function hashBytes(b: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i], 0x01000193);
  return h ^ (h >>> 15);
}

/** The token whose bytes are `b[from, to)`, or -1. */
export function rankOf(v: Vocabulary, b: Uint8Array, from: number, to: number): number {
  const length = to - from;
  if (length > v.longest) return -1;
  const { slots, offsets, bytes } = v;
  const mask = slots.length - 1;
  // At most every slot once: a table read from a file need not have an empty one.
  for (let slot = hashBytes(b, from, to) & mask, probes = 0; probes < slots.length; slot = (slot + 1) & mask, probes++) {
    const t = slots[slot] - 1;
    if (t < 0) return -1;
    const start = offsets[t];
    if (offsets[t + 1] - start !== length) continue;
    let i = 0;
    while (i < length && bytes[start + i] === b[from + i]) i++;
    if (i === length) return t;
  }
  return -1;
}

/** A vocabulary from its tokens' lengths (each at most 255) and their bytes, one after the other. */
function assemble(lengths: Uint8Array, bytes: Uint8Array): Vocabulary {
  const count = lengths.length;
  const offsets = new Uint32Array(count + 1);
  let longest = 0;
  const byteToken = new Int32Array(256).fill(-1);
  for (let t = 0; t < count; t++) {
    offsets[t + 1] = offsets[t] + lengths[t];
    if (lengths[t] > longest) longest = lengths[t];
  }
  if (offsets[count] !== bytes.length) throw new Error('the vocabulary’s lengths do not add up to its bytes');
  for (let t = 0; t < count; t++) if (lengths[t] === 1) byteToken[bytes[offsets[t]]] = t;
  if (byteToken.includes(-1)) throw new Error('the vocabulary lacks a token of a single byte');
  return { count, bytes, offsets, lengths, slots: slotsOf(count, bytes, offsets), longest, byteToken };
}

/** The slots' size for `count` tokens: a power of two, at most half full. */
const slotCount = (count: number) => {
  let size = 1;
  while (size < 2 * count) size <<= 1;
  return size;
};

/** The table of slots of the tokens (30–45 ms for o200k's 200,000 at a start: the build makes it, and writes it). */
function slotsOf(count: number, bytes: Uint8Array, offsets: Uint32Array): Int32Array {
  const slots = new Int32Array(slotCount(count));
  const mask = slots.length - 1;
  for (let t = 0; t < count; t++) {
    const from = offsets[t];
    const to = offsets[t + 1];
    // A rank the file leaves out (length 0) is no token. o200k holds no two tokens of the same bytes.
    if (from === to) continue;
    let slot = hashBytes(bytes, from, to) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = t + 1;
  }
  return slots;
}

/**
 * A vocabulary read from a file is of its tokens: its sizes, and every 997th token and 17th byte found (a
 * table of another hash, other offsets or other tokens fails here). Not every token: a start reads the file
 * on the server's thread, and the build's test holds the file to the vocabulary made now
 * (test/deploy/bundle.test.ts).
 */
function checked(v: Vocabulary): Vocabulary {
  const bad = () => new Error('the vocabulary file’s tables are not of its tokens');
  if (v.slots.length !== slotCount(v.count) || v.offsets[v.count] !== v.bytes.length || v.longest > 255) throw bad();
  for (let t = 0; t < v.count; t += 997) {
    const from = v.offsets[t];
    const to = v.offsets[t + 1];
    if (v.lengths[t] !== to - from || (from < to && rankOf(v, v.bytes, from, to) !== t)) throw bad();
  }
  for (let b = 0; b < 256; b += 17) if (v.byteToken[b] !== rankOf(v, Uint8Array.of(b), 0, 1)) throw bad();
  return v;
}

/** gpt-tokenizer's ranks (`bpeRanks/…`'s default export: per rank its text, or its bytes, or nothing). */
export function vocabularyOfRanks(ranks: readonly (string | readonly number[] | undefined)[]): Vocabulary {
  const lengths = new Uint8Array(ranks.length);
  const parts: Uint8Array[] = [];
  let size = 0;
  ranks.forEach((entry, t) => {
    if (entry === undefined) return;
    const b = typeof entry === 'string' ? Buffer.from(entry, 'utf8') : Uint8Array.from(entry);
    if (b.length > 255) throw new Error(`token ${t} has more than 255 bytes`);
    lengths[t] = b.length;
    parts.push(b);
    size += b.length;
  });
  return assemble(lengths, Buffer.concat(parts, size));
}

/** The file's first four bytes: `o2k2` (`o2k1`, before the tables were saved, is read as no file: made again). */
const MAGIC = 0x326b326f;
/** MAGIC, then the tokens', their bytes', the slots' counts and the longest token's length. */
const HEADER = 20;

/**
 * The file the build writes: the header, each token's length (a byte), their bytes, zeros up to a
 * multiple of 4, then as 32-bit little-endian numbers the offsets, the tokens of single bytes and the
 * slots: a start reads the tables instead of making them on the server's thread (30–45 ms).
 */
export function encodeVocabulary(v: Vocabulary): Uint8Array {
  const tablesAt = align(HEADER + v.count + v.bytes.length);
  const out = new Uint8Array(tablesAt + 4 * (v.count + 1 + 256 + v.slots.length));
  const view = new DataView(out.buffer);
  [MAGIC, v.count, v.bytes.length, v.slots.length, v.longest].forEach((n, i) => view.setUint32(4 * i, n, true));
  out.set(v.lengths.subarray(0, v.count), HEADER);
  out.set(v.bytes, HEADER + v.count);
  let at = tablesAt;
  for (const table of [v.offsets, v.byteToken, v.slots]) for (let i = 0; i < table.length; i++, at += 4) view.setUint32(at, table[i], true);
  return out;
}

const align = (n: number) => (n + 3) & ~3;
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** The vocabulary of such a file; throws when it is not one. */
export function decodeVocabulary(file: Uint8Array): Vocabulary {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (file.length < HEADER || view.getUint32(0, true) !== MAGIC) throw new Error('not a vocabulary file');
  const [count, size, slots, longest] = [4, 8, 12, 16].map((at) => view.getUint32(at, true));
  const tablesAt = align(HEADER + count + size);
  const end = tablesAt + 4 * (count + 1 + 256 + slots);
  if (end > file.length) throw new Error('the vocabulary file is cut short');
  if (end < file.length) throw new Error('the vocabulary file is longer than it says');
  // Views of the file: its bytes stay for as long as the process, as the arrays do; the tables too, where
  // the file's buffer lets them be read as they are (4-byte aligned, a little-endian machine).
  let at = tablesAt;
  const table = <A extends Uint32Array | Int32Array>(
    of: new (buffer: ArrayBufferLike, offset: number, length: number) => A,
    length: number,
  ): A => {
    const start = at;
    at += 4 * length;
    if ((file.byteOffset + start) % 4 === 0 && LITTLE_ENDIAN) return new of(file.buffer, file.byteOffset + start, length);
    const copy = new of(new ArrayBuffer(4 * length), 0, length);
    for (let i = 0; i < length; i++) copy[i] = view.getUint32(start + 4 * i, true);
    return copy;
  };
  return checked({
    count,
    lengths: file.subarray(HEADER, HEADER + count),
    bytes: file.subarray(HEADER + count, HEADER + count + size),
    offsets: table(Uint32Array, count + 1),
    byteToken: table(Int32Array, 256),
    slots: table(Int32Array, slots),
    longest,
  });
}
