import { Type, type Static } from 'typebox';
import type { Outbound } from '../core/outbound.js';
import { redactText } from '../core/redact.js';
import { classesOf, LETTER, NUMBER, SECOND } from '../core/pretokens.js';
import { RegionCache } from '../core/region-cache.js';
import { upstreamKeyFromEnv } from '../core/upstream-key.js';
import { words } from './lexical.js';

/**
 * Embeddings of chunks and queries. Built in: a hashed bag of features, offline and deterministic
 * (docs/files.md). Or any OpenAI-compatible `/embeddings` server named in the config file.
 */
export interface Embedder {
  /** Names the vectors it makes; a query is compared only with chunks embedded by the same one. */
  readonly id: string;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Dimensions of the built-in embedder's vectors. */
export const BUILTIN_DIMENSIONS = 256;
export const BUILTIN_ID = `builtin:hashed-ngrams-${BUILTIN_DIMENSIONS}-v1`;

/** 32-bit FNV-1a over UTF-16 code units of `s[from, to)`, starting from `seed`. */
function fnv(s: string, from: number, to: number, seed: number): number {
  let h = seed;
  for (let i = from; i < to; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** murmur3's finalizer: every bit of the result depends on every bit of the input. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

// Different starting points keep words, word pairs and trigrams apart.
const WORD_SEED = 0x811c9dc5;
const PAIR_SEED = 0x2545f491;
const GRAM_SEED = 0x9e3779b9;

/** What one word adds, remembered per word: its hash, its feature, its trigrams' features and their weight. */
interface WordFeatures {
  hash: number;
  feature: number;
  grams: Uint32Array;
  gramWeight: number;
}

/**
 * Runs of letters and digits remembered (natural text repeats its words), each with its features, or
 * null for a run that is no word of lexical.ts's (a function word, one too long).
 */
const wordCache = new RegionCache<WordFeatures | null>(100_000);

/** The features of a lowercased run of letters and digits, or null if lexical.ts's `words` leaves it out. */
function featuresOf(w: string): WordFeatures | null {
  const kept = words(w);
  if (kept.length !== 1 || kept[0] !== w) return null;
  const hash = fnv(w, 0, w.length, WORD_SEED);
  const marked = `#${w}#`;
  const grams = new Uint32Array(marked.length - 2);
  for (let j = 0; j < grams.length; j++) grams[j] = mix(fnv(marked, j, j + 3, GRAM_SEED));
  return { hash, feature: mix(hash), grams, gramWeight: 0.5 / grams.length };
}

/**
 * The features of one text and their weights, in the order each was first met (the order the vector's
 * sums are made in, so the result is the same to the bit as with a Map): an open-addressed table on the
 * features' hashes (already mixed), reused from text to text.
 */
class FeatureSums {
  private keys = new Uint32Array(1 << 12);
  private sums = new Float64Array(1 << 12);
  /** The text each slot was last used for: a slot of an earlier text is free. */
  private stamps = new Uint32Array(1 << 12);
  private stamp = 0;
  /** Slots in the order their features were first met. */
  order = new Int32Array(1 << 11);
  size = 0;

  reset() {
    this.size = 0;
    if (++this.stamp === 0xffffffff) {
      this.stamps.fill(0);
      this.stamp = 1;
    }
  }

  add(h: number, w: number) {
    // At most half full: grow before the insert that would pass it.
    if (this.size * 2 >= this.keys.length) this.grow();
    const mask = this.keys.length - 1;
    let slot = h & mask;
    for (;;) {
      if (this.stamps[slot] !== this.stamp) {
        this.stamps[slot] = this.stamp;
        this.keys[slot] = h;
        this.sums[slot] = w;
        if (this.size === this.order.length) {
          const grown = new Int32Array(this.order.length * 2);
          grown.set(this.order);
          this.order = grown;
        }
        this.order[this.size++] = slot;
        return;
      }
      if (this.keys[slot] === h) {
        this.sums[slot] += w;
        return;
      }
      slot = (slot + 1) & mask;
    }
  }

  key = (i: number) => this.keys[this.order[i]];
  sum = (i: number) => this.sums[this.order[i]];

  private grow() {
    const n = this.size;
    const keys = Array.from({ length: n }, (_, i) => this.key(i));
    const sums = Array.from({ length: n }, (_, i) => this.sum(i));
    const length = this.keys.length * 2;
    this.keys = new Uint32Array(length);
    this.sums = new Float64Array(length);
    this.stamps = new Uint32Array(length);
    this.stamp = 1;
    this.size = 0;
    for (let i = 0; i < n; i++) this.add(keys[i], sums[i]);
  }
}
const table = new FeatureSums();

/** Adds one word's features (and its pair with the word before, if any) to the table. */
function addWord(f: WordFeatures, previous: number, first: boolean) {
  table.add(f.feature, 1);
  if (!first) table.add(mix(Math.imul(previous, 31) ^ f.hash ^ PAIR_SEED), 0.5);
  for (let j = 0; j < f.grams.length; j++) table.add(f.grams[j], f.gramWeight);
}

/** The vector of the table's features, into `v` (zeroed, BUILTIN_DIMENSIONS long), normalized. */
function finish(v: Float32Array): Float32Array {
  for (let i = 0; i < table.size; i++) {
    const h = table.key(i);
    const count = table.sum(i);
    // 1 + ln 1 is 1 exactly: most features are met once.
    const weight = count === 1 ? 1 : count > 1 ? 1 + Math.log(count) : count;
    v[h & (BUILTIN_DIMENSIONS - 1)] += h & 0x80000000 ? -weight : weight;
  }
  return normalize(v);
}

/** The end of the run of letters and digits starting at `i` (classes `k`), bounded by `to`. */
function runEnd(k: Uint8Array, i: number, to: number): number {
  let e = i;
  while (e < to && k[e] & (LETTER | NUMBER)) e += e + 1 < to && k[e + 1] === SECOND ? 2 : 1;
  return e;
}

/**
 * The built-in embedding of a text: its words (weight 1), pairs of neighbouring words (0.5) and the
 * character trigrams of each word with its edges marked (`#ca`, `cap`, …, `al#`; 0.5 in all per word),
 * each feature counted with a sublinear weight (1 + ln count when it reaches 1), hashed (FNV-1a, then
 * murmur3's finalizer) into 256 buckets with a sign from the hash's top bit, and L2-normalized.
 * Texts that share words, word pairs or word stems land near each other; nothing else is modelled.
 */
export const embedBuiltin = (text: string): Float32Array => embedInto(text, new Float32Array(BUILTIN_DIMENSIONS));

/** embedBuiltin into `into` (zeroed, BUILTIN_DIMENSIONS long). */
function embedInto(text: string, into: Float32Array): Float32Array {
  table.reset();
  // The words of lexical.ts's `words` (runs of letters and digits of the lowercased text, some left out),
  // found with the pre-tokenizer's class table rather than its regex.
  const lower = text.toLowerCase();
  const k = classesOf(lower);
  let previous = 0;
  let first = true;
  for (let i = 0; i < k.length;) {
    if (!(k[i] & (LETTER | NUMBER))) {
      i++;
      continue;
    }
    const e = runEnd(k, i, k.length);
    const f = wordCache.get(lower, i, e, featuresOf);
    i = e;
    if (!f) continue;
    addWord(f, previous, first);
    first = false;
    previous = f.hash;
  }
  return finish(into);
}

// Lowercasing that is not one unit for one unit, or depends on what follows (a final sigma): a text
// holding one is embedded chunk by chunk.
const CONTEXTUAL_CASE = /[\u0130\u03a3]/;

/**
 * The built-in embeddings of the chunks of one text, one after the other (BUILTIN_DIMENSIONS each): to
 * the bit those of `embedBuiltin` on each chunk's text, with the lowercasing, the character classes and
 * the word look-ups made once for the whole text instead of once per chunk (auto chunking has every
 * token in two chunks). `starts[i]` is where chunk i's text begins in `text` (UTF-16 units); a chunk
 * whose text is not found there (a window that cut a character) is embedded on its own.
 */
export function embedChunks(text: string, chunks: readonly { text: string }[], starts: readonly number[]): Float32Array {
  const out = new Float32Array(chunks.length * BUILTIN_DIMENSIONS);
  const at = (i: number) => out.subarray(i * BUILTIN_DIMENSIONS, (i + 1) * BUILTIN_DIMENSIONS);
  const lower = text.toLowerCase();
  if (lower.length !== text.length || CONTEXTUAL_CASE.test(text)) {
    chunks.forEach((c, i) => embedInto(c.text, at(i)));
    return out;
  }
  // The text's runs of letters and digits, each with its features (null: no word of lexical.ts's).
  const k = classesOf(lower);
  let runs = new Int32Array(1024);
  const features: (WordFeatures | null)[] = [];
  let n = 0;
  for (let i = 0; i < k.length;) {
    if (!(k[i] & (LETTER | NUMBER))) {
      i++;
      continue;
    }
    const e = runEnd(k, i, k.length);
    if (2 * n + 2 > runs.length) {
      const grown = new Int32Array(runs.length * 2);
      grown.set(runs);
      runs = grown;
    }
    runs[2 * n] = i;
    runs[2 * n + 1] = e;
    features[n++] = wordCache.get(lower, i, e, featuresOf);
    i = e;
  }
  let r0 = 0;
  for (let c = 0; c < chunks.length; c++) {
    const piece = chunks[c].text;
    const s = starts[c];
    if (!(s >= 0) || !text.startsWith(piece, s)) {
      embedInto(piece, at(c));
      continue;
    }
    const e = s + piece.length;
    // The runs the chunk holds: whole ones as found, those its edges cut as the cut words they are.
    while (r0 < n && runs[2 * r0 + 1] <= s) r0++;
    table.reset();
    let previous = 0;
    let first = true;
    for (let r = r0; r < n && runs[2 * r] < e; r++) {
      const a = runs[2 * r];
      const b = runs[2 * r + 1];
      const f = a >= s && b <= e ? features[r] : wordCache.get(lower, Math.max(a, s), Math.min(b, e), featuresOf);
      if (!f) continue;
      addWord(f, previous, first);
      first = false;
      previous = f.hash;
    }
    finish(at(c));
  }
  return out;
}

/** Scales a vector to length 1 (a zero vector stays zero). */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}

export const builtinEmbedder: Embedder = {
  id: BUILTIN_ID,
  embed: async (texts) => texts.map(embedBuiltin),
};

/** The config file's root `vector_stores` section. */
export const VectorStoresConfig = Type.Object(
  {
    /** An OpenAI-compatible embeddings server; without it the built-in embedder is used. */
    embeddings: Type.Optional(
      Type.Object(
        {
          /** Up to `/v1`: `{base_url}/embeddings` is called. */
          base_url: Type.String({ minLength: 1, maxLength: 2000 }),
          model: Type.String({ minLength: 1, maxLength: 256 }),
          api_key: Type.Optional(Type.String({ maxLength: 4000 })),
          /** Name of an environment variable holding the key, `STANDIN_UPSTREAM_…` (keeps secrets out of the file). */
          api_key_env: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          /** Texts per request (default 64). */
          batch_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 2048 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type VectorStoresConfig = Static<typeof VectorStoresConfig>;

/**
 * An embedder calling `{base_url}/embeddings` through the SSRF-guarded client; vectors are normalized on
 * arrival. Throws when `api_key_env` names a variable not meant for an upstream key, or one not set.
 */
export function upstreamEmbedder(outbound: Outbound, config: NonNullable<VectorStoresConfig['embeddings']>): Embedder {
  const url = `${config.base_url.replace(/\/+$/, '')}/embeddings`;
  const key =
    config.api_key ?? (config.api_key_env ? upstreamKeyFromEnv(config.api_key_env, 'vector_stores.embeddings.api_key_env') : undefined);
  const batch = config.batch_size ?? 64;
  return {
    id: `upstream:${config.model}`,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batch) {
        const input = texts.slice(i, i + batch);
        const res = await outbound.fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify({ model: config.model, input, encoding_format: 'float' }),
        });
        // Its text may repeat the key it was sent: masked (then cut, so no key is left half shown) before it
        // becomes a file's error or a log line.
        if (!res.ok)
          throw new Error(
            redactText(`the embeddings server answered ${res.status}: ${(await res.text()).slice(0, 8192)}`, [key]).slice(0, 340),
          );
        const body = (await res.json()) as { data?: { index?: number; embedding?: unknown }[] };
        const data = Array.isArray(body.data) ? [...body.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)) : [];
        if (
          data.length !== input.length ||
          !data.every((d) => Array.isArray(d.embedding) && d.embedding.every((x) => Number.isFinite(x)))
        ) {
          throw new Error(
            `the embeddings server answered ${data.length} vectors for ${input.length} inputs, or vectors that are not finite numbers`,
          );
        }
        for (const d of data) out.push(normalize(Float32Array.from(d.embedding as number[])));
      }
      return out;
    },
  };
}

/** A vector as stored (Float32, little-endian on every platform Node runs on). */
export const toBlob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
/** A stored vector back (copied: a blob's bytes need not be 4-byte aligned). */
export const fromBlob = (b: Uint8Array): Float32Array => new Float32Array(Uint8Array.from(b).buffer);
