/**
 * What the request log keeps of a request that is its own (its id, URL, model, headers and small bodies)
 * as bytes in a buffer of its place in the log, written over by a later request (src/admin/request-log.ts).
 * Kept as strings and objects, they lived a second or two: long enough to be promoted out of V8's young
 * generation, and the old generation's steady growth kept its marking running, during which the young
 * collections promoted many times as much of the requests' other objects (docs/operations.md, "What the
 * request log costs the collector"). Even a request's id and URL alone, kept as strings, did it. Bytes
 * outside the heap are written over and leave nothing to collect.
 *
 * A request's texts are joined into one string and written with one call (a call into Node's buffer code
 * costs more than the bytes it copies: twenty calls a request cost more than the collections they saved).
 * The texts' lengths, in UTF-16 code units, go to a typed array of the place: the id, the URL, the model;
 * the request's header count, then each name's and value's; its body; the reply's header count, names and
 * values; its body. An absent text is NONE. A list value is joined with ", ", as the log shows it.
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
/** A place's first buffer (bytes) and lengths (texts): most requests' fit. */
const FIRST_BYTES = 2048;
const FIRST_TEXTS = 32;

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
  private buf: Buffer = Buffer.allocUnsafeSlow(FIRST_BYTES);
  /** The bytes written. */
  private bytes = 0;
  /** Each text's length in UTF-16 code units (NONE: absent), in the order of the layout. */
  private lengths = new Uint32Array(FIRST_TEXTS);
  private texts = 0;
  /** Every text ASCII: a text's code units are its bytes, read without decoding the rest. */
  private ascii = true;

  write(d: RequestDetail): void {
    // A place that held a request with many headers goes back to its first size.
    if (this.lengths.length > 8 * FIRST_TEXTS && this.texts * 4 < this.lengths.length) this.lengths = new Uint32Array(FIRST_TEXTS);
    this.texts = 0;
    let all = this.text(d.id) + this.text(d.url) + this.text(d.model);
    all += this.headers(d.reqHeaders);
    all += this.text(bodyText(d.reqBody));
    all += this.headers(d.resHeaders);
    all += this.text(d.resBody);
    // A lone surrogate would be written as three bytes and read back as U+FFFD, one code unit: it becomes
    // U+FFFD here, so the lengths hold.
    if (!all.isWellFormed()) all = all.toWellFormed();
    this.bytes = this.buf.write(all);
    // Within 3 bytes of the end, the next character may not have fitted: written again in a buffer with
    // room to spare (the next request of the same kind fits). One much larger than what it holds (a large
    // request's) is made small again.
    const size = this.buf.length;
    if (this.bytes > size - 4 || (size > 8 * FIRST_BYTES && this.bytes * 4 < size)) {
      this.buf = Buffer.allocUnsafeSlow(Buffer.byteLength(all) + FIRST_BYTES);
      this.bytes = this.buf.write(all);
    }
    this.ascii = this.bytes === all.length;
  }

  /** The request's id, URL and model. */
  head(): { id: string; url: string; model: string | null } {
    const r = this.reader();
    return { id: r.text()!, url: r.text()!, model: r.text() };
  }

  /** Whether this is the request `id`, read without making a string when the texts are ASCII. */
  isRequest(id: string): boolean {
    const n = this.lengths[0];
    if (n !== id.length) return false;
    if (!this.ascii) return this.reader().text() === id;
    for (let i = 0; i < n; i++) if (this.buf[i] !== id.charCodeAt(i)) return false;
    return true;
  }

  read(): ReadDetail {
    const r = this.reader();
    r.skip(3);
    const reqHeaders = r.headers();
    const reqBody = r.text() ?? undefined;
    const resHeaders = r.headers();
    return { reqHeaders, reqBody, resHeaders, resBody: r.text() };
  }

  /** The value of one reply header (lowercase name), without reading the rest into objects. */
  replyHeader(name: string): string | undefined {
    const r = this.reader();
    r.skip(3);
    r.skipHeaders();
    r.skip(1);
    return r.header(name);
  }

  /** A text's length recorded, the text answered (absent: ''). */
  private text(s: string | null): string {
    this.length(s === null ? NONE : s.length);
    return s ?? '';
  }

  private length(n: number): void {
    if (this.texts === this.lengths.length) {
      const grown = new Uint32Array(this.texts * 2);
      grown.set(this.lengths);
      this.lengths = grown;
    }
    this.lengths[this.texts++] = n;
  }

  /** The headers' count and texts recorded, the texts answered joined. */
  private headers(h: Record<string, unknown>): string {
    const countAt = this.texts;
    this.length(0);
    let count = 0;
    let all = '';
    for (const name in h) {
      const value = h[name];
      if (value === undefined) continue;
      all += this.text(name) + this.text(Array.isArray(value) ? value.join(', ') : String(value));
      count++;
    }
    this.lengths[countAt] = count;
    return all;
  }

  /** A reader of the texts: straight from the bytes when ASCII, else from them decoded whole. */
  private reader(): Reader {
    return new Reader(this.ascii ? null : this.buf.toString('utf8', 0, this.bytes), this.buf, this.lengths);
  }
}

class Reader {
  /** The next length's index, and its text's start (code units). */
  private i = 0;
  private at = 0;
  constructor(
    private readonly decoded: string | null,
    private readonly buf: Buffer,
    private readonly lengths: Uint32Array,
  ) {}

  text(): string | null {
    const n = this.lengths[this.i++];
    if (n === NONE) return null;
    const start = this.at;
    this.at += n;
    return this.decoded === null ? this.buf.toString('latin1', start, this.at) : this.decoded.slice(start, this.at);
  }

  /** Moves past `texts` texts. */
  skip(texts: number): void {
    for (; texts > 0; texts--) {
      const n = this.lengths[this.i++];
      if (n !== NONE) this.at += n;
    }
  }

  skipHeaders(): void {
    this.skip(2 * this.lengths[this.i++]);
  }

  headers(): Record<string, string> {
    const out: Record<string, string> = {};
    for (let count = this.lengths[this.i++]; count > 0; count--) out[this.text()!] = this.text()!;
    return out;
  }

  header(name: string): string | undefined {
    for (let count = this.lengths[this.i++]; count > 0; count--) {
      if (this.text() === name) return this.text()!;
      this.skip(1);
    }
    return undefined;
  }
}
