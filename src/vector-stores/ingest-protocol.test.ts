import { serialize, deserialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { chunkText, type Chunking } from './chunk.js';
import { BUILTIN_DIMENSIONS } from './embedder.js';
import { fromWire, toWire, type WirePrepared } from './ingest-protocol.js';

/** Through the pipe as the processes send it ('advanced' serialization is V8's structured clone). */
const roundTrip = (text: string, chunking: Chunking) => {
  const starts: number[] = [];
  const chunks = [...chunkText(text, chunking, starts)];
  const wire = toWire({ text, chunks }, starts);
  return { chunks, wire, back: fromWire(deserialize(serialize(wire)) as WirePrepared) };
};

const SMALL: Chunking = { max_chunk_size_tokens: 7, chunk_overlap_tokens: 3 };

describe('the ingestion reply on the wire', () => {
  it('sends chunks as spans of the text, and the server gets the same chunks', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    const { chunks, wire, back } = roundTrip(text, SMALL);
    expect(chunks.length).toBeGreaterThan(100);
    expect(wire.odd).toEqual([]);
    expect(back.chunks).toEqual(chunks);
    expect(back.text).toBe(text);
  });

  it('keeps every chunk exact where windows cut characters, beside U+FFFD of the text, and around lone surrogates', () => {
    // Emoji and CJK are several tokens a character: windows of a few tokens cut them in two, and
    // chunk.ts drops the halves (and with them a U+FFFD the text itself holds there); a lone surrogate
    // becomes U+FFFD in a chunk's UTF-8. Such chunks are not slices of the text: they travel whole.
    const pieces = ['😀👍🏽🇳🇴', '語語語', '\uFFFD\uFFFD', 'a\uD800b', '\uDC00', ' plain words here ', 'ΟΔΥΣΣΕΥΣ', '\uFFFD😀\uFFFD'];
    let text = '';
    for (let i = 0; i < 400; i++) text += pieces[(i * 7) % pieces.length] + (i % 3 ? '' : ' ');
    for (const chunking of [SMALL, { max_chunk_size_tokens: 3, chunk_overlap_tokens: 1 }]) {
      const { chunks, wire, back } = roundTrip(text, chunking);
      expect(wire.odd.length).toBeGreaterThan(0);
      expect(wire.odd.length).toBeLessThan(chunks.length);
      expect(back.chunks).toEqual(chunks);
    }
    // A token a chunk: a lone surrogate's or a cut character's chunk is empty, a slice like any other.
    const { chunks, back } = roundTrip(text, { max_chunk_size_tokens: 1, chunk_overlap_tokens: 0 });
    expect(chunks.some((c) => c.text === '')).toBe(true);
    expect(back.chunks).toEqual(chunks);
  });

  it('carries the vectors, and no vectors when none were made', () => {
    const text = 'words and more words '.repeat(50);
    const starts: number[] = [];
    const chunks = [...chunkText(text, SMALL, starts)];
    const vectors = Float32Array.from({ length: chunks.length * BUILTIN_DIMENSIONS }, (_, i) => i / 7);
    const back = fromWire(deserialize(serialize(toWire({ text, chunks, vectors }, starts))) as WirePrepared);
    expect([...back.vectors!]).toEqual([...vectors]);
    expect(fromWire(toWire({ text, chunks }, starts)).vectors).toBeUndefined();
  });

  it('refuses a reply that does not hold together', () => {
    const wire = toWire({ text: 'abc def', chunks: [{ text: 'abc', tokens: 1 }] }, [0]);
    expect(fromWire(wire).chunks).toEqual([{ text: 'abc', tokens: 1 }]);
    const bad: WirePrepared[] = [
      { ...wire, spans: Int32Array.of(0, 99, 1) },
      { ...wire, spans: Int32Array.of(5, 2, 1) },
      { ...wire, spans: Int32Array.of(-1, -1, 1) },
      { ...wire, spans: Int32Array.of(0, 3) },
      { ...wire, spans: [0, 3, 1] as unknown as Int32Array },
      { ...wire, text: 5 as unknown as string },
      { ...wire, vectors: new Float32Array(BUILTIN_DIMENSIONS - 1) },
      { ...wire, vectors: new Float64Array(BUILTIN_DIMENSIONS) as unknown as Float32Array },
    ];
    expect(fromWire({ ...wire, vectors: new Float32Array(BUILTIN_DIMENSIONS) }).vectors).toHaveLength(BUILTIN_DIMENSIONS);
    for (const w of bad) expect(() => fromWire(w)).toThrow('malformed reply');
  });
});
