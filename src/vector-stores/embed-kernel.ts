import { EMBED_KERNEL_WASM } from './embed-kernel.wasm.js';
import { isWordRun, LONGEST_STOPWORD, lowerTable } from './lexical.js';

/**
 * The built-in embedder's WebAssembly (text-runs.c, word-cache.c and chunk-sums.c, one module built by
 * scripts/wasm.mjs), made once per process and given lexical.ts's tables then. Its memory is made at its
 * full size and never grown (scripts/wasm.mjs).
 */
export interface Kernel {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  // text-runs.c
  lower_table(): number;
  text(units: number, memoryEnd: number): number;
  runs(lowering: number): number;
  word(from: number, to: number): number;
  pair(before: number, base: number): number;
  classes_at(): number;
  runs_at(): number;
  words_at(): number;
  keys_at(): number;
  features(): number;
  take(bytes: number): number;
  zeroed(bytes: number): number;
  // word-cache.c
  stopwords(longest: number): void;
  // chunk-sums.c
  chunks(
    plan: number,
    count: number,
    runs: number,
    words: number,
    keys: number,
    sums: number,
    order: number,
    weightOfHalves: number,
    out: number,
  ): void;
}

let kernel: Kernel | undefined;
export function embedKernel(): Kernel {
  if (kernel) return kernel;
  kernel = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(EMBED_KERNEL_WASM, 'base64')), {
    // word-cache.c asks whether a run new to it is a word: the function words are lexical.ts's.
    env: { log: Math.log, is_word: (units: number, from: number, to: number) => (isWordRun(unitsAt(units, to), from, to) ? 1 : 0) },
  }).exports as unknown as Kernel;
  new Uint16Array(kernel.memory.buffer, kernel.lower_table(), 1 << 16).set(lowerTable());
  kernel.stopwords(LONGEST_STOPWORD);
  return kernel;
}

/** The module's memory as UTF-16 units from `at`, `length` of them. */
const unitsAt = (at: number, length: number) => new Uint16Array(kernel!.memory.buffer, at, length);
