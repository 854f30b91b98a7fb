import { StringDecoder } from 'node:string_decoder';
import type { StoreTable } from '../store/tables.js';
import { invalid } from '../core/errors.js';

/**
 * The snapshot file: gzip'd JSON lines.
 *
 *     {"format":"standin-snapshot","version":1,"schema":[…migrations…],"created_at":…,"dialect":"sqlite","clock_offset_ms":0}
 *     {"table":"ad_groups","columns":[["id","text"],["created_at","integer"],…]}
 *     ["adgrp_…",1764000000,…]                      one line per row, values in the order of `columns`
 *     {"file":"file-…"}
 *     "base64…"                                     the file's bytes, in chunks of at most CHUNK_BYTES, up to the next object
 *     {"end":{"tables":…,"rows":…,"files":…,"bytes":…}}
 *
 * Tables come first, then the files' bytes, then the end line: a file cut short has no end line and is
 * refused whole.
 */
export const FORMAT = 'standin-snapshot';
export const VERSION = 1;

/** The kinds a column's value travels as; each dialect's column types map onto one (`kindOf`). */
export type Kind = 'text' | 'integer' | 'real' | 'bytes';
const KINDS: readonly Kind[] = ['text', 'integer', 'real', 'bytes'];

/** Raw bytes per base64 line of a file. */
export const CHUNK_BYTES = 256 * 1024;
/** A line longer than this is refused before it is parsed (a row of 10 large text columns fits). */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;
/** Nesting a line may have: a row is an array of scalars, the header an object of arrays. */
export const MAX_DEPTH = 4;
/** Lines a snapshot may have (a row, a table or a chunk of a file each; a file of empty lines stops here). */
export const MAX_LINES = 200_000_000;

/**
 * The bounds of one import (settings `--snapshot-max-expanded-bytes` and `--snapshot-timeout-ms`): what
 * the file may weigh decompressed, and the wall time (`performance.now()`) past which reading it stops.
 */
export interface ReadLimits {
  maxExpandedBytes: number;
  deadline: number;
  /** Milliseconds the deadline allowed, for the message. */
  timeoutMs: number;
}

export interface Header {
  format: typeof FORMAT;
  version: number;
  /** The migrations applied to the store it was taken of, in order. */
  schema: string[];
  created_at: number;
  dialect: 'sqlite' | 'postgres';
  clock_offset_ms: number;
}

export interface Totals {
  tables: number;
  rows: number;
  files: number;
  bytes: number;
}

/** A snapshot that cannot be imported: always the client's file, so a 400 on the control plane. */
export const badSnapshot = (message: string) => invalid(`The snapshot cannot be imported: ${message}`, 'body', 'invalid_snapshot');

/** The kind a column travels as, from the type the database reports; an unknown type stops an export rather than guess. */
export function kindOf(table: string, column: StoreTable['columns'][number]): Kind {
  const t = column.dataType.toLowerCase();
  if (/int/.test(t)) return 'integer';
  if (/double|float|real|numeric/.test(t)) return 'real';
  if (/blob|bytea/.test(t)) return 'bytes';
  if (/text|char/.test(t)) return 'text';
  throw new Error(`${table}.${column.name} is of type ${column.dataType}, which snapshots do not carry yet (format.ts kindOf)`);
}

/** A value as the database gave it, in its snapshot form. */
export function encodeValue(kind: Kind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'bytes') return Buffer.from(value as Uint8Array).toString('base64');
  if (kind === 'integer' && typeof value === 'bigint') return Number(value);
  return value;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A value of the snapshot, checked against its kind, as the database takes it. */
export function decodeValue(kind: Kind, value: unknown, where: string): unknown {
  if (value === null) return null;
  switch (kind) {
    case 'text':
      if (typeof value === 'string') return value;
      break;
    case 'integer':
      if (Number.isSafeInteger(value)) return value;
      break;
    case 'real':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      break;
    case 'bytes':
      if (typeof value === 'string' && value.length % 4 === 0 && BASE64.test(value)) return Buffer.from(value, 'base64');
      break;
  }
  throw badSnapshot(`${where} is not a value of kind ${kind}`);
}

