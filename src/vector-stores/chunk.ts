import { encodePieces, tokenEnds } from '../core/tokenizer.js';

/**
 * Token-level chunking (the o200k tokenizer of core/tokenizer.ts, linear in the text, as token counts
 * elsewhere in Standin): windows of `maxTokens` tokens, each starting `maxTokens - overlapTokens` after
 * the previous one. Text that looks like a special token (`<|endoftext|>`) is text here.
 */

export interface Chunking {
  max_chunk_size_tokens: number;
  chunk_overlap_tokens: number;
}

/** `auto`: 800 tokens a chunk, 400 of them shared with the next (the platform's values). */
export const AUTO_CHUNKING: Chunking = { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 };

/** Most tokens a file may hold (the platform's limit for file search). */
export const MAX_FILE_TOKENS = 5_000_000;

export class TooManyTokens extends Error {}

/** The tokens of a text; throws TooManyTokens past `max` (stops reading there). */
export function tokenize(text: string, max = MAX_FILE_TOKENS): number[] {
  const out: number[] = [];
  for (const piece of encodePieces(text)) {
    for (const t of piece) out.push(t);
    if (out.length > max) throw new TooManyTokens(`the file holds more than ${max} tokens`);
  }
  return out;
}

/** UTF-8 bytes of the character at `unit` of `text` (a lone surrogate: 3, as U+FFFD; a pair: 4, for two units). */
function bytesAt(text: string, unit: number): number {
  const c = text.charCodeAt(unit);
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  return (c & 0xfc00) === 0xd800 && (text.charCodeAt(unit + 1) & 0xfc00) === 0xdc00 ? 4 : 3;
}

/** unitsOf walks stretches shorter than this: a check costs a slice and a call. */
const ASCII_CHECK = 32;

/**
 * Where windows of a text's UTF-8 (their first bytes `froms` and their ends `tos`, each ascending) fall
 * in its UTF-16 units, in one walk over the text: each window's first character that starts at or after
 * its first byte (`heads`), and the end of its last character that ends at or before its end (`tails`).
 */
function unitsOf(text: string, froms: readonly number[], tos: readonly number[]): { heads: Int32Array; tails: Int32Array } {
  const heads = new Int32Array(froms.length);
  const tails = new Int32Array(tos.length);
  let unit = 0;
  let byte = 0;
  for (let f = 0, t = 0; f < froms.length || t < tos.length;) {
    const isHead = t === tos.length || (f < froms.length && froms[f] <= tos[t]);
    const to = isHead ? froms[f] : tos[t];
    // Past the characters that end at or before `to`; `cut`: the units of the one `to` falls inside. A
    // stretch of ASCII (nine in ten between a changelog's edges) is a byte a unit, and no character of it
    // is cut: measured at once by Buffer.byteLength rather than walked.
    const span = Math.min(to - byte, text.length - unit);
    if (span >= ASCII_CHECK && Buffer.byteLength(text.slice(unit, unit + span)) === span) {
      unit += span;
      byte += span;
    }
    let cut = 0;
    while (byte < to && unit < text.length) {
      const n = bytesAt(text, unit);
      const units = n === 4 ? 2 : 1;
      if (byte + n > to) {
        cut = units;
        break;
      }
      byte += n;
      unit += units;
    }
    if (isHead) heads[f++] = unit + cut;
    else tails[t++] = unit;
  }
  return { heads, tails };
}

const REPLACEMENT = 0xfffd;

/** Whether a UTF-8 byte continues a character (10xxxxxx). */
const continues = (b: number) => (b & 0xc0) === 0x80;

/**
 * The span of a window's bytes `[from, to)` of a text's UTF-8 that its chunk's text is (chunkText): the
 * window less the halves of characters cut at its edges, then less any U+FFFD (EF BF BD) at its edges,
 * as decoding the window and stripping U+FFFD at both ends leaves it.
 */
