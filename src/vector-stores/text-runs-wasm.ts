import { embedKernel } from './embed-kernel.js';

/**
 * embedder.ts embedChunks' scan of a text in WebAssembly (text-runs.c, its words looked up in
 * word-cache.c): its runs of letters and digits, its words' records and its features, made in the
 * module's memory and left there for the chunks' plans (which ask it for the words their edges cut, and
 * their pairs) and sums (chunk-sums.c). One text at a time: a new one lets the last one go.
 */

/** What `scan` answers when a run holds a unit the lowercase table leaves out (text-runs.c). */
export const NOT_IN_TABLE = -1;
/** What `scan` answers when the module's memory is full (text-runs.c). */
export const NO_ROOM = -2;

/** A text's UTF-16 units take 2 bytes in the module's memory, its classes 1, and what the scan makes about 8 more on prose. */
const BYTES_PER_UNIT = 12;

/** The longest text `WasmText.of` takes (in UTF-16 units): the memory past the module's own data, at BYTES_PER_UNIT a unit. */
export const wasmTextUnits = () => {
  const w = embedKernel();
  return Math.floor((w.memory.buffer.byteLength - (w.__heap_base.value as number)) / BYTES_PER_UNIT);
};

export class WasmText {
  /** The text's units in the module's memory: lowercased where `scan` found runs. */
  readonly units: Uint16Array;

  private constructor(
    units: number,
    length: number,
    private readonly memory: ArrayBuffer,
  ) {
    this.units = new Uint16Array(memory, units, length);
  }

  /** The text with its classes (core/pretokens.ts classesOf) in the module's memory; undefined when it cannot hold them and what the scan makes of them. */
  static of(text: string, classes: Uint8Array): WasmText | undefined {
    if (text.length > wasmTextUnits()) return undefined;
    const w = embedKernel();
    const memory = w.memory.buffer;
    const at = w.text(text.length, memory.byteLength);
    if (at === 0) return undefined;
    const t = new WasmText(at, text.length, memory);
    Buffer.from(memory, at, 2 * text.length).write(text, 'utf16le');
    new Uint8Array(memory, w.classes_at(), text.length).set(classes);
    return t;
  }

  /**
   * Finds the runs (embedder.ts findRuns): with `lowering`, lowercasing each run's units from lexical.ts
   * lowerTable as it is read; without, the units are lowercased already. Answers how many, NOT_IN_TABLE
   * or NO_ROOM. Lets go every run, word and feature of an earlier scan.
   */
  scan(lowering: boolean): number {
    return embedKernel().runs(lowering ? 1 : 0);
  }

  /** The runs of the last scan, `RUN` numbers each (embedder.ts). */
  runs(n: number): Int32Array {
    return new Int32Array(this.memory, embedKernel().runs_at(), 5 * n);
  }

  /** The record of the word `units[from, to)` (embedder.ts TextFeatures.word), -1 for no word. */
  word(from: number, to: number): number {
    return embedKernel().word(from, to);
  }

  /** The feature number of the pair of the words whose records start at `before` and `base`. */
  pair(before: number, base: number): number {
    return embedKernel().pair(before, base);
  }

  /**
   * The vectors (256 floats each) of `count` chunks planned in `plan` (chunk-sums.c `chunks`) over what the
   * scan made; undefined when the memory is full (a scan, a word or a pair that found it so included).
   */
  sums(plan: Int32Array, count: number, weightOfHalves: Float64Array): Float32Array | undefined {
    const w = embedKernel();
    const features = w.features();
    // What it takes, counted here first: past 2^32 bytes a size would wrap in the module's 32 bits.
    if (1024 * count + 12 * (features + 1) + plan.byteLength + weightOfHalves.byteLength > this.memory.byteLength) return undefined;
    const halves = w.take(weightOfHalves.byteLength);
    const sums = w.zeroed(8 * features);
    const order = w.take(4 * (features + 1));
    const planAt = w.take(plan.byteLength);
    const out = w.zeroed(1024 * count);
    // take and zeroed answer 0 once the memory is full (and after, to the end of the text).
    if (out === 0) return undefined;
    new Float64Array(this.memory, halves, weightOfHalves.length).set(weightOfHalves);
    new Int32Array(this.memory, planAt, plan.length).set(plan);
    w.chunks(planAt, count, w.runs_at(), w.words_at(), w.keys_at(), sums, order, halves, out);
    return new Float32Array(this.memory, out, 256 * count).slice();
  }
}
