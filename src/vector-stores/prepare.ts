import { wasmClassesOf } from '../core/token-ends-wasm.js';
import { chunkText, TooManyTokens, type Chunking } from './chunk.js';
import { embedChunks } from './embedder.js';
import { ExtractError, extractText, isDecodedAsIs } from './extract.js';
import { LimitError, type IngestLimits } from './limits.js';

/**
 * What an ingestion process does with one file (ingest-child.ts): extract its text, chunk it, and embed
 * the chunks with the built-in embedder when that is the one in force. Everything here reads bytes a
 * client sent, so it runs outside the server process (ingest-pool.ts).
 */
export interface PrepareRequest {
  filename: string;
  data: Uint8Array;
  chunking: Chunking;
  limits: IngestLimits;
  /** Embed with the built-in embedder here (an upstream embedder is called by the server). */
  embed: boolean;
}

export interface Prepared {
  text: string;
  chunks: { text: string; tokens: number }[];
  /** With `embed`: the chunks' vectors, one after the other (BUILTIN_DIMENSIONS each). */
  vectors?: Float32Array;
}

/** A prepared file as the ingestion process sends it: also its text's UTF-8, and each chunk's span of it (chunk.ts). */
export interface PreparedBytes {
  prepared: Prepared;
  utf8: Uint8Array;
  /** Two numbers a chunk: its first byte and its end in `utf8`. */
  spans: number[];
}

/** Why a file cannot be indexed: a `last_error` code and message. */
export interface Refusal {
  code: 'unsupported_file' | 'invalid_file';
  message: string;
}

// PostgreSQL's text refuses U+0000 (SQLite keeps it): stripped from every extracted text, so both stores
// hold the same text, and a NUL carries nothing worth finding.
const NUL = '\u0000';

/** Extracts, chunks and (with `embed`) embeds one file. */
export async function prepareFile(req: PrepareRequest): Promise<PreparedBytes> {
  const data = Buffer.from(req.data.buffer, req.data.byteOffset, req.data.byteLength);
  const extracted = await extractText(req.filename, data, req.limits);
  const text = extracted.replaceAll(NUL, '');
  if (!text.trim()) throw new ExtractError('invalid_file', `The file ${req.filename} holds no text to index.`);
  // A text file's text is its bytes decoded (checked as UTF-8), less a leading byte-order mark: its UTF-8 is
  // the file's last bytes, unless NULs were dropped. Any other text is encoded.
  const length = isDecodedAsIs(req.filename) && text.length === extracted.length ? Buffer.byteLength(text) : -1;
  const utf8 = length >= 0 ? data.subarray(data.length - length) : Buffer.from(text, 'utf8');
  const starts: number[] = [];
  const spans: number[] = [];
  // The character classes, made once for the tokenizer and the embedder.
  const classes = wasmClassesOf(text);
  const chunks = [...chunkText(text, req.chunking, starts, classes, spans, utf8)];
  const vectors = req.embed ? embedChunks(text, chunks, starts, classes) : undefined;
  return { prepared: { text, chunks, ...(vectors && { vectors }) }, utf8, spans };
}

/** The `last_error` of a failure in `prepareFile`: every error there comes of the file's content. */
export function refusalOf(err: unknown, filename: string): Refusal {
  if (err instanceof ExtractError) return { code: err.code, message: err.message };
  if (err instanceof LimitError) return { code: 'invalid_file', message: err.message };
  if (err instanceof TooManyTokens) return { code: 'invalid_file', message: `The file ${filename} is too large to index: ${err.message}.` };
  return { code: 'invalid_file', message: `The file ${filename} could not be read: ${(err as Error)?.message ?? String(err)}` };
}
