/**
 * o200k's mergeable ranks (gpt-tokenizer's `bpeRanks/o200k_base`) in typed arrays: every token's bytes in
 * one buffer, in rank order, with a table of slots keyed by the bytes' hash. A look-up hashes a stretch of
 * bytes and compares one stretch of the buffer: no string is made (a Map keyed by strings needed one per
 * look-up, and each key was a chase through memory).
 *
 * The build writes the ranks as a file beside the bundle (`encodeVocabulary`, dist/o200k.bin: the token
 * count, each token's length, then their bytes; 1.6 MB), which a start reads in a few milliseconds. Loading
 * gpt-tokenizer's module of ranks instead (what a run from the sources does) compiles and runs a script
 * of 200,000 entries: 0.2–0.4 s on the thread that asked.
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
  for (let slot = hashBytes(b, from, to) & mask; ; slot = (slot + 1) & mask) {
    const t = slots[slot] - 1;
    if (t < 0) return -1;
    const start = offsets[t];
    if (offsets[t + 1] - start !== length) continue;
    let i = 0;
    while (i < length && bytes[start + i] === b[from + i]) i++;
    if (i === length) return t;
  }
}

/** A vocabulary from its tokens' lengths (each at most 255) and their bytes, one after the other. */
function assemble(lengths: Uint8Array, bytes: Uint8Array): Vocabulary {
  const count = lengths.length;
  const offsets = new Uint32Array(count + 1);
  let longest = 0;
  for (let t = 0; t < count; t++) {
    offsets[t + 1] = offsets[t] + lengths[t];
    if (lengths[t] > longest) longest = lengths[t];
  }
  if (offsets[count] !== bytes.length) throw new Error('the vocabulary’s lengths do not add up to its bytes');
  // At most half full.
  let size = 1;
  while (size < 2 * count) size <<= 1;
  const slots = new Int32Array(size);
  const mask = size - 1;
  const byteToken = new Int32Array(256).fill(-1);
  for (let t = 0; t < count; t++) {
    const from = offsets[t];
    const to = offsets[t + 1];
    // A rank the file leaves out (length 0) is no token. o200k holds no two tokens of the same bytes.
    if (from === to) continue;
    let slot = hashBytes(bytes, from, to) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = t + 1;
    if (to - from === 1) byteToken[bytes[from]] = t;
  }
  if (byteToken.includes(-1)) throw new Error('the vocabulary lacks a token of a single byte');
  return { count, bytes, offsets, lengths, slots, longest, byteToken };
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

/** The file's first four bytes: `o2k1`. */
const MAGIC = 0x316b326f;
const HEADER = 8;

/** The file the build writes: MAGIC, the token count, each token's length (a byte), then their bytes. */
export function encodeVocabulary(v: Vocabulary): Uint8Array {
  const out = new Uint8Array(HEADER + v.count + v.bytes.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, v.count, true);
  for (let t = 0; t < v.count; t++) out[HEADER + t] = v.offsets[t + 1] - v.offsets[t];
  out.set(v.bytes, HEADER + v.count);
  return out;
}

/** The vocabulary of such a file; throws when it is not one. */
export function decodeVocabulary(file: Uint8Array): Vocabulary {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (file.length < HEADER || view.getUint32(0, true) !== MAGIC) throw new Error('not a vocabulary file');
  const count = view.getUint32(4, true);
  if (HEADER + count > file.length) throw new Error('the vocabulary file is cut short');
  // Views of the file: its bytes stay for as long as the process, as the arrays do.
  return assemble(file.subarray(HEADER, HEADER + count), file.subarray(HEADER + count));
}
