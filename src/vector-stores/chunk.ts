import { tokenEnds } from '../core/token-ends.js';
import { encodePieces } from '../core/tokenizer.js';

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

/**
 * Chunks of a text: each chunk's text and token count, in order. An empty text has none. A chunk's text
 * is its tokens' bytes decoded: a slice of the text's UTF-8 (token boundaries from core/token-ends.ts).
 * With `starts`, where each chunk's text should begin in `text` (UTF-16 units: the first whole character
 * of its bytes) is pushed there, for the embedder (embedder.ts `embedChunks`, which checks it).
 */
export function* chunkText(text: string, chunking: Chunking, starts?: number[]): Generator<{ text: string; tokens: number }> {
  const spans = tokenEnds(text, MAX_FILE_TOKENS);
  if (!spans) throw new TooManyTokens(`the file holds more than ${MAX_FILE_TOKENS} tokens`);
  const { ends, count } = spans;
  const bytes = Buffer.from(text, 'utf8');
  const { max_chunk_size_tokens: size, chunk_overlap_tokens: overlap } = chunking;
  const step = Math.max(1, size - overlap);
  // A cursor from bytes to UTF-16 units: chunks start further on each time.
  let unit = 0;
  let byte = 0;
  for (let start = 0; start < count; start += step) {
    const end = Math.min(start + size, count);
    if (starts) {
      const from = start ? ends[start - 1] : 0;
      while (byte < from && unit < text.length) {
        const c = text.charCodeAt(unit);
        const pair = (c & 0xfc00) === 0xd800 && (text.charCodeAt(unit + 1) & 0xfc00) === 0xdc00;
        byte += c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
        unit += pair ? 2 : 1;
      }
      starts.push(unit);
    }
    // A window may cut a multi-byte character in two: drop the halves at its edges.
    const piece = bytes.toString('utf8', start ? ends[start - 1] : 0, ends[end - 1]).replace(/^\uFFFD+|\uFFFD+$/g, '');
    yield { text: piece, tokens: end - start };
    if (end === count) return;
  }
}
