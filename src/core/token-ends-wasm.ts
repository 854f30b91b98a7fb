import { astralClass, bmpClasses, classesOf } from './pretokens.js';
import { TOKEN_ENDS_WASM } from './token-ends.wasm.js';
import type { Vocabulary } from './vocabulary.js';

/**
 * tokenizer.ts tokenEnds in WebAssembly (token-ends.c, built by scripts/wasm.mjs): the pre-tokenizer's
 * scan and the look-up of each pre-token among those met, in a third of the JavaScript's time
 * (bench/ingest-compiled.mjs: 9 against 22 ms per MB of text whose pre-tokens were all met), and the merge
 * of a short one not met yet (mergeShort's, over the vocabulary copied into its memory once). A longer
 * pre-token not met yet, or one longer than the cache takes, is handed back: `tokensOf` merges it here in
 * JavaScript, and it is remembered for the next time.
 */

/** Texts up to this many UTF-16 units go through the WebAssembly: its memory (48 MiB, scripts/wasm.mjs) holds the cache's 24 MiB, the vocabulary's 4.5 MB and 15 bytes a unit of such a text (the text, its classes, its ends). */
export const WASM_UNITS = 1 << 20;

/** tokenizer.ts LONG, token-ends.c LONG: a longer pre-token is not remembered. */
const LONG = 256;
// What `ends` stopped at (token-ends.c).
const DONE = 0;
const MISS = 1;
const FULL = 3;

interface Kernel {
  memory: WebAssembly.Memory;
  bmp(): number;
  classes(units: number, n: number, classes: number): void;
  vocabulary(bytes: number, lengths: number, offsets: number, slots: number, slotCount: number, byteToken: number, longest: number): void;
  remember(units: number, length: number, lengths: number, count: number): void;
  ends(text: number, classes: number, n: number, out: number, capacity: number, state: number): number;
  __heap_base: WebAssembly.Global;
}

let kernel: Kernel | undefined;
/** The module, instantiated on first use (3.6 KB, compiled in well under a millisecond). */
const instance = (): Kernel =>
  (kernel ??= new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(TOKEN_ENDS_WASM, 'base64'))).exports as unknown as Kernel);

const align = (n: number) => (n + 7) & ~7;

/** token-ends.c ASTRAL: a surrogate pair's first unit, whose class is found here. */
const ASTRAL = 0x80;
let bmpWritten = false;

/**
 * pretokens.ts classesOf in WebAssembly (token-ends.c `classes`), for an ingestion process's text of at most
 * WASM_UNITS units (classesOf for a longer one): the same classes, the JavaScript's loop of a unit at a
 * time replaced by a copy of the text into the module's memory, the module's loop, and a copy back. The
 * classes of code points past the BMP are pretokens.ts's (tested once each).
 */
export function wasmClassesOf(text: string): Uint8Array {
  const n = text.length;
  if (n > WASM_UNITS) return classesOf(text);
  const w = instance();
  const memory = w.memory.buffer;
  if (!bmpWritten) {
    new Uint8Array(memory, w.bmp(), 1 << 16).set(bmpClasses());
    bmpWritten = true;
  }
  // Where a text goes for its token ends: the vocabulary's copy, if made, stays below.
  const units = vocabularyEnd || align(w.__heap_base.value as number);
  const classes = align(units + 2 * n);
  Buffer.from(memory, units, 2 * n).write(text, 'utf16le');
  w.classes(units, n, classes);
  const k = new Uint8Array(memory, classes, n).slice();
  for (let i = k.indexOf(ASTRAL); i >= 0; i = k.indexOf(ASTRAL, i + 2)) k[i] = astralClass(text.codePointAt(i)!);
  return k;
}

/** Where the vocabulary's copy ends in the module's memory (0 until it is made): the text goes after it. */
let vocabularyEnd = 0;

/** Copies the vocabulary's tables into the module's memory, once (every caller gives tokenizer.ts's one). */
function copyVocabulary(w: Kernel, v: Vocabulary): number {
  if (vocabularyEnd) return vocabularyEnd;
  const memory = w.memory.buffer;
  let at = align(w.__heap_base.value as number);
  const place = (table: Uint8Array | Uint32Array | Int32Array) => {
    const start = at;
    new Uint8Array(memory, start, table.byteLength).set(new Uint8Array(table.buffer, table.byteOffset, table.byteLength));
    at = align(at + table.byteLength);
    return start;
  };
  const bytes = place(v.bytes);
  const lengths = place(v.lengths.subarray(0, v.count));
  const offsets = place(v.offsets);
  const slots = place(v.slots);
  const byteToken = place(v.byteToken);
  w.vocabulary(bytes, lengths, offsets, slots, v.slots.length, byteToken, v.longest);
  return (vocabularyEnd = at);
}

/**
 * Where each token of `text` (at most WASM_UNITS units, classes `k`) ends, in bytes of its UTF-8, and how
 * many there are; undefined past `max` tokens. `v`: the vocabulary (tokenizer.ts vocabulary()). `tokensOf(p, e)`:
 * the tokens of the pre-token `text[p, e)`, in one or more pieces.
 */
export function wasmTokenEnds(
  text: string,
  max: number,
  k: Uint8Array,
  v: Vocabulary,
  tokensOf: (p: number, e: number) => Iterable<readonly number[]>,
): { ends: Uint32Array; count: number } | undefined {
  const w = instance();
  const { lengths } = v;
  const n = text.length;
  // Never more tokens than UTF-8 bytes, never more bytes than three a unit: below `max`, FULL cannot happen.
  const capacity = Math.max(0, Math.min(max, 3 * n));
  const state = copyVocabulary(w, v);
  const scratch = state + 16;
  const units = align(scratch + 4 * 3 * LONG);
  const classes = align(units + 2 * n);
  const out = align(classes + n);
  const end = out + 4 * capacity;
  const memory = w.memory.buffer;
  // Made for the longest text (scripts/wasm.mjs): never grown, since growing detaches the memory's buffer.
  if (end > memory.byteLength) throw new RangeError(`token-ends.c's memory holds ${memory.byteLength} bytes, not ${end}`);
  Buffer.from(memory, units, 2 * n).write(text, 'utf16le');
  new Uint8Array(memory, classes, n).set(k.subarray(0, n));
  const s = new Uint32Array(memory, state, 4);
  s.fill(0);
  const ends = new Uint32Array(memory, out, capacity);
  for (;;) {
    const status = w.ends(units, classes, n, out, capacity, state);
    if (status === DONE) return { ends: ends.slice(0, s[1]), count: s[1] };
    if (status === FULL) return undefined;
    // Handed back: merged here, its ends written, and (when short) remembered for the next time.
    const p = s[0];
    const e = s[3];
    let count = s[1];
    let at = s[2];
    for (const tokens of tokensOf(p, e)) {
      if (count + tokens.length > capacity) return undefined;
      for (const t of tokens) ends[count++] = at += lengths[t];
      if (status === MISS) {
        const l = new Uint32Array(memory, scratch, tokens.length);
        for (let i = 0; i < tokens.length; i++) l[i] = lengths[tokens[i]];
        w.remember(units + 2 * p, e - p, scratch, tokens.length);
      }
    }
    s[0] = e;
    s[1] = count;
    s[2] = at;
  }
}
