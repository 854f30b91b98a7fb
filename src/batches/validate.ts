import { createHash } from 'node:crypto';
import { CHARS_PER_TOKEN } from '../ratelimit/service.js';
import { readLines } from './lines.js';
import type { BatchError } from './schemas.js';

/** The limits of the OpenAPI document (CreateBatchRequest). */
export const MAX_REQUESTS = 50_000;
export const MAX_FILE_BYTES = 200 * 1024 * 1024;
/** `/v1/embeddings` batches: inputs across all requests. */
export const MAX_EMBEDDING_INPUTS = 50_000;
/** Errors listed for a refused file; the platform lists a few, not one per line of a 50,000-line file. */
export const MAX_ERRORS = 1_000;

/** What a pass over the input file found. */
export interface Scan {
  /** Requests (non-blank lines). */
  requests: number;
  /** The model every line names (the first line's). */
  model: string | null;
  /** Estimated input tokens of all requests, as the rate limiter estimates a request's (rule 3: ⌈characters / 4⌉). */
  tokens: number;
  errors: BatchError[];
}

const KEYS = new Set(['custom_id', 'method', 'url', 'body']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The characters of a request body the rate limiter would count (the text a route passes to `admit`). */
function inputChars(endpoint: string, body: Record<string, unknown>): number {
  const len = (v: unknown) => (v === undefined ? 0 : typeof v === 'string' ? v.length : JSON.stringify(v).length);
  if (endpoint === '/v1/chat/completions') return len(body.messages) + len(body.tools);
  if (endpoint === '/v1/responses') return len(body.input ?? '') + len(body.instructions);
  const input = body.input;
  // Token arrays are tokens already: count them as the characters they stand for.
  const one = (v: unknown) => (typeof v === 'string' ? v.length : Array.isArray(v) ? v.length * CHARS_PER_TOKEN : 0);
  return Array.isArray(input) && input.length && typeof input[0] !== 'number' ? input.reduce((n: number, v) => n + one(v), 0) : one(input);
}

const embeddingInputs = (body: Record<string, unknown>) =>
  Array.isArray(body.input) && body.input.length && typeof body.input[0] !== 'number' ? body.input.length : 1;

/**
 * Validates a batch input file as it streams: JSONL, each line `{custom_id, method: "POST", url, body}`,
 * `url` the batch's endpoint, `custom_id` unique, one model, the document's limits. Holds one line and a
 * short hash of each `custom_id` at a time, never the file. Stops listing errors after MAX_ERRORS.
 */
export async function scanInput(source: AsyncIterable<Buffer>, endpoint: string, maxLineBytes: number): Promise<Scan> {
  const scan: Scan = { requests: 0, model: null, tokens: 0, errors: [] };
  const seen = new Set<string>();
  let chars = 0;
  let inputs = 0;
  const fail = (code: string, message: string, param: string | null, line: number | null) => {
    scan.errors.push({ code, message, param, line });
    return scan.errors.length >= MAX_ERRORS;
  };
  for await (const l of readLines(source, { maxBytes: maxLineBytes })) {
    scan.requests++;
    if (scan.requests > MAX_REQUESTS) {
      fail('too_many_tasks', `The batch input file has more than ${MAX_REQUESTS.toLocaleString('en-US')} requests.`, null, null);
      break;
    }
    if (l.tooLong) {
      if (
        fail(
          'line_too_long',
          `This line is longer than ${maxLineBytes} bytes, the largest request body this server accepts.`,
          null,
          l.number,
        )
      )
        break;
      continue;
    }
    let v: unknown;
    try {
      v = JSON.parse(l.text);
    } catch {
      if (fail('invalid_json_line', 'This line is not parseable as valid JSON.', null, l.number)) break;
      continue;
    }
    const problem = lineProblem(v, endpoint, seen, scan);
    if (problem) {
      if (fail(problem.code, problem.message, problem.param, l.number)) break;
      continue;
    }
    const body = (v as { body: Record<string, unknown> }).body;
    chars += inputChars(endpoint, body);
    if (endpoint === '/v1/embeddings') {
      inputs += embeddingInputs(body);
      if (inputs > MAX_EMBEDDING_INPUTS) {
        fail(
          'too_many_embedding_inputs',
          `An /v1/embeddings batch may hold at most ${MAX_EMBEDDING_INPUTS.toLocaleString('en-US')} embedding inputs across all requests.`,
          'body.input',
          l.number,
        );
        break;
      }
    }
  }
  if (scan.requests === 0 && !scan.errors.length) fail('empty_file', 'The batch input file is empty.', null, null);
  scan.tokens = Math.ceil(chars / CHARS_PER_TOKEN);
  return scan;
}

/** What is wrong with one parsed line, if anything. */
function lineProblem(
  v: unknown,
  endpoint: string,
  seen: Set<string>,
  scan: Scan,
): { code: string; message: string; param: string | null } | undefined {
  if (!isObject(v)) return { code: 'invalid_json_line', message: 'This line is not a JSON object.', param: null };
  for (const key of Object.keys(v))
    if (!KEYS.has(key)) return { code: 'unknown_parameter', message: `Unrecognized request argument supplied: '${key}'.`, param: key };
  for (const key of KEYS)
    if (v[key] === undefined) return { code: 'missing_required_parameter', message: `Missing required parameter: '${key}'.`, param: key };
  if (typeof v.custom_id !== 'string' || v.custom_id === '')
    return { code: 'invalid_value', message: "'custom_id' must be a non-empty string.", param: 'custom_id' };
  if (v.method !== 'POST')
    return {
      code: 'invalid_value',
      message: `Invalid value for 'method': ${JSON.stringify(v.method)}. Supported values are: 'POST'.`,
      param: 'method',
    };
  if (v.url !== endpoint)
    return {
      code: 'invalid_url',
      message: `The URL provided for this request does not match the batch endpoint '${endpoint}'.`,
      param: 'url',
    };
  if (!isObject(v.body)) return { code: 'invalid_type', message: "'body' must be a JSON object: the request body.", param: 'body' };
  const model = v.body.model;
  if (typeof model !== 'string' || model === '')
    return { code: 'missing_required_parameter', message: "Missing required parameter: 'body.model'.", param: 'body.model' };
  if (scan.model === null) scan.model = model;
  else if (model !== scan.model)
    return {
      code: 'mismatched_model',
      message: `The provided model '${model}' does not match the model '${scan.model}' of the batch's other requests: a batch runs one model.`,
      param: 'body.model',
    };
  // A short digest stands for the id: 50,000 ids of any length cost a few MB at most.
  const digest = createHash('sha256').update(v.custom_id).digest('base64');
  if (seen.has(digest))
    return {
      code: 'duplicate_custom_id',
      message:
        'The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each individual request in a batch.',
      param: 'custom_id',
    };
  seen.add(digest);
  return undefined;
}
