import { isUtf8 } from 'node:buffer';
import { BUILTIN_DIMENSIONS } from './embedder.js';
import type { PreparedBytes, PrepareRequest, Refusal } from './prepare.js';

/** The messages between the server (ingest-pool.ts) and an ingestion process (ingest-child.ts). */
export type ChildRequest = { id: number; at?: FileAt } & Omit<PrepareRequest, 'data'>;
/**
 * The file's bytes go first, in parts of at most DATA_PART bytes: one message of 8 MB held the server's
 * thread for 100 ms to encode, and messages of 1 MiB (copied when gathered, when encoded and when Node
 * reads them in) still made tasks of 20–30 ms.
 */
export type RequestPart = { id: number; data: Uint8Array };
export const DATA_PART = 1 << 19;

/**
 * A file on this machine's disk (files/storage/fs.ts, with SQLite), which the process reads itself: sent
 * through the pipe, a file of 512 KB reached a process 4–7 ms after it was free, the pipe holding 200 KB and
 * refilled at each turn of a server busy writing the file before. `bytes`: its size, checked.
 */
export interface FileAt {
  path: string;
  bytes: number;
}

/** The file's bytes as the server read them (one buffer, or the parts storage read), or where they are. */
export type FileData = Uint8Array | readonly Uint8Array[] | FileAt;

/** The messages of a request: its bytes in parts of at most DATA_PART (small ones sent together), then the rest. */
export function* requestOf(id: number, req: Omit<PrepareRequest, 'data'> & { data: FileData }): Generator<RequestPart | ChildRequest> {
  const { data, ...rest } = req;
  if ('path' in data) return void (yield { id, ...rest, at: data });
  let group: Uint8Array[] = [];
  let size = 0;
  for (const buffer of data instanceof Uint8Array ? [data] : data) {
    for (let at = 0; at < buffer.length; at += DATA_PART) {
      const piece = buffer.subarray(at, at + DATA_PART);
      if (size + piece.length > DATA_PART) {
        yield { id, data: gathered(group) };
        group = [];
        size = 0;
      }
      group.push(piece);
      size += piece.length;
    }
  }
  if (size) yield { id, data: gathered(group) };
  yield { id, ...rest };
}
// One piece goes as it is (Node's serializer writes a view's bytes only); several are gathered into one.
const gathered = (group: Uint8Array[]) => (group.length === 1 ? group[0] : Buffer.concat(group));
/** A reply's end: after its ReplyParts when the file was prepared. */
export type ChildReply = { id: number; rss: number } & ({ ok: true } | { ok: false; refusal: Refusal } | { ok: false; error: string });

/**
 * After a file that left an ingestion process above this share of its memory limit, the process is
 * replaced (V8 keeps what a big file made it grow). The process first collects its garbage, and reports
 * its size after: a file's arrays are freed only by a full collection, and a replaced process starts cold.
 */
export const RETIRE_AT = 0.5;

/** What an ingestion process writes to stderr before it kills itself past the memory limit. */
export const MEMORY_MARK = 'standin-ingest: memory limit';

/**
 * A prepared file as it crosses the pipe: its text as UTF-8 bytes, and each chunk as its span of them, not
 * a copy of it. Chunks overlap (auto: half of each is the next one's), so their texts were twice the text
 * again. Bytes, not strings: the server stores UTF-8 (PostgreSQL's COPY takes the bytes as they are), and a
 * string through the pipe cost it a decode into a new string (two bytes a character for most texts: one
 * accented name in a part makes the part so) and an encode back; a buffer arrives as a view of what was read.
 */
export interface WirePrepared {
  /** The text's UTF-8. */
  text: Uint8Array;
  /**
   * Where the text's UTF-8 starts in the bytes the server sent (a text file's text is its bytes, less a
   * byte-order mark): the server takes its own bytes from there, and the text does not cross the pipe again.
   */
  echo?: number;
  /** Three numbers a chunk: its first byte and its end in `text`, and its tokens. */
  spans: Int32Array;
  vectors?: Float32Array;
}

/**
 * The reply for a prepared file (prepare.ts): its text's UTF-8 and the chunks' spans of it. `sent`: the
 * file's bytes as the server sent them; where the text's UTF-8 is their last bytes, the reply names where
 * it starts in them instead (`echo`).
 */
export function toWire(p: PreparedBytes, sent?: Uint8Array): WirePrepared {
  const { prepared, utf8, spans } = p;
  const { chunks } = prepared;
  const out = new Int32Array(3 * chunks.length);
  for (let i = 0; i < chunks.length; i++) {
    out[3 * i] = spans[2 * i];
    out[3 * i + 1] = spans[2 * i + 1];
    out[3 * i + 2] = chunks[i].tokens;
  }
  const echo = sent && utf8.buffer === sent.buffer && utf8.byteOffset + utf8.length === sent.byteOffset + sent.length;
  return { text: utf8, spans: out, vectors: prepared.vectors, ...(echo && { echo: utf8.byteOffset - sent.byteOffset }) };
}

