import { EMBED_KERNEL_WASM } from './embed-kernel.wasm.js';

/**
 * The built-in embedder's WebAssembly (text-runs.c and chunk-sums.c, one module built by scripts/wasm.mjs),
 * made once per process. Its memory is made at its full size and never grown (scripts/wasm.mjs).
 */
export interface Kernel {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  // text-runs.c
  found(): number;
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

/** What the module asks of the word cache (text-runs.c `js_word`); set by the text being scanned. */
export type WordLookup = (from: number, to: number, h: number) => number;
let lookup: WordLookup = () => -1;
export const setWordLookup = (f: WordLookup) => {
  lookup = f;
};

let kernel: Kernel | undefined;
export const embedKernel = (): Kernel =>
  (kernel ??= new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(EMBED_KERNEL_WASM, 'base64')), {
    env: { log: Math.log, word: (from: number, to: number, h: number) => lookup(from, to, h) },
  }).exports as unknown as Kernel);
