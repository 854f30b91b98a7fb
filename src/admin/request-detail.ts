/**
 * What the request log keeps of a request that is its own (its id, URL, model, headers and small bodies)
 * as bytes in a buffer of its place in the log, written over by a later request (src/admin/request-log.ts).
 * Kept as strings and objects, they lived a second or two: long enough to be promoted out of V8's young
 * generation, and the old generation's steady growth kept its marking running, during which the young
 * collections promoted many times as much of the requests' other objects (docs/operations.md, "The
 * request log outside the heap"). Even a request's id and URL alone, kept as strings, did it. Bytes
 * outside the heap are written over and leave nothing to collect.
 *
 * Layout: the id, the URL, the model; the request's headers, its body, the reply's headers, its body.
 * Headers: a count (u32) then each name and value as texts (a list value joined with ", ", as the log
 * shows it). A text: its length in bytes (u32; NONE when absent) then its UTF-8 bytes.
 */

/** What a request leaves in the log: as the request and reply hold it. */
export interface RequestDetail {
  id: string;
  url: string;
  model: string | null;
  reqHeaders: Record<string, unknown>;
  /** A JSON body's text, another parsed body (kept as JSON), or undefined. */
  reqBody: unknown;
  resHeaders: Record<string, unknown>;
  resBody: string | null;
}

/** The headers and bodies, read back: headers as texts, bodies as text. */
export interface ReadDetail {
  reqHeaders: Record<string, string>;
  reqBody: string | undefined;
  resHeaders: Record<string, string>;
  resBody: string | null;
}

const NONE = 0xffffffff;
/** A place's first buffer: most requests' headers and bodies fit. */
const FIRST_SIZE = 2048;

/** The text a request body is kept as. */
function bodyText(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return body;
  try {
    return JSON.stringify(body) ?? String(body);
  } catch {
    return String(body);
  }
}

/** One place's bytes: written whole by each request that takes the place, read when someone opens the request. */
export class DetailBytes {
  private buf: Buffer | null = null;
  private end = 0;

  write(d: RequestDetail): void {
    this.end = 0;
    this.text(d.id);
    this.text(d.url);
    this.text(d.model);
    this.headers(d.reqHeaders);
    this.text(bodyText(d.reqBody));
    this.headers(d.resHeaders);
    this.text(d.resBody);
  }

  /** The request's id, URL and model. */
  head(): { id: string; url: string; model: string | null } {
    const r = new Reader(this.buf!);
    return { id: r.text()!, url: r.text()!, model: r.text() };
  }

  /** Whether this is the request `id`, read without making a string. */
  isRequest(id: string): boolean {
    return new Reader(this.buf!).textIs(id);
  }

  read(): ReadDetail {
    const r = new Reader(this.buf!);
    r.skip(3);
    const reqHeaders = r.headers();
    const reqBody = r.text() ?? undefined;
    const resHeaders = r.headers();
    return { reqHeaders, reqBody, resHeaders, resBody: r.text() };
  }

  /** The value of one reply header (lowercase name), without reading the rest into objects. */
  replyHeader(name: string): string | undefined {
    const r = new Reader(this.buf!);
    r.skip(3);
    r.skipHeaders();
    r.skip(1);
    return r.header(name);
  }

  /** Room for `bytes` more at the end, the buffer grown (doubled, its bytes kept) when short. */
  private room(bytes: number): Buffer {
    const need = this.end + bytes;
    if (this.buf === null || this.buf.length < need) {
      const grown = Buffer.allocUnsafeSlow(Math.max(FIRST_SIZE, need, (this.buf?.length ?? 0) * 2));
      this.buf?.copy(grown, 0, 0, this.end);
      this.buf = grown;
    }
    return this.buf;
  }

  private u32(n: number): void {
    this.room(4).writeUInt32LE(n, this.end);
    this.end += 4;
  }

  private text(s: string | null): void {
    if (s === null) return this.u32(NONE);
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    const buf = this.room(4 + s.length * 3);
    const written = buf.write(s, this.end + 4);
    buf.writeUInt32LE(written, this.end);
    this.end += 4 + written;
  }

  private headers(h: Record<string, unknown>): void {
    const countAt = this.end;
    this.u32(0);
    let count = 0;
    for (const name in h) {
      const value = h[name];
      if (value === undefined) continue;
      this.text(name);
      this.text(Array.isArray(value) ? value.join(', ') : String(value));
      count++;
    }
    this.buf!.writeUInt32LE(count, countAt);
  }
}

class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}

  private u32(): number {
    const n = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return n;
  }

  text(): string | null {
    const n = this.u32();
    if (n === NONE) return null;
    const s = this.buf.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }

  /** Whether the next text is `s` (an ASCII one compared byte by byte where it is); moves past it. */
  textIs(s: string): boolean {
    const n = this.u32();
    if (n === NONE) return false;
    const start = this.at;
    this.at += n;
    if (n !== s.length) return this.buf.toString('utf8', start, this.at) === s;
    for (let i = 0; i < n; i++) {
      const b = this.buf[start + i];
      if (b >= 0x80) return this.buf.toString('utf8', start, this.at) === s;
      if (b !== s.charCodeAt(i)) return false;
    }
    return true;
  }

  /** Moves past `texts` texts. */
  skip(texts: number): void {
    for (; texts > 0; texts--) {
      const n = this.u32();
      if (n !== NONE) this.at += n;
    }
  }

  headers(): Record<string, string> {
    const out: Record<string, string> = {};
    for (let count = this.u32(); count > 0; count--) out[this.text()!] = this.text()!;
    return out;
  }

  skipHeaders(): void {
    for (let count = this.u32(); count > 0; count--) this.skip(2);
  }

  header(name: string): string | undefined {
    for (let count = this.u32(); count > 0; count--) {
      if (this.text() === name) return this.text()!;
      this.skip(1);
    }
    return undefined;
  }
}