/**
 * Bytes of the text a message at most; the server stores the text in parts no larger (store.ts), a
 * statement each: SQLite took 3–8 ms (far more on a busy server) to write a part of 512 Ki characters.
 */
export const TEXT_PART = 1 << 18;
/** Chunks a message at most. */
export const CHUNKS_A_MESSAGE = 128;

/**
 * A reply is sent as several messages, each decoded on the server's thread as a task of its own: the
 * text in parts of at most TEXT_PART bytes, then the chunks CHUNKS_A_MESSAGE at a time (their spans
 * still count from the text's start), then the end (ChildReply). Decoded whole, a file of 8 MB held the
 * server's thread for over 100 ms.
 */
export type ReplyPart =
  { id: number; part: Uint8Array } | { id: number; echo: number } | { id: number; spans: Int32Array; vectors?: Uint8Array };

/** The parts of a text's UTF-8, each at most TEXT_PART bytes and cut between two characters (each part is UTF-8 of its own). */
export function textParts(utf8: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let at = 0;
  do {
    let end = Math.min(utf8.length, at + TEXT_PART);
    while (end < utf8.length && end > at + 1 && (utf8[end] & 0xc0) === 0x80) end--;
    parts.push(utf8.subarray(at, end));
    at = end;
  } while (at < utf8.length);
  return parts;
}

/** The messages of a reply before its end (see ReplyPart). */
export function* messagesOf(id: number, w: WirePrepared): Generator<ReplyPart> {
  if (w.echo !== undefined) yield { id, echo: w.echo };
  else for (const part of textParts(w.text)) yield { id, part };
  const count = w.spans.length / 3;
  for (let from = 0; from < count; from += CHUNKS_A_MESSAGE) {
    const to = Math.min(count, from + CHUNKS_A_MESSAGE);
    const spans = w.spans.subarray(3 * from, 3 * to);
    // The vectors as their bytes (float32, as stored): a Float32Array arrives as a view only where the
    // message puts it at a multiple of 4, else it is copied into a new buffer (three times in four).
    const v =
      w.vectors &&
      new Uint8Array(w.vectors.buffer, w.vectors.byteOffset + 4 * from * BUILTIN_DIMENSIONS, 4 * (to - from) * BUILTIN_DIMENSIONS);
    yield { id, spans, ...(v && { vectors: v }) };
  }
}

/**
 * A small reply's messages and its end as one message: every message is a write to the pipe in the
 * process and a task of the server's thread, which for a file of a few KB cost more than its messages'
 * content (the reply of a file of 2 KB was three messages). A bundle holds at most BUNDLED messages,
 * whose last is the end.
 */
export type ReplyBundle = { id: number; bundle: (ReplyPart | ChildReply)[] };
/** Messages a bundle holds at most: one text part, one message of chunks, the end. */
export const BUNDLED = 3;

/** The messages of a bundle; throws when it does not hold together (a process is not trusted). */
export function unbundled(m: ReplyBundle): (ReplyPart | ChildReply)[] {
  const { bundle } = m;
  const ok =
    Array.isArray(bundle) &&
    bundle.length <= BUNDLED &&
    bundle.every((b, i) => typeof b === 'object' && b !== null && b.id === m.id && 'ok' in b === (i === bundle.length - 1));
  if (!ok || !bundle.length) throw malformed();
  return bundle;
}

/** A prepared file as the server has it: the text's UTF-8 in its parts, and each chunk's vector on its own. */
export interface Received {
  parts: Buffer[];
  /** Two numbers a chunk: its first byte and its end in the text (the parts one after the other). */
  spans: Int32Array;
  /** Each chunk's tokens. */
  tokens: Int32Array;
  /** Chunk `i`'s text (decoded when asked: the builtin embedder's chunks on PostgreSQL never are). */
  textOf(i: number): string;
  /** The whole text, decoded. */
  text(): string;
  /** Each chunk's vector as stored (embedder.ts toBlob: float32, little-endian). */
  vectors?: Buffer[];
}

const malformed = () => new Error('the ingestion process sent a malformed reply');

/**
 * The server's side: a reply put together message by message. A reply that does not hold together throws
 * (the process reads hostile files: it is not trusted to be well): each part must be UTF-8 of its own, and
 * each chunk's span must fall between two characters of the text.
 */
export class Assembly {
  /** What the reply held so far: bytes of text, and a vector's bytes a chunk. */
  private size = 0;
  /**
   * `budget`: the most the reply may hold, in bytes (an ingestion process could not hold more: its memory
   * limit). `sent`: the file's bytes as the server sent them, which a reply may name as its text (`echo`).
   */
  constructor(
    private readonly budget = Infinity,
    private readonly sent?: readonly Uint8Array[],
  ) {}

  private count(n: number) {
    this.size += n;
    if (this.size > this.budget) throw malformed();
  }

