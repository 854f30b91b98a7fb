import { embedKernel } from './embed-kernel.js';

/**
 * embedder.ts embedChunks' additions and vectors in WebAssembly (chunk-sums.c, in embed-kernel.ts's module):
 * the same steps as its JavaScript, to the bit. For a text whose runs were found in JavaScript (one too
 * large for text-runs.c): its runs, its words' records and its features' values are copied into the
 * module's memory, with the chunks' plan; the vectors come back.
 */

const align = (n: number) => (n + 7) & ~7;

/** Bytes of the module's memory (64 MiB, scripts/wasm.mjs: made at that size and never grown, since growing detaches its buffer): summing a text's chunks needs about 7 MB a MB of prose. */
export const wasmMemoryBytes = () => embedKernel().memory.buffer.byteLength;

/** What embedChunks' features hold for a text (embedder.ts TextFeatures). */
export interface Features {
  words: Int32Array;
  wordsUsed: number;
  keys: Uint32Array;
  count: number;
}

/**
 * The vectors (256 floats each) of `count` chunks planned in `plan` (chunk-sums.c `chunks`) over the
 * text's `runs` and `features`; undefined when they do not fit the module's memory (the caller adds them
 * in JavaScript).
 */
export function wasmChunkSums(
  plan: Int32Array,
  count: number,
  runs: Int32Array,
  features: Features,
  weightOfHalves: Float64Array,
): Float32Array | undefined {
  const w = embedKernel();
  const halves = align(w.__heap_base.value as number);
  const sums = align(halves + weightOfHalves.byteLength);
  const order = align(sums + 8 * features.count);
  const keys = align(order + 4 * (features.count + 1));
  const words = align(keys + 4 * features.count);
  const runsAt = align(words + 4 * features.wordsUsed);
  const planAt = align(runsAt + runs.byteLength);
  const out = align(planAt + plan.byteLength);
  const end = out + 1024 * count;
  const memory = w.memory.buffer;
  if (end > memory.byteLength) return undefined;
  new Float64Array(memory, halves, weightOfHalves.length).set(weightOfHalves);
  new Float64Array(memory, sums, features.count).fill(0);
  new Uint32Array(memory, keys, features.count).set(features.keys.subarray(0, features.count));
  new Int32Array(memory, words, features.wordsUsed).set(features.words.subarray(0, features.wordsUsed));
  new Int32Array(memory, runsAt, runs.length).set(runs);
  new Int32Array(memory, planAt, plan.length).set(plan);
  const vectors = new Float32Array(memory, out, 256 * count);
  vectors.fill(0);
  w.chunks(planAt, count, runsAt, words, keys, sums, order, halves, out);
  return vectors.slice();
}
