import { BUILTIN_DIMENSIONS } from './embedder.js';
import type { Prepared, PrepareRequest, Refusal } from './prepare.js';

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
 * Characters of the text a message at most; the server stores the text in the same parts (store.ts), a
 * statement each: SQLite took 3–8 ms (far more on a busy server) to write a part of 512 Ki characters.
 */
export const TEXT_PART = 1 << 18;
/** Chunks a message at most. */
export const CHUNKS_A_MESSAGE = 128;

/**
 * A reply is sent as several messages, each decoded on the server's thread as a task of its own: the
 * text in parts of at most TEXT_PART characters, then the chunks CHUNKS_A_MESSAGE at a time (their spans
 * still count from the text's start; `odd` from the message's first chunk), then the end (ChildReply).
 * Decoded whole, a file of 8 MB held the server's thread for over 100 ms.
 */
export type ReplyPart = { id: number; part: string } | { id: number; spans: Int32Array; odd: [number, string][]; vectors?: Float32Array };

/** The parts of a text, each at most TEXT_PART characters and cut between two code points (a lone half would not survive UTF-8). */
export function textParts(text: string): string[] {
  const parts: string[] = [];
  let at = 0;
  do {
    let end = Math.min(text.length, at + TEXT_PART);
    if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    parts.push(text.slice(at, end));
    at = end;
  } while (at < text.length);
  return parts;
}

/** The messages of a reply before its end (see ReplyPart). */
export function* messagesOf(id: number, w: WirePrepared): Generator<ReplyPart> {
  for (const part of textParts(w.text)) yield { id, part };
  const count = w.spans.length / 3;
  let o = 0;
  for (let from = 0; from < count; from += CHUNKS_A_MESSAGE) {
    const to = Math.min(count, from + CHUNKS_A_MESSAGE);
    const odd: [number, string][] = [];
    for (; o < w.odd.length && w.odd[o][0] < to; o++) odd.push([w.odd[o][0] - from, w.odd[o][1]]);
    const spans = w.spans.subarray(3 * from, 3 * to);
    yield { id, spans, odd, ...(w.vectors && { vectors: w.vectors.subarray(from * BUILTIN_DIMENSIONS, to * BUILTIN_DIMENSIONS) }) };
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

/** A prepared file as the server has it: the text also in its parts, and each chunk's vector on its own. */
export interface Received {
  text: string;
  parts: string[];
  chunks: Prepared['chunks'];
  /** Two numbers a chunk: its start and end in `text`, or -1 and -1 for a chunk sent whole (no slice of it). */
  spans: Int32Array;
  vectors?: Float32Array[];
}

const malformed = () => new Error('the ingestion process sent a malformed reply');

/**
 * The server's side: a reply put together message by message. Chunk texts are slices of the text's parts
 * (V8 shares their characters). A reply that does not hold together throws (the process reads hostile
 * files: it is not trusted to be well).
 */
export class Assembly {
  /** What the reply held so far: characters of text, and a vector's bytes a chunk. */
  private size = 0;
  /** `budget`: the most the reply may hold, in those units (an ingestion process could not hold more: its memory limit). */
  constructor(private readonly budget = Infinity) {}

  private count(n: number) {
    this.size += n;
    if (this.size > this.budget) throw malformed();
  }

  private readonly parts: string[] = [];
  /** Where each part ends in the text. */
  private readonly ends: number[] = [];
  private readonly chunks: Prepared['chunks'] = [];
  private readonly spans: number[] = [];
  private vectors?: Float32Array[];

  add(m: ReplyPart): void {
    if ('part' in m) {
      if (typeof m.part !== 'string' || m.part.length > TEXT_PART || this.chunks.length) throw malformed();
      this.count(m.part.length);
      this.parts.push(m.part);
      this.ends.push((this.ends.at(-1) ?? 0) + m.part.length);
      return;
    }
    const { spans, odd } = m;
    if (!(spans instanceof Int32Array) || spans.length % 3 !== 0 || spans.length > 3 * CHUNKS_A_MESSAGE || !Array.isArray(odd))
      throw malformed();
    const count = spans.length / 3;
    this.count(count * 4 * BUILTIN_DIMENSIONS + odd.reduce((n, o) => n + (typeof o?.[1] === 'string' ? o[1].length : 0), 0));
    const first = this.chunks.length;
    if (m.vectors !== undefined) {
      if (!(m.vectors instanceof Float32Array) || m.vectors.length !== count * BUILTIN_DIMENSIONS || (first && !this.vectors))
        throw malformed();
      this.vectors ??= [];
      for (let i = 0; i < count; i++) this.vectors.push(m.vectors.subarray(i * BUILTIN_DIMENSIONS, (i + 1) * BUILTIN_DIMENSIONS));
    } else if (this.vectors) throw malformed();
    const whole = new Map(odd);
    const length = this.ends.at(-1) ?? 0;
    for (let i = 0; i < count; i++) {
      const start = spans[3 * i];
      const end = spans[3 * i + 1];
      const sliced = start >= 0 && start <= end && end <= length;
      const chunk = sliced ? this.slice(start, end) : whole.get(i);
      if (typeof chunk !== 'string') throw malformed();
      this.chunks.push({ text: chunk, tokens: spans[3 * i + 2] });
      this.spans.push(sliced ? start : -1, sliced ? end : -1);
    }
  }

  /** The text's characters [start, end), from the parts that hold them. */
  private slice(start: number, end: number): string {
    // The first part ending after `start` (binary search: spans need not come in order).
    let lo = 0;
    let hi = this.ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ends[mid] > start) hi = mid;
      else lo = mid + 1;
    }
    let out = '';
    for (let p = lo; start < end; p++) {
      const from = this.ends[p] - this.parts[p].length;
      const to = Math.min(end, this.ends[p]);
      out += this.parts[p].slice(start - from, to - from);
      start = to;
    }
    return out;
  }

  done(): Received {
    const parts = this.parts.length ? this.parts : [''];
    // Joined with `+`: V8 keeps a rope of the parts, where `join` copied them (100 ms for 8 MB, on the server's thread).
    let text = '';
    for (const part of parts) text += part;
    const received: Received = { text, parts, chunks: this.chunks, spans: Int32Array.from(this.spans) };
    return this.vectors ? { ...received, vectors: this.vectors } : received;
  }
}

/** A whole reply put together as the server does, message by message (tests and benches). */
export function fromWire(w: WirePrepared): Received {
  if (typeof w?.text !== 'string' || !(w.spans instanceof Int32Array) || w.spans.length % 3 !== 0 || !Array.isArray(w.odd))
    throw malformed();
  if (w.vectors !== undefined && !(w.vectors instanceof Float32Array && w.vectors.length === (w.spans.length / 3) * BUILTIN_DIMENSIONS))
    throw malformed();
  const assembly = new Assembly();
  for (const m of messagesOf(0, w)) assembly.add(m);
  return assembly.done();
}
