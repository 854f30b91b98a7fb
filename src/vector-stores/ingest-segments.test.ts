import { describe, expect, it } from 'vitest';
import { AUTO_CHUNKING, chunkText } from './chunk.js';
import { textParts, toWire } from './ingest-protocol.js';
import { segmentsOf } from './ingest-segments.js';

/** xorshift32: the same texts every run. */
const random = (seed: number) => () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};

/** Parts of `text` cut at `cuts` (never inside a surrogate pair, as textParts cuts). */
const cutAt = (text: string, cuts: number[]) => {
  const edges = [0, ...cuts.filter((c) => c > 0 && c < text.length && (text.charCodeAt(c - 1) & 0xfc00) !== 0xd800), text.length];
  const sorted = [...new Set(edges)].sort((a, b) => a - b);
  return sorted.slice(1).map((e, i) => text.slice(sorted[i], e));
};

/** What segmentsOf must give: the parts joined back, every segment inside a part, every kept chunk its run. */
function check(parts: string[], spans: Int32Array) {
  const text = parts.join('');
  const { texts, runs } = segmentsOf(parts, spans);
  expect(texts.join('')).toBe(text);
  // Each segment lies inside one part: the parts' edges are among the segments' edges.
  const segmentEdges = new Set([0]);
  let at = 0;
  for (const t of texts) segmentEdges.add((at += t.length));
  at = 0;
  for (const p of parts) expect(segmentEdges.has((at += p.length))).toBe(true);
  for (let c = 0; c < spans.length / 2; c++) {
    const [s, e] = [spans[2 * c], spans[2 * c + 1]];
    const [from, to] = [runs[2 * c], runs[2 * c + 1]];
    const splits = (i: number) => (text.charCodeAt(i - 1) & 0xfc00) === 0xd800 && (text.charCodeAt(i) & 0xfc00) === 0xdc00;
    if (s < 0 || e <= s || e > text.length || splits(s) || splits(e)) expect([from, to]).toEqual([-1, -1]);
    else expect(texts.slice(from, to + 1).join('')).toBe(text.slice(s, e));
  }
  return { texts, runs };
}

describe('a text cut at its chunks’ edges (segmentsOf)', () => {
  it('makes each chunk of an auto-chunked text a run of whole segments, no segment past a part', () => {
    let text = '';
    for (let i = 0; i < 5000; i++) text += `Line ${i} of the manual, with ünïcödé and 😀 and "quotes".\n`;
    const starts: number[] = [];
    const chunks = [...chunkText(text, AUTO_CHUNKING, starts)];
    const wire = toWire({ text, chunks }, starts);
    const spans = new Int32Array(2 * chunks.length);
    for (let c = 0; c < chunks.length; c++) spans.set([wire.spans[3 * c], wire.spans[3 * c + 1]], 2 * c);
    const parts = textParts(text);
    expect(parts.length).toBeGreaterThan(1);
    const { texts, runs } = check(parts, spans);
    // Every chunk is stored as a run (auto chunking: two segments, each chunk's halves).
    for (let c = 0; c < chunks.length; c++) expect(texts.slice(runs[2 * c], runs[2 * c + 1] + 1).join('')).toBe(chunks[c].text);
    expect(texts.length).toBeLessThanOrEqual(chunks.length + 2 * parts.length + 1);
  });

  it('keeps the text of a chunk that is no slice, empty, out of range or cut inside a surrogate pair', () => {
    const text = 'ab😀cd😀ef';
    const parts = cutAt(text, [4]);
    const spans = Int32Array.from([0, 3, 3, 6, -1, -1, 5, 5, 2, 4, 0, 99, 4, 10]);
    const { runs } = check(parts, spans);
    expect(Array.from(runs)).toEqual([-1, -1, -1, -1, -1, -1, -1, -1, 1, 1, -1, -1, 2, 2]);
  });

  it('gives the empty text one empty segment', () => {
    expect(segmentsOf([''], new Int32Array(0))).toEqual({ texts: [''], runs: new Int32Array(0) });
  });

  it('holds on random texts, parts and spans', () => {
    const next = random(38);
    const alphabet = ['a', 'b', ' ', '\n', 'é', '😀', '中'];
    for (let round = 0; round < 300; round++) {
      let text = '';
      const n = Math.floor(next() * 60);
      for (let i = 0; i < n; i++) text += alphabet[Math.floor(next() * alphabet.length)];
      const parts = text ? cutAt(text, [Math.floor(next() * text.length), Math.floor(next() * text.length)]) : [''];
      const spans = new Int32Array(2 * Math.floor(next() * 8));
      for (let c = 0; c < spans.length / 2; c++) {
        const s = Math.floor(next() * (text.length + 2)) - 1;
        spans.set([s, s < 0 ? -1 : s + Math.floor(next() * 20)], 2 * c);
      }
      check(parts, spans);
    }
  });
});
