import { ApiError, invalid } from '../core/errors.js';
import { decodeTokens } from '../core/tokenizer.js';
import type { Ctx } from '../core/module.js';
import { countTokens } from '../models/service.js';
import type { Usage } from '../ratelimit/service.js';
import { BUILTIN_DIMENSIONS, builtinEmbedder, normalize, type Embedder } from '../vector-stores/service.js';
import { bodyChecker, toApiError } from '../core/validation.js';
import { CreateEmbeddingBody, type EmbeddingList } from './schemas.js';

/**
 * `POST /v1/embeddings`: the built-in deterministic embedder (the one file search uses), or the
 * embeddings server of the config file's `vector_stores.embeddings` for the model named there
 * (docs/chat.md). Stateless.
 */

/** Limits of the OpenAPI document. */
export const MAX_INPUTS = 2048;
export const MAX_INPUT_TOKENS = 8192;
export const MAX_REQUEST_TOKENS = 300_000;

/** Inputs as texts, with their token counts. */
export interface Inputs {
  texts: string[];
  tokens: number[];
}

/** Checks the input against the limits and turns token arrays into text (o200k tokenizer). */
export async function readInputs(input: CreateEmbeddingBody['input']): Promise<Inputs> {
  const list: (string | number[])[] = typeof input === 'string' ? [input] : isTokenArray(input) ? [input] : input;
  if (list.length === 0) throw invalid(`'input' must not be empty.`, 'input', 'invalid_value');
  if (list.length > MAX_INPUTS)
    throw invalid(`'input' must have at most ${MAX_INPUTS} items; it has ${list.length}.`, 'input', 'invalid_value');
  const texts: string[] = [];
  const tokens: number[] = [];
  let total = 0;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const param = list.length === 1 && typeof input === 'string' ? 'input' : `input[${i}]`;
    let text: string;
    let n: number;
    if (typeof item === 'string') {
      if (item === '') throw invalid(`'${param}' cannot be an empty string.`, param, 'invalid_value');
      text = item;
      // A text far longer than any 8192 tokens is refused without tokenizing it.
      n = item.length > MAX_INPUT_TOKENS * 32 ? Infinity : countTokens(item);
    } else {
      if (item.length === 0) throw invalid(`'${param}' must not be an empty token array.`, param, 'invalid_value');
      n = item.length;
      if (n > MAX_INPUT_TOKENS) text = '';
      else {
        try {
          text = decodeTokens(item);
        } catch {
          throw invalid(`'${param}' holds a token id the o200k tokenizer does not know.`, param, 'invalid_value');
        }
      }
    }
    if (n > MAX_INPUT_TOKENS)
      throw invalid(
        `'${param}' is too long: this model's maximum input length is ${MAX_INPUT_TOKENS} tokens.`,
        param,
        'context_length_exceeded',
      );
    total += n;
    texts.push(text);
    tokens.push(n);
  }
  if (total > MAX_REQUEST_TOKENS)
    throw invalid(
      `'input' holds ${total} tokens; at most ${MAX_REQUEST_TOKENS} are allowed in one request.`,
      'input',
      'max_tokens_per_request',
    );
  return { texts, tokens };
}

const isTokenArray = (input: CreateEmbeddingBody['input']): input is number[] =>
  Array.isArray(input) && input.length > 0 && typeof input[0] === 'number';

/** The embedder a model name is served by: the configured server for its model, else the built-in one. */
export function embedderFor(ctx: Ctx, model: string): { embedder: Embedder; dimensions: number | null } {
  const configured = ctx.services.vectorStores.embedder();
  if (configured.id === `upstream:${model}`) return { embedder: configured, dimensions: null };
  return { embedder: builtinEmbedder, dimensions: BUILTIN_DIMENSIONS };
}

/** A vector cut to `dimensions` and scaled back to length 1 (how text-embedding-3 models shorten). */
export function shorten(v: Float32Array, dimensions: number | undefined): Float32Array {
  if (dimensions === undefined || dimensions >= v.length) return v;
  return normalize(v.slice(0, dimensions));
}

/** Little-endian float32 bytes in base64, as the openai SDK decodes `encoding_format: base64`. */
export function toBase64(v: Float32Array): string {
  const bytes = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) bytes.writeFloatLE(v[i], i * 4);
  return bytes.toString('base64');
}

/** Rate-limit usage of an embeddings reply. */
export const usageOf = (r: EmbeddingList): Usage => ({ inputTokens: r.usage.prompt_tokens, outputTokens: 0 });

/** `POST /v1/embeddings` with checked inputs. */
export async function createEmbeddings(ctx: Ctx, body: CreateEmbeddingBody, inputs: Inputs): Promise<EmbeddingList> {
  const { embedder, dimensions } = embedderFor(ctx, body.model);
  if (body.dimensions !== undefined && dimensions !== null && body.dimensions > dimensions)
    throw invalid(
      `'dimensions' must be at most ${dimensions} for the model '${body.model}' (Standin's built-in embedder).`,
      'dimensions',
      'invalid_value',
    );
  let vectors: Float32Array[];
  try {
    vectors = await embedder.embed(inputs.texts);
  } catch (err) {
    throw new ApiError('server_error', `The embeddings server failed: ${(err as Error).message}`, { code: 'server_error', status: 502 });
  }
  if (body.dimensions !== undefined && vectors.some((v) => body.dimensions! > v.length))
    throw invalid(`'dimensions' must be at most ${vectors[0]?.length ?? 0} for the model '${body.model}'.`, 'dimensions', 'invalid_value');
  const base64 = body.encoding_format === 'base64';
  const tokens = inputs.tokens.reduce((a, b) => a + b, 0);
  return {
    object: 'list',
    data: vectors.map((v, index) => {
      const out = shorten(v, body.dimensions);
      return { object: 'embedding', index, embedding: base64 ? toBase64(out) : Array.from(out) };
    }),
    model: body.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

const checkBody = bodyChecker<CreateEmbeddingBody>(CreateEmbeddingBody);

/** One request body run without HTTP (a line of a batch): the status and body `POST /v1/embeddings` would answer. */
export async function runEmbeddingsBody(ctx: Ctx, body: unknown): Promise<{ status: number; body: unknown; usage?: Usage }> {
  try {
    const checked = checkBody(body);
    const r = await createEmbeddings(ctx, checked, await readInputs(checked.input));
    return { status: 200, body: r, usage: usageOf(r) };
  } catch (err) {
    const e = toApiError(err);
    return { status: e.status, body: e.toBody() };
  }
}
