import { serialize, deserialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { chunkText, type Chunking } from './chunk.js';
import { BUILTIN_DIMENSIONS } from './embedder.js';
import { DEFAULT_LIMITS } from './limits.js';
import {
  Assembly,
  BUNDLED,
  CHUNKS_A_MESSAGE,
  DATA_PART,
  fromWire,
  messagesOf,
  requestOf,
  TEXT_PART,
  textParts,
  toWire,
  unbundled,
  type ReplyBundle,
  type ReplyPart,
  type WirePrepared,
} from './ingest-protocol.js';

/** Through the pipe as the processes send it, a message at a time ('advanced' serialization is V8's structured clone). */
const roundTrip = (text: string, chunking: Chunking) => {
  const starts: number[] = [];
  const chunks = [...chunkText(text, chunking, starts)];
  const wire = toWire({ text, chunks }, starts);
  const assembly = new Assembly();
  for (const m of messagesOf(1, wire)) assembly.add(deserialize(serialize(m)) as ReplyPart);
  return { chunks, wire, back: assembly.done() };
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
    // Each chunk's span, for the store (ingest-segments.ts).
    chunks.forEach((c, i) => expect(text.slice(back.spans[2 * i], back.spans[2 * i + 1])).toBe(c.text));
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
      // A chunk sent whole has no span.
      const odd = new Set(wire.odd.map(([i]) => i));
      chunks.forEach((c, i) =>
        expect(odd.has(i) ? [back.spans[2 * i], back.spans[2 * i + 1]] : text.slice(back.spans[2 * i], back.spans[2 * i + 1])).toEqual(
          odd.has(i) ? [-1, -1] : c.text,
        ),
      );
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
    expect(back.vectors!.flatMap((v) => [...v])).toEqual([...vectors]);
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
    expect(fromWire({ ...wire, vectors: new Float32Array(BUILTIN_DIMENSIONS) }).vectors?.map((v) => v.length)).toEqual([
      BUILTIN_DIMENSIONS,
    ]);
    for (const w of bad) expect(() => fromWire(w)).toThrow('malformed reply');
  });

  it('sends a large text in parts and its chunks a batch at a time, each message bounded, and the server gets the same', () => {
    // Three parts, with a surrogate pair where the first would end: parts are cut between code points.
    const line = 'Paragraph of a long manual, with words and 😀 now and then. ';
    let text = line.repeat(Math.ceil((2.5 * TEXT_PART) / line.length));
    text = text.slice(0, TEXT_PART - 1) + '😀' + text.slice(TEXT_PART - 1);
    expect(textParts(text).join('')).toBe(text);
    const parts = textParts(text);
    expect(parts[0]).toHaveLength(TEXT_PART - 1);
    expect(parts).toHaveLength(3);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(TEXT_PART);
      expect(p.length).toBeGreaterThan(TEXT_PART / 3);
      expect(p.isWellFormed()).toBe(true);
    }
    const { chunks, wire, back } = roundTrip(text, { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 });
    const messages = [...messagesOf(1, wire)];
    expect(messages.filter((m) => 'part' in m)).toHaveLength(3);
    expect(chunks.length).toBeGreaterThan(3 * CHUNKS_A_MESSAGE);
    for (const m of messages) expect(serialize(m).length).toBeLessThan(2 * TEXT_PART + 100_000);
    expect(back.text).toBe(text);
    expect(back.parts).toEqual(textParts(text));
    expect(back.chunks).toEqual(chunks);
  });

  it('refuses messages out of order or past their bounds', () => {
    const text = 'abc def';
    const vectors = new Float32Array(2 * BUILTIN_DIMENSIONS);
    const batch = { id: 1, spans: Int32Array.of(0, 3, 1, 4, 7, 1), odd: [] as [number, string][] };
    const bad: ReplyPart[][] = [
      [{ id: 1, part: text }, batch, { id: 1, part: ' more' }],
      [{ id: 1, part: 'x'.repeat(TEXT_PART + 1) }],
      [
        { id: 1, part: text },
        { ...batch, spans: new Int32Array(3 * (CHUNKS_A_MESSAGE + 1)) },
      ],
      [{ id: 1, part: text }, { ...batch, vectors }, batch],
      [{ id: 1, part: text }, batch, { ...batch, vectors }],
      [{ id: 1, part: 5 as unknown as string }],
    ];
    const good = new Assembly();
    for (const m of [
      { id: 1, part: 'abc ' },
      { id: 1, part: 'def' },
      { ...batch, vectors },
      { ...batch, vectors },
    ])
      good.add(m);
    expect(good.done().chunks.map((c) => c.text)).toEqual(['abc', 'def', 'abc', 'def']);
    const small = new Assembly(10);
    small.add({ id: 1, part: 'abc def' });
    expect(() => small.add({ id: 1, part: 'more' })).toThrow('malformed reply');
    for (const messages of bad) {
      const assembly = new Assembly();
      expect(() => messages.forEach((m) => assembly.add(m))).toThrow('malformed reply');
    }
  });

  it('takes a bundle only as a small reply with its end last', () => {
    const part = { id: 2, part: 'abc' };
    const batch = { id: 2, spans: Int32Array.of(0, 3, 1), odd: [] as [number, string][] };
    const end = { id: 2, ok: true as const, rss: 1 };
    expect(unbundled({ id: 2, bundle: [part, batch, end] })).toEqual([part, batch, end]);
    expect(unbundled({ id: 2, bundle: [end] })).toEqual([end]);
    const bad: unknown[] = [
      [],
      [part, batch],
      [end, part],
      [part, end, end],
      [part, part, batch, end].slice(0, BUNDLED + 1),
      [{ ...part, id: 3 }, end],
      [null, end],
      'abc',
      { length: 1, 0: end },
    ];
    for (const bundle of bad) expect(() => unbundled({ id: 2, bundle } as ReplyBundle)).toThrow('malformed reply');
  });

  it("sends a file's bytes in parts of at most DATA_PART, small ones together, then the request", () => {
    const bytes = Buffer.from(Array.from({ length: 3 * DATA_PART + 5 }, (_, i) => (i * 31) & 0xff));
    const rest = { filename: 'a.txt', chunking: SMALL, limits: DEFAULT_LIMITS, embed: true };
    for (const data of [
      bytes,
      [bytes.subarray(0, 10), bytes.subarray(10, DATA_PART + 7), bytes.subarray(DATA_PART + 7)],
      splitEvery(bytes, 65_536),
    ]) {
      const messages = [...requestOf(3, { ...rest, data })];
      const parts = messages.slice(0, -1).map((m) => (m as { data: Uint8Array }).data);
      expect(parts.every((p) => p.length <= DATA_PART)).toBe(true);
      // As the pipe carries them: a part sent as a view of a larger buffer carries its own bytes only.
      expect(messages.every((m) => serialize(m).length < DATA_PART + 1000)).toBe(true);
      expect(parts.length).toBeLessThanOrEqual(5);
      expect(Buffer.concat(parts).equals(bytes)).toBe(true);
      expect(messages.at(-1)).toEqual({ id: 3, ...rest });
    }
    // A file on this machine's disk: only where it is, for the process to read.
    expect([...requestOf(4, { ...rest, data: { path: '/data/files/file-a', bytes: 12 } })]).toEqual([
      { id: 4, ...rest, at: { path: '/data/files/file-a', bytes: 12 } },
    ]);
  });
});

const splitEvery = (b: Buffer, n: number) => Array.from({ length: Math.ceil(b.length / n) }, (_, i) => b.subarray(i * n, (i + 1) * n));
