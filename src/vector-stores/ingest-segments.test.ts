import { describe, expect, it } from 'vitest';
import { AUTO_CHUNKING, chunkText } from './chunk.js';
import { textParts } from './ingest-protocol.js';
import { segmentsOf } from './ingest-segments.js';

/** xorshift32: the same texts every run. */
const random = (seed: number) => () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};

/** Whether byte `i` of `bytes` continues a character. */
const inside = (bytes: Uint8Array, i: number) => i > 0 && i < bytes.length && (bytes[i] & 0xc0) === 0x80;

/** Parts of `bytes` cut at `cuts` (never inside a character, as textParts cuts). */
const cutAt = (bytes: Buffer, cuts: number[]) => {
  const edges = [0, ...cuts.filter((c) => c > 0 && c < bytes.length && !inside(bytes, c)), bytes.length];
  const sorted = [...new Set(edges)].sort((a, b) => a - b);
  return sorted.slice(1).map((e, i) => bytes.subarray(sorted[i], e));
};

/** What segmentsOf must give: the parts joined back, every segment inside a part, every kept chunk its run. */
function check(parts: Buffer[], spans: Int32Array) {
  const text = Buffer.concat(parts);
  const { texts, runs } = segmentsOf(parts, spans);
  expect(Buffer.concat(texts).equals(text)).toBe(true);
  // Each segment lies inside one part: the parts' edges are among the segments' edges.
  const segmentEdges = new Set([0]);
  let at = 0;
  for (const t of texts) segmentEdges.add((at += t.length));
  at = 0;
  for (const p of parts) expect(segmentEdges.has((at += p.length))).toBe(true);
  for (let c = 0; c < spans.length / 2; c++) {
    const [s, e] = [spans[2 * c], spans[2 * c + 1]];
    const [from, to] = [runs[2 * c], runs[2 * c + 1]];
    if (s < 0 || e <= s || e > text.length || inside(text, s) || inside(text, e)) expect([from, to]).toEqual([-1, -1]);
    else expect(Buffer.concat(texts.slice(from, to + 1)).equals(text.subarray(s, e))).toBe(true);
  }
  return { texts, runs };
}

describe('a text cut at its chunks’ edges (segmentsOf)', () => {
  it('makes each chunk of an auto-chunked text a run of whole segments, no segment past a part', () => {
    let text = '';
    for (let i = 0; i < 5000; i++) text += `Line ${i} of the manual, with ünïcödé and 😀 and "quotes".\n`;
    const byteSpans: number[] = [];
    const utf8 = Buffer.from(text);
    const chunks = [...chunkText(text, AUTO_CHUNKING, undefined, undefined, byteSpans, utf8)];
    const spans = Int32Array.from(byteSpans);
    const parts = textParts(utf8) as Buffer[];
    expect(parts.length).toBeGreaterThan(1);
    const { texts, runs } = check(parts, spans);
    // Every chunk is stored as a run (auto chunking: two segments, each chunk's halves).
    for (let c = 0; c < chunks.length; c++)
      expect(Buffer.concat(texts.slice(runs[2 * c], runs[2 * c + 1] + 1)).toString()).toBe(chunks[c].text);
    expect(texts.length).toBeLessThanOrEqual(chunks.length + 2 * parts.length + 1);
  });

  it('keeps the text of a chunk that is empty, out of range or cut inside a character', () => {
    // a b 😀(2–5) c d 😀(8–11) e f
    const bytes = Buffer.from('ab😀cd😀ef');
    const parts = cutAt(bytes, [6]);
    const spans = Int32Array.from([0, 3, 3, 6, -1, -1, 5, 5, 2, 6, 0, 99, 6, 14]);
    const { runs } = check(parts, spans);
    expect(Array.from(runs)).toEqual([-1, -1, -1, -1, -1, -1, -1, -1, 1, 1, -1, -1, 2, 2]);
  });

  it('gives the empty text one empty segment', () => {
    expect(segmentsOf([Buffer.alloc(0)], new Int32Array(0))).toEqual({ texts: [Buffer.alloc(0)], runs: new Int32Array(0) });
  });

  it('holds on random texts, parts and spans', () => {
    const next = random(38);
    const alphabet = ['a', 'b', ' ', '\n', 'é', '😀', '中'];
    for (let round = 0; round < 300; round++) {
      let text = '';
      const n = Math.floor(next() * 60);
      for (let i = 0; i < n; i++) text += alphabet[Math.floor(next() * alphabet.length)];
      const bytes = Buffer.from(text);
      const parts = bytes.length ? cutAt(bytes, [Math.floor(next() * bytes.length), Math.floor(next() * bytes.length)]) : [bytes];
      const spans = new Int32Array(2 * Math.floor(next() * 8));
      for (let c = 0; c < spans.length / 2; c++) {
        const s = Math.floor(next() * (bytes.length + 2)) - 1;
        spans.set([s, s < 0 ? -1 : s + Math.floor(next() * 20)], 2 * c);
      }
      check(parts, spans);
    }
  });
});
