import { isUtf8 } from 'node:buffer';
import { serialize, deserialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { chunkText, type Chunking } from './chunk.js';
import { BUILTIN_DIMENSIONS, fromBlob } from './embedder.js';
import { DEFAULT_LIMITS } from './limits.js';
import type { PreparedBytes } from './prepare.js';
import {
  Assembly,
  BUNDLED,
  chunksOf,
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

/** A text chunked as an ingestion process does (prepare.ts), without the embedder unless `vectors`. */
const prepared = (text: string, chunking: Chunking, vectors?: (count: number) => Float32Array): PreparedBytes & { starts: number[] } => {
  const starts: number[] = [];
  const spans: number[] = [];
  const utf8 = Buffer.from(text);
  const chunks = [...chunkText(text, chunking, starts, undefined, spans, utf8)];
  return { prepared: { text, chunks, ...(vectors && { vectors: vectors(chunks.length) }) }, starts, utf8, spans };
};

/** Through the pipe as the processes send it, a message at a time ('advanced' serialization is V8's structured clone). */
const roundTrip = (text: string, chunking: Chunking) => {
  const p = prepared(text, chunking);
  const wire = toWire(p);
  const assembly = new Assembly();
  for (const m of messagesOf(1, wire)) assembly.add(deserialize(serialize(m)) as ReplyPart);
  return { chunks: p.prepared.chunks, wire, back: assembly.done() };
};

const SMALL: Chunking = { max_chunk_size_tokens: 7, chunk_overlap_tokens: 3 };
const bytes = (s: string) => Buffer.from(s);

describe('the ingestion reply on the wire', () => {
  it("sends the text's UTF-8 and chunks as spans of it, and the server gets the same chunks", () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    const { chunks, wire, back } = roundTrip(text, SMALL);
    expect(chunks.length).toBeGreaterThan(100);
    expect(chunksOf(back)).toEqual(chunks);
    expect(back.text()).toBe(text);
    expect(Buffer.concat(back.parts).equals(wire.text)).toBe(true);
    // Each chunk's span, for the store (ingest-segments.ts).
    chunks.forEach((c, i) => expect(Buffer.from(text).toString('utf8', back.spans[2 * i], back.spans[2 * i + 1])).toBe(c.text));
  });

  it('keeps every chunk exact where windows cut characters, beside U+FFFD of the text, and around lone surrogates', () => {
    // Emoji and CJK are several tokens a character: windows of a few tokens cut them in two, and
    // chunk.ts drops the halves (and with them a U+FFFD the text itself holds there); a lone surrogate
    // becomes U+FFFD in a chunk's UTF-8. Every chunk is still a span of the text's UTF-8 (chunk.ts wholeBytes).
    const pieces = ['😀👍🏽🇳🇴', '語語語', '\uFFFD\uFFFD', 'a\uD800b', '\uDC00', ' plain words here ', 'ΟΔΥΣΣΕΥΣ', '\uFFFD😀\uFFFD'];
    let text = '';
    for (let i = 0; i < 400; i++) text += pieces[(i * 7) % pieces.length] + (i % 3 ? '' : ' ');
    for (const chunking of [SMALL, { max_chunk_size_tokens: 3, chunk_overlap_tokens: 1 }]) {
      const { chunks, back } = roundTrip(text, chunking);
      // Some chunks are no slice of the text's UTF-16 (a cut character's halves dropped beside a U+FFFD, a lone surrogate).
      const { starts } = prepared(text, chunking);
      expect(chunks.some((c, i) => text.slice(starts[i], starts[i] + c.text.length) !== c.text)).toBe(true);
      expect(chunksOf(back)).toEqual(chunks);
    }
    // A token a chunk: a lone surrogate's or a cut character's chunk is empty, a span like any other.
    const { chunks, back } = roundTrip(text, { max_chunk_size_tokens: 1, chunk_overlap_tokens: 0 });
    expect(chunks.some((c) => c.text === '')).toBe(true);
    expect(chunksOf(back)).toEqual(chunks);
  });

  it('carries the vectors, and no vectors when none were made', () => {
    const text = 'words and more words '.repeat(50);
    const withVectors = prepared(text, SMALL, (n) => Float32Array.from({ length: n * BUILTIN_DIMENSIONS }, (_, i) => i / 7));
    const back = fromWire(deserialize(serialize(toWire(withVectors))) as WirePrepared);
    expect(back.vectors!.flatMap((v) => [...fromBlob(v)])).toEqual([...withVectors.prepared.vectors!]);
    expect(fromWire(toWire(prepared(text, SMALL))).vectors).toBeUndefined();
  });

  it('sends the vectors as their bytes: each arrives as a view of the message, wherever in it they fall', () => {
    // A Float32Array arrives as a view only at a multiple of 4 in the message, else as a copy (node:v8).
    const vectors = Float32Array.from({ length: 2 * BUILTIN_DIMENSIONS }, (_, i) => i / 3);
    const aligned = new Set<number>();
    let floatsCopied = 0;
    for (let pad = 0; pad < 8; pad++) {
      const text = 'x'.repeat(pad) + ' words';
      const wire: WirePrepared = { text: bytes(text), spans: Int32Array.of(0, pad + 6, 2, 0, pad + 6, 2), vectors };
      const [part, message] = [...messagesOf(1, wire)].map((m) => serialize({ padding: text, ...m }));
      const batch = deserialize(message) as ReplyPart;
      const sent = (batch as { vectors: Uint8Array }).vectors;
      // A view of the message's own memory, not a copy.
      expect(sent.buffer).toBe(message.buffer);
      aligned.add((sent.byteOffset - message.byteOffset) % 4);
      // The same message with the vectors as floats: copied where they fall off a multiple of 4.
      const floatMessage = serialize({ padding: text, ...(batch as object), vectors });
      if ((deserialize(floatMessage) as { vectors: Float32Array }).vectors.buffer !== floatMessage.buffer) floatsCopied++;
      const assembly = new Assembly();
      assembly.add(deserialize(part) as ReplyPart);
      assembly.add(batch);
      const got = assembly.done().vectors!;
      expect(got.every((v) => v.buffer === message.buffer)).toBe(true);
      expect(got.flatMap((v) => [...fromBlob(v)])).toEqual([...vectors]);
    }
    // The paddings put the vectors at every offset modulo 4.
    expect(aligned.size).toBe(4);
    expect(floatsCopied).toBeGreaterThan(0);
  });

  it('refuses a reply that does not hold together', () => {
    const wire: WirePrepared = { text: bytes('abc dé f'), spans: Int32Array.of(0, 3, 1) };
    expect(chunksOf(fromWire(wire))).toEqual([{ text: 'abc', tokens: 1 }]);
    const bad: WirePrepared[] = [
      { ...wire, spans: Int32Array.of(0, 99, 1) },
      { ...wire, spans: Int32Array.of(5, 2, 1) },
      { ...wire, spans: Int32Array.of(-1, -1, 1) },
      { ...wire, spans: Int32Array.of(0, 3) },
      // Inside the é (bytes 5 and 6).
      { ...wire, spans: Int32Array.of(0, 6, 1) },
      { ...wire, spans: Int32Array.of(6, 7, 1) },
      { ...wire, spans: [0, 3, 1] as unknown as Int32Array },
      { ...wire, text: 'abc dé f' as unknown as Uint8Array },
      // Not UTF-8: a lone continuation byte, an overlong form, a surrogate's encoding.
      { ...wire, text: Buffer.from([0x61, 0x62, 0x63, 0x80]) },
      { ...wire, text: Buffer.from([0x61, 0x62, 0x63, 0xc0, 0xaf]) },
      { ...wire, text: Buffer.from([0x61, 0x62, 0x63, 0xed, 0xa0, 0x80]) },
      { ...wire, vectors: new Float32Array(BUILTIN_DIMENSIONS - 1) },
      { ...wire, vectors: new Float64Array(BUILTIN_DIMENSIONS) as unknown as Float32Array },
    ];
    expect(fromWire({ ...wire, vectors: new Float32Array(BUILTIN_DIMENSIONS) }).vectors?.map((v) => v.length)).toEqual([
      4 * BUILTIN_DIMENSIONS,
    ]);
    for (const w of bad) expect(() => fromWire(w)).toThrow('malformed reply');
  });

  it('sends a large text in parts and its chunks a batch at a time, each message bounded, and the server gets the same', () => {
    // Three parts, with a four-byte character where the first would end: parts are cut between characters.
    const plain = 'Paragraph of a long manual, with words now and then. ';
    const line = 'Paragraph of a long manual, with words and 😀 now and then. ';
    const text =
      plain.repeat(Math.ceil(TEXT_PART / plain.length)).slice(0, TEXT_PART - 2) +
      '😀' +
      line.repeat(Math.ceil((1.5 * TEXT_PART) / Buffer.byteLength(line)));
    const utf8 = Buffer.from(text);
    const parts = textParts(utf8);
    expect(Buffer.concat(parts).equals(utf8)).toBe(true);
    expect(parts[0]).toHaveLength(TEXT_PART - 2);
    expect(parts).toHaveLength(3);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(TEXT_PART);
      expect(p.length).toBeGreaterThan(TEXT_PART / 3);
      expect(isUtf8(p)).toBe(true);
    }
    const { chunks, wire, back } = roundTrip(text, { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 });
    const messages = [...messagesOf(1, wire)];
    expect(messages.filter((m) => 'part' in m)).toHaveLength(3);
    expect(chunks.length).toBeGreaterThan(3 * CHUNKS_A_MESSAGE);
    for (const m of messages) expect(serialize(m).length).toBeLessThan(TEXT_PART + 100_000);
    expect(back.text()).toBe(text);
    expect(back.parts).toEqual(parts);
    expect(chunksOf(back)).toEqual(chunks);
  });

  it('refuses messages out of order or past their bounds', () => {
    const text = bytes('abc def');
    const vectors = new Uint8Array(2 * 4 * BUILTIN_DIMENSIONS);
    const batch = { id: 1, spans: Int32Array.of(0, 3, 1, 4, 7, 1) };
    const bad: ReplyPart[][] = [
      [{ id: 1, part: text }, batch, { id: 1, part: bytes(' more') }],
      [{ id: 1, part: bytes('x'.repeat(TEXT_PART + 1)) }],
      [
        { id: 1, part: text },
        { ...batch, spans: new Int32Array(3 * (CHUNKS_A_MESSAGE + 1)) },
      ],
      [{ id: 1, part: text }, { ...batch, vectors }, batch],
      // Vectors are their bytes, two chunks' worth: a byte short, or as floats, is refused.
      [
        { id: 1, part: text },
        { ...batch, vectors: vectors.subarray(1) },
      ],
      [
        { id: 1, part: text },
        { ...batch, vectors: new Float32Array(2 * BUILTIN_DIMENSIONS) as unknown as Uint8Array },
      ],
      [{ id: 1, part: text }, batch, { ...batch, vectors }],
      [{ id: 1, part: 'abc' as unknown as Uint8Array }],
      // Each part is UTF-8 of its own: a character cut between two parts is refused.
      [
        { id: 1, part: bytes('é').subarray(0, 1) },
        { id: 1, part: bytes('é').subarray(1) },
      ],
    ];
    const good = new Assembly();
    for (const m of [
      { id: 1, part: bytes('abc ') },
      { id: 1, part: bytes('def') },
      { ...batch, vectors },
      { ...batch, vectors },
    ])
      good.add(m);
    expect(chunksOf(good.done()).map((c) => c.text)).toEqual(['abc', 'def', 'abc', 'def']);
    const small = new Assembly(10);
    small.add({ id: 1, part: text });
    expect(() => small.add({ id: 1, part: bytes('more') })).toThrow('malformed reply');
    const empty = new Assembly(10);
    expect(() => {
      for (let i = 0; i < 11; i++) empty.add({ id: 1, part: new Uint8Array(0) });
    }).toThrow('malformed reply');
    for (const messages of bad) {
      const assembly = new Assembly();
      expect(() => messages.forEach((m) => assembly.add(m))).toThrow('malformed reply');
    }
  });

  it("names a text file's text as the bytes the server sent (less a byte-order mark), and the server gets the same", () => {
    const text = 'Zorbania exports copper; Quillport ships it north. Café. '.repeat(6000);
    for (const sent of [Buffer.from(text), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])]) {
      // As prepare.ts has it: the text's UTF-8 is the last bytes of those sent.
      const p = { ...prepared(text, SMALL), utf8: sent.subarray(sent.length - Buffer.byteLength(text)) };
      const wire = toWire(p, sent);
      expect(wire.echo).toBe(sent.length - Buffer.byteLength(text));
      const messages = [...messagesOf(1, wire)];
      expect(messages.filter((m) => 'part' in m)).toEqual([]);
      // Sent in two parts, as storage reads them.
      const assembly = new Assembly(Infinity, [sent.subarray(0, 1000), sent.subarray(1000)]);
      for (const m of messages) assembly.add(deserialize(serialize(m)) as ReplyPart);
      const back = assembly.done();
      expect(back.text()).toBe(text);
      expect(back.parts.length).toBeGreaterThan(1);
      expect(back.parts.every((part) => part.length <= TEXT_PART)).toBe(true);
      expect(chunksOf(back)).toEqual(p.prepared.chunks);
    }
    // Text that is not the bytes sent (another buffer: a text with NULs dropped, a PDF's) goes as it is.
    const other = prepared(text, SMALL);
    expect(toWire(other, Buffer.from(text)).echo).toBeUndefined();
    expect(toWire(other).echo).toBeUndefined();
  });

  it('refuses an echo the server cannot check: no bytes sent, out of them, not UTF-8 from there, or beside parts', () => {
    const sent = [Buffer.from('naïve text')];
    const bad: [readonly Uint8Array[] | undefined, ReplyPart[]][] = [
      [undefined, [{ id: 1, echo: 0 }]],
      [sent, [{ id: 1, echo: 12 }]],
      [sent, [{ id: 1, echo: -1 }]],
      [sent, [{ id: 1, echo: 1.5 }]],
      [sent, [{ id: 1, echo: '0' as unknown as number }]],
      // Inside the ï: a continuation byte first.
      [sent, [{ id: 1, echo: 3 }]],
      [[Buffer.from([0x61, 0xff, 0x62])], [{ id: 1, echo: 0 }]],
      [
        sent,
        [
          { id: 1, part: bytes('a') },
          { id: 1, echo: 0 },
        ],
      ],
      [
        sent,
        [
          { id: 1, echo: 0 },
          { id: 1, part: bytes('a') },
        ],
      ],
      [
        sent,
        [
          { id: 1, echo: 0 },
          { id: 1, echo: 0 },
        ],
      ],
    ];
    for (const [bytesSent, messages] of bad) {
      const assembly = new Assembly(Infinity, bytesSent);
      expect(() => messages.forEach((m) => assembly.add(m))).toThrow('malformed reply');
    }
    // Within the budget too.
    expect(() => new Assembly(5, sent).add({ id: 1, echo: 0 })).toThrow('malformed reply');
    const good = new Assembly(Infinity, sent);
    good.add({ id: 1, echo: 4 });
    good.add({ id: 1, spans: Int32Array.of(0, 4, 1) });
    expect(chunksOf(good.done())).toEqual([{ text: 've t', tokens: 1 }]);
  });

  it('takes a bundle only as a small reply with its end last', () => {
    const part = { id: 2, part: bytes('abc') };
    const batch = { id: 2, spans: Int32Array.of(0, 3, 1) };
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
