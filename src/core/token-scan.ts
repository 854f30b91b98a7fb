/**
 * token-scan.as.ts's WebAssembly, driven: a text's units copied into its memory, scanned there, and what it
 * leaves to JavaScript (a pre-token to merge, a long one, a character outside the Basic Multilingual
 * Plane, more room for the ends) done here. tokenizer.ts's `tokenEnds` uses it where the build wrote the
 * module (dist/token-scan.wasm); the ends are the same either way.
 */
export interface TokenEndsParts {
  /** The BMP's classes (pretokens.ts), 64 KB. */
  classes: Uint8Array;
  /** Each token's length in bytes (vocabulary.ts). */
  lengths: Uint8Array;
  /** The classes of a text with surrogate pairs (pretokens.ts `classesOf`). */
  classesOf(text: string): Uint8Array;
  /** The tokens of a pre-token of at most LONG units. */
  merge(text: string, from: number, to: number): number[];
  /** The tokens of a longer one, a block at a time. */
  blocks(piece: string): Iterable<number[]>;
}

interface Exports {
  memory: WebAssembly.Memory;
  setUp(table: number, lengths: number, slots: number, pool: number, merged: number): void;
  classes(text: number, k: number, n: number): number;
  resume(from: number, tokens: number, bytes: number): void;
  scan(text: number, k: number, n: number, ends: number, room: number, max: number): number;
  add(text: number, n: number): void;
  position(): number;
  pieceEnd(): number;
  tokens(): number;
  bytes(): number;
}

const [DONE, MISS, LONG_PIECE, FULL, OVER] = [0, 1, 2, 3, 4];
const PAGE = 65_536;
/** The cache's slots and pool, in bytes (token-scan.as.ts SLOTS and MAX_POOL), and the buffer of one pre-token's tokens. */
const SLOTS_BYTES = 16 << 19;
const POOL_BYTES = 2 << 23;
const MERGED_BYTES = 4 * 1024;

/** Where a text's units, classes and ends go, past the module's tables. */
export type TokenEnds = (text: string, max: number) => { ends: Uint32Array; count: number } | undefined;

/** The module of `wasm` set up with `parts`: a function giving tokenizer.ts's `tokenEnds`. */
export function tokenEndsOf(wasm: Uint8Array, parts: TokenEndsParts): TokenEnds {
  const x = new WebAssembly.Instance(new WebAssembly.Module(wasm as Uint8Array<ArrayBuffer>)).exports as unknown as Exports;
  const lengthsAt = PAGE;
  const slotsAt = align(lengthsAt + parts.lengths.length);
  const poolAt = slotsAt + SLOTS_BYTES;
  const mergedAt = poolAt + POOL_BYTES;
  const textAt = mergedAt + MERGED_BYTES;
  const size = (bytes: number) => {
    const more = Math.ceil(bytes / PAGE) - x.memory.buffer.byteLength / PAGE;
    if (more > 0) x.memory.grow(more);
  };
  size(textAt);
  new Uint8Array(x.memory.buffer, 0, PAGE).set(parts.classes);
  new Uint8Array(x.memory.buffer, lengthsAt, parts.lengths.length).set(parts.lengths);
  x.setUp(0, lengthsAt, slotsAt, poolAt, mergedAt);

  return (text, max) => {
    const n = text.length;
    const kAt = align(textAt + 2 * n);
    const endsAt = align(kAt + n);
    // Room for a token every four units to start with (prose has one every four or five), grown as needed.
    let room = Math.min(max + 1, 1024 + (n >> 2));
    size(endsAt + 4 * room);
    Buffer.from(x.memory.buffer).write(text, textAt, 'utf16le');
    if (x.classes(textAt, kAt, n) >= 0) new Uint8Array(x.memory.buffer, kAt, n).set(parts.classesOf(text));
    x.resume(0, 0, 0);
    for (;;) {
      const why = x.scan(textAt, kAt, n, endsAt, room, max);
      if (why === DONE) break;
      if (why === OVER) return undefined;
      const p = x.position();
      const e = x.pieceEnd();
      if (why === MISS) {
        const tokens = parts.merge(text, p, e);
        new Uint32Array(x.memory.buffer, mergedAt, tokens.length).set(tokens);
        x.add(textAt, tokens.length);
      } else if (why === FULL) {
        room = Math.min(max + 1, 2 * room);
        size(endsAt + 4 * room);
      } else if (why === LONG_PIECE) {
        let count = x.tokens();
        let at = x.bytes();
        for (const tokens of parts.blocks(text.slice(p, e))) {
          if (count + tokens.length > max) return undefined;
          if (count + tokens.length > room) {
            room = Math.min(max + 1, Math.max(2 * room, count + tokens.length));
            size(endsAt + 4 * room);
          }
          const ends = new Uint32Array(x.memory.buffer, endsAt, room);
          for (const t of tokens) ends[count++] = at += parts.lengths[t];
        }
        x.resume(e, count, at);
      }
    }
    const count = x.tokens();
    return { ends: new Uint32Array(x.memory.buffer, endsAt, count).slice(), count };
  };
}

const align = (n: number) => (n + 15) & ~15;
