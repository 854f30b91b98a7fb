import { betweenCharacters } from './ingest-protocol.js';

/**
 * A file's text as it is stored (vector_store_texts): cut at every chunk's edges as well as between its
 * parts, so that each chunk is a run of whole segments and stores no text of its own (tables.ts,
 * `text_from`). Auto chunking has every character in two chunks: their texts were twice the file's text
 * again, and most of what an ingestion wrote (docs/files.md, "Chunks as runs of the text").
 */
/**
 * The most segments a chunk's run may have: a run is read part by part, so a row naming a longer one (a
 * hostile snapshot's: ingestion makes none, an overlap being at most half a chunk leaves two other
 * chunks' edges inside one, and a chunk of 4,096 tokens a few parts' ends at most) is read as no text
 * rather than as a file's every part; segmentsOf keeps the text of a chunk whose run would be longer.
 */
export const MAX_RUN = 16;

export interface Segments {
  /** The text's segments in order (UTF-8), each a slice of one part (at most TEXT_PART bytes). */
  texts: Buffer[];
  /** Two numbers a chunk: its first and last segment, or -1 and -1 when the chunk keeps its own text. */
  runs: Int32Array;
}

/**
 * `parts`: the text's UTF-8 in its parts (ingest-protocol.ts `textParts`, each cut between two characters);
 * `spans`: two numbers a chunk, its first byte and its end in the text. An edge inside a character (none
 * that ingestion makes: the server refuses such a span) is not cut: a chunk with one keeps its text, as
 * does an empty chunk and one whose run would be longer than MAX_RUN.
 */
export function segmentsOf(parts: readonly Buffer[], spans: Int32Array): Segments {
  const chunks = spans.length / 2;
  const ends: number[] = [];
  let length = 0;
  for (const part of parts) ends.push((length += part.length));
  const clean = (i: number) => betweenCharacters(parts, ends, i);
  // The edges: 0, every part's end, every kept chunk's start and end.
  const edges = [0, ...ends];
  const kept = new Uint8Array(chunks);
  for (let c = 0; c < chunks; c++) {
    const s = spans[2 * c];
    const e = spans[2 * c + 1];
    if (s < 0 || e <= s || e > length || !clean(s) || !clean(e)) continue;
    kept[c] = 1;
    edges.push(s, e);
  }
  const sorted = Int32Array.from(edges).sort();
  // The segments between consecutive edges, and the index of the segment starting at each edge.
  const texts: Buffer[] = [];
  const startsAt = new Map<number, number>();
  for (let k = 1, p = 0; k < sorted.length; k++) {
    const from = sorted[k - 1];
    const to = sorted[k];
    if (to === from) continue;
    while (ends[p] < to) p++;
    const base = ends[p] - parts[p].length;
    startsAt.set(from, texts.length);
    texts.push(parts[p].subarray(from - base, to - base));
  }
  if (!texts.length) texts.push(Buffer.alloc(0));
  startsAt.set(length, texts.length);
  const runs = new Int32Array(2 * chunks).fill(-1);
  for (let c = 0; c < chunks; c++) {
    if (!kept[c]) continue;
    const from = startsAt.get(spans[2 * c])!;
    const to = startsAt.get(spans[2 * c + 1])! - 1;
    if (to - from >= MAX_RUN) continue;
    runs[2 * c] = from;
    runs[2 * c + 1] = to;
  }
  return { texts, runs };
}
