import { Type, type Static } from 'typebox';
import type { Outbound } from '../core/outbound.js';
import { redactText } from '../core/redact.js';
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

/**
 * The built-in embedding of a text: its words (weight 1), pairs of neighbouring words (0.5) and the
 * character trigrams of each word with its edges marked (`#ca`, `cap`, …, `al#`; 0.5 in all per word),
 * each feature counted with a sublinear weight (1 + ln count when it reaches 1), hashed (FNV-1a, then
 * murmur3's finalizer) into 256 buckets with a sign from the hash's top bit, and L2-normalized.
 * Texts that share words, word pairs or word stems land near each other; nothing else is modelled.
 */
export function embedBuiltin(text: string): Float32Array {
  const features = new Map<number, number>();
  const add = (f: number, w: number) => features.set(f, (features.get(f) ?? 0) + w);
  const ws = words(text);
  let previous = 0;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i];
    const hw = fnv(w, 0, w.length, WORD_SEED);
    add(mix(hw), 1);
    if (i > 0) add(mix(Math.imul(previous, 31) ^ hw ^ PAIR_SEED), 0.5);
    previous = hw;
    const marked = `#${w}#`;
    const grams = marked.length - 2;
    for (let j = 0; j < grams; j++) add(mix(fnv(marked, j, j + 3, GRAM_SEED)), 0.5 / grams);
  }
  const v = new Float32Array(BUILTIN_DIMENSIONS);
  for (const [h, count] of features) {
    const weight = count >= 1 ? 1 + Math.log(count) : count;
    v[h & (BUILTIN_DIMENSIONS - 1)] += h & 0x80000000 ? -weight : weight;
  }
  return normalize(v);
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