export function wholeBytes(bytes: Uint8Array, from: number, to: number): [number, number] {
  let a = from;
  while (a < to && continues(bytes[a])) a++;
  let b = to;
  // The character `to` cuts, if any: from its first byte on, it is dropped.
  let lead = b;
  while (lead > a && continues(bytes[lead - 1])) lead--;
  if (lead > a) {
    const first = bytes[lead - 1];
    const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
    if (b - (lead - 1) < length) b = lead - 1;
  }
  const fffd = (i: number) => bytes[i] === 0xef && bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd;
  while (b - a >= 3 && fffd(a)) a += 3;
  while (b - a >= 3 && fffd(b - 3)) b -= 3;
  return [a, b];
}

/**
 * Chunks of a text: each chunk's text and token count, in order. An empty text has none. A chunk's text
 * is its tokens' bytes decoded: a slice of the text's UTF-8 (token boundaries from core/tokenizer.ts's tokenEnds),
 * the halves of a character cut at its edges dropped (with any U+FFFD there). That is the text's slice
 * between the window's first and last whole characters, unless the text has a lone surrogate (which
 * UTF-8 makes U+FFFD) or the slice a U+FFFD at an edge. The chunk is then that slice, which V8 keeps as a
 * view of the text, not a copy (decoding copied twice the text under auto chunking).
 * With `starts`, where each chunk's text should begin in `text` (UTF-16 units: the first whole character
 * of its bytes) is pushed there, for the embedder (embedder.ts `embedChunks`, which checks it). `classes`:
 * the text's character classes (core/pretokens.ts `classesOf`), where the caller has them for the embedder too.
 * With `spans`, each chunk's text as a span of the text's UTF-8 (its first byte and its end, pushed there):
 * every chunk is one, its bytes exactly (wholeBytes). `utf8`: the text's UTF-8 where the caller has it
 * (as Buffer.from makes it: a lone surrogate as U+FFFD).
 */
export function* chunkText(
  text: string,
  chunking: Chunking,
  starts?: number[],
  classes?: Uint8Array,
  spans?: number[],
  utf8?: Uint8Array,
): Generator<{ text: string; tokens: number }> {
  const tokenized = tokenEnds(text, MAX_FILE_TOKENS, classes);
  if (!tokenized) throw new TooManyTokens(`the file holds more than ${MAX_FILE_TOKENS} tokens`);
  const { ends, count } = tokenized;
  const wellFormed = text.isWellFormed();
  let bytes = utf8 && Buffer.from(utf8.buffer, utf8.byteOffset, utf8.byteLength);
  const { max_chunk_size_tokens: size, chunk_overlap_tokens: overlap } = chunking;
  const step = Math.max(1, size - overlap);
  // The windows' first bytes and ends (each further on than the one before), then in UTF-16 units.
  const froms: number[] = [];
  const tos: number[] = [];
  for (let start = 0; start < count; start += step) {
    const end = Math.min(start + size, count);
    froms.push(start ? ends[start - 1] : 0);
    tos.push(ends[end - 1]);
    if (end === count) break;
  }
  const { heads, tails } = unitsOf(text, froms, tos);
  for (let w = 0; w < froms.length; w++) {
    const head = heads[w];
    const tail = tails[w];
    starts?.push(head);
    // A window may cut a multi-byte character in two: the halves at its edges decode to U+FFFD, dropped,
    // so the whole characters between them are the chunk, unless one at an edge is U+FFFD (dropped too):
    // then the chunk is its span of the UTF-8 (wholeBytes) decoded.
    const slice = wellFormed && text.charCodeAt(head) !== REPLACEMENT && text.charCodeAt(tail - 1) !== REPLACEMENT;
    const span = spans || !slice ? wholeBytes((bytes ??= Buffer.from(text, 'utf8')), froms[w], tos[w]) : undefined;
    if (span) spans?.push(...span);
    const piece = slice ? text.slice(head, tail) : bytes!.toString('utf8', span![0], span![1]);
    const start = w * step;
    yield { text: piece, tokens: Math.min(start + size, count) - start };
  }
}