  private readonly parts: Buffer[] = [];
  /** Whether the text is the bytes sent (`echo`): no part may follow. */
  private echoed = false;
  /** Where each part ends in the text. */
  private readonly ends: number[] = [];
  private readonly spans: number[] = [];
  private readonly tokens: number[] = [];
  private vectors?: Buffer[];

  add(m: ReplyPart): void {
    if ('part' in m) {
      const { part } = m;
      if (!(part instanceof Uint8Array) || part.length > TEXT_PART || this.echoed) throw malformed();
      this.addPart(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
      return;
    }
    if ('echo' in m) {
      // The bytes sent, from `echo` on, in parts as the process would have sent them: once, before any part.
      const { echo } = m;
      if (!this.sent || this.parts.length || !Number.isInteger(echo) || echo < 0) throw malformed();
      const sent = this.sent.length === 1 ? this.sent[0] : Buffer.concat(this.sent);
      if (echo > sent.length) throw malformed();
      this.echoed = true;
      for (const part of textParts(sent.subarray(echo))) this.addPart(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
      return;
    }
    const { spans } = m;
    if (!(spans instanceof Int32Array) || spans.length % 3 !== 0 || spans.length > 3 * CHUNKS_A_MESSAGE) throw malformed();
    const count = spans.length / 3;
    const bytes = 4 * BUILTIN_DIMENSIONS;
    this.count(count * bytes);
    const { vectors } = m;
    if (vectors !== undefined) {
      if (!(vectors instanceof Uint8Array) || vectors.length !== count * bytes || (this.tokens.length && !this.vectors)) throw malformed();
      this.vectors ??= [];
      for (let i = 0; i < count; i++) this.vectors.push(Buffer.from(vectors.buffer, vectors.byteOffset + i * bytes, bytes));
    } else if (this.vectors) throw malformed();
    for (let i = 0; i < count; i++) {
      const start = spans[3 * i];
      const end = spans[3 * i + 1];
      if (!(start >= 0 && start <= end && this.between(start) && this.between(end))) throw malformed();
      this.spans.push(start, end);
      this.tokens.push(spans[3 * i + 2]);
    }
  }

  private addPart(bytes: Buffer) {
    if (this.tokens.length || !isUtf8(bytes)) throw malformed();
    // An empty part counts as a byte: a process sending nothing but empty parts meets the budget too.
    this.count(Math.max(1, bytes.length));
    this.parts.push(bytes);
    this.ends.push((this.ends.at(-1) ?? 0) + bytes.length);
  }

  private between(i: number): boolean {
    return i <= (this.ends.at(-1) ?? 0) && betweenCharacters(this.parts, this.ends, i);
  }

  done(): Received {
    const parts = this.parts.length ? this.parts : [Buffer.alloc(0)];
    const { ends } = this;
    const spans = Int32Array.from(this.spans);
    /** The text's bytes [start, end) decoded, from the parts that hold them. */
    const textOf = (c: number) => {
      let start = spans[2 * c];
      const end = spans[2 * c + 1];
      let out = '';
      for (let p = partAt(ends, start); start < end; p++) {
        const from = ends[p] - parts[p].length;
        const to = Math.min(end, ends[p]);
        out += parts[p].toString('utf8', start - from, to - from);
        start = to;
      }
      return out;
    };
    const text = () => Buffer.concat(parts).toString('utf8');
    const received: Received = { parts, spans, tokens: Int32Array.from(this.tokens), textOf, text };
    return this.vectors ? { ...received, vectors: this.vectors } : received;
  }
}

/** The part that holds byte `i` of a text whose parts end at `ends` (binary search: spans need not come in order). */
export function partAt(ends: readonly number[], i: number): number {
  let lo = 0;
  let hi = ends.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid] > i) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Whether byte `i` of a text (its UTF-8 in `parts`, each UTF-8 of its own, ending at `ends`) falls between
 * two characters: where one starts, or at either end of the text.
 */
export function betweenCharacters(parts: readonly Uint8Array[], ends: readonly number[], i: number): boolean {
  if (i <= 0 || i >= (ends.at(-1) ?? 0)) return true;
  const p = partAt(ends, i);
  return (parts[p][i - (ends[p] - parts[p].length)] & 0xc0) !== 0x80;
}

/** A whole reply put together as the server does, message by message, `sent` the bytes the server sent (tests and benches). */
export function fromWire(w: WirePrepared, sent?: Uint8Array): Received {
  if (!(w?.text instanceof Uint8Array) || !(w.spans instanceof Int32Array) || w.spans.length % 3 !== 0) throw malformed();
  if (w.vectors !== undefined && !(w.vectors instanceof Float32Array && w.vectors.length === (w.spans.length / 3) * BUILTIN_DIMENSIONS))
    throw malformed();
  const assembly = new Assembly(Infinity, sent && [sent]);
  for (const m of messagesOf(0, w)) assembly.add(m);
  return assembly.done();
}

/** A reply's chunks as prepareFile made them (tests and benches). */
export const chunksOf = (r: Received): { text: string; tokens: number }[] =>
  Array.from(r.tokens, (tokens, i) => ({ text: r.textOf(i), tokens }));
