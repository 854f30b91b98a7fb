import { BUILTIN_DIMENSIONS } from './embedder.js';
import type { Prepared, PrepareRequest, Refusal } from './prepare.js';

/** The messages between the server (ingest-pool.ts) and an ingestion process (ingest-child.ts). */
export type ChildRequest = { id: number } & PrepareRequest;
export type ChildReply = { id: number; rss: number } & ({ ok: true; prepared: WirePrepared } | { ok: false; refusal: Refusal });

/** What an ingestion process writes to stderr before it kills itself past the memory limit. */
export const MEMORY_MARK = 'standin-ingest: memory limit';

/**
 * A prepared file as it crosses the pipe: each chunk as its span of the text, not a copy of it. Chunks
 * overlap (auto: half of each is the next one's), so their texts were twice the text again: the largest
 * part of the reply to encode, copy through the pipe and decode into strings on the server's thread.
 */
export interface WirePrepared {
  text: string;
  /** Three numbers a chunk: its start and end in `text` (UTF-16 units) and its tokens; start -1: its text is in `odd`. */
  spans: Int32Array;
  /** The texts of the chunks that are not a slice of `text`, by chunk index (see `toWire`). */
  odd: [number, string][];
  vectors?: Float32Array;
}

/**
 * The reply for a prepared file; `starts` are where each chunk's text begins in the text (chunk.ts). A
 * chunk is sent as a span only when the slice there is its text exactly (compared, a memory compare): a
 * chunk whose cut character's halves were dropped beside a U+FFFD of the text, or a text with a lone
 * surrogate (UTF-8 has none: the chunk holds U+FFFD there), is sent whole. The server stores the same.
 */
export function toWire(p: Prepared, starts: readonly number[]): WirePrepared {
  const { text, chunks } = p;
  const spans = new Int32Array(3 * chunks.length);
  const odd: [number, string][] = [];
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i];
    const start = starts[i] ?? -1;
    const whole = start >= 0 && text.slice(start, start + c.text.length) === c.text;
    if (!whole) odd.push([i, c.text]);
    spans[3 * i] = whole ? start : -1;
    spans[3 * i + 1] = whole ? start + c.text.length : -1;
    spans[3 * i + 2] = c.tokens;
  }
  return { text, spans, odd, vectors: p.vectors };
}

/**
 * The prepared file of a reply (the server's side): chunk texts are slices of the text (V8 shares its
 * characters). A reply that does not hold together throws (the process reads hostile files: it is not
 * trusted to be well).
 */
export function fromWire(w: WirePrepared): Prepared {
  const { text, spans } = w;
  const vectorsOk =
    w.vectors === undefined || (w.vectors instanceof Float32Array && w.vectors.length === (spans?.length / 3) * BUILTIN_DIMENSIONS);
  if (typeof text !== 'string' || !(spans instanceof Int32Array) || spans.length % 3 !== 0 || !Array.isArray(w.odd) || !vectorsOk)
    throw new Error('the ingestion process sent a malformed reply');
  const odd = new Map(w.odd);
  const chunks: Prepared['chunks'] = new Array(spans.length / 3);
  for (let i = 0; i < chunks.length; i++) {
    const start = spans[3 * i];
    const end = spans[3 * i + 1];
    const whole = start >= 0 && start <= end && end <= text.length;
    const chunk = whole ? text.slice(start, end) : odd.get(i);
    if (typeof chunk !== 'string') throw new Error('the ingestion process sent a malformed reply');
    chunks[i] = { text: chunk, tokens: spans[3 * i + 2] };
  }
  return w.vectors ? { text, chunks, vectors: w.vectors } : { text, chunks };
}