/** Checks a table line's column list. */
export function parseColumns(value: unknown, table: string): [string, Kind][] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 1000) throw badSnapshot(`table ${table} has no valid column list`);
  const seen = new Set<string>();
  return value.map((c) => {
    if (!Array.isArray(c) || c.length !== 2 || typeof c[0] !== 'string' || !KINDS.includes(c[1] as Kind))
      throw badSnapshot(`table ${table} has a column that is not [name, kind]`);
    // A row is checked and inserted by column name: a name given twice could pass a check as one value
    // and be written as the other.
    if (seen.has(c[0])) throw badSnapshot(`table ${table} names column ${c[0]} twice`);
    seen.add(c[0]);
    return [c[0], c[1] as Kind];
  });
}

/** Checks the first line. */
export function parseHeader(line: unknown): Header {
  const h = line as Partial<Header> | null;
  if (!h || typeof h !== 'object' || h.format !== FORMAT) throw badSnapshot(`it does not start with a ${FORMAT} header`);
  if (h.version !== VERSION) throw badSnapshot(`format version ${String(h.version)} is not one this Standin reads (${VERSION})`);
  if (!Array.isArray(h.schema) || !h.schema.every((m) => typeof m === 'string'))
    throw badSnapshot("the header's schema is not a list of migrations");
  if (h.dialect !== 'sqlite' && h.dialect !== 'postgres') throw badSnapshot("the header's dialect is not sqlite or postgres");
  if (!Number.isSafeInteger(h.clock_offset_ms) || h.clock_offset_ms! < 0)
    throw badSnapshot("the header's clock_offset_ms is not a whole number of ms");
  if (!Number.isSafeInteger(h.created_at)) throw badSnapshot("the header's created_at is not Unix seconds");
  return h as Header;
}

/** Refuses a line nested deeper than MAX_DEPTH before JSON.parse sees it. */
function checkDepth(line: string, at: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > MAX_DEPTH) throw badSnapshot(`line ${at} is nested deeper than ${MAX_DEPTH}`);
    } else if (c === 93 || c === 125) depth--;
  }
}

/** Parses one line of the file. */
export function parseLine(line: string, at: number): unknown {
  checkDepth(line, at);
  try {
    return JSON.parse(line);
  } catch {
    throw badSnapshot(`line ${at} is not JSON`);
  }
}

/** No bounds but the line's size (unit tests of the format). */
export const UNBOUNDED: ReadLimits = { maxExpandedBytes: Infinity, deadline: Infinity, timeoutMs: Infinity };

/** Throws once the import has run past its deadline. */
function checkDeadline(limits: ReadLimits): void {
  if (performance.now() > limits.deadline)
    throw badSnapshot(`it took longer than ${limits.timeoutMs} ms to read (--snapshot-timeout-ms); nothing was changed`);
}

/**
 * The lines of decompressed text, each at most MAX_LINE_CHARS, at most MAX_LINES of them, within the
 * limits' bytes and deadline: never more than one line (and one chunk) in memory, whatever the file holds.
 */
export async function* lines(source: AsyncIterable<Buffer | string>, limits: ReadLimits = UNBOUNDED): AsyncGenerator<string> {
  let held = '';
  let expanded = 0;
  let count = 0;
  const counted = (line: string) => {
    if (++count > MAX_LINES) throw badSnapshot(`it has more than ${MAX_LINES} lines`);
    return line;
  };
  // A chunk may end inside a character of several bytes: the decoder holds that part for the next chunk.
  const text = new StringDecoder('utf8');
  for await (const chunk of source) {
    expanded += chunk.length;
    if (expanded > limits.maxExpandedBytes)
      throw badSnapshot(`it expands to more than ${limits.maxExpandedBytes} bytes (--snapshot-max-expanded-bytes)`);
    checkDeadline(limits);
    // Only the new text is searched for line ends: a long line costs once, not once per chunk.
    const piece = typeof chunk === 'string' ? chunk : text.write(chunk);
    let nl = piece.indexOf('\n');
    if (nl >= 0) {
      yield counted(held + piece.slice(0, nl));
      let start = nl + 1;
      for (nl = piece.indexOf('\n', start); nl >= 0; nl = piece.indexOf('\n', start)) {
        yield counted(piece.slice(start, nl));
        start = nl + 1;
      }
      held = piece.slice(start);
    } else held += piece;
    if (held.length > MAX_LINE_CHARS) throw badSnapshot(`a line is longer than ${MAX_LINE_CHARS} characters`);
  }
  held += text.end();
  if (held.length) yield counted(held);
}
