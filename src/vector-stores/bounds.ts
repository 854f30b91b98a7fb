import type * as Htmlparser2 from 'htmlparser2';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createInflate, createInflateRaw } from 'node:zlib';
import { zipDirectory, zipEntryData } from '../core/zip.js';
import { lazy } from '../store/lazy.js';
import { beyond, LimitError, type IngestLimits } from './limits.js';

/**
 * Checks made before a file reaches a parser that could be made to use unbounded memory or time: the
 * inflated size of a DOCX's parts and a PDF's Flate streams (inflated here into nothing, counting, so a
 * bomb costs a few kilobytes to find), and the nesting depth of HTML and JSON (the parsers and
 * html-to-text recurse, and htmlparser2 slows with depth). Each stops at its limit and throws LimitError.
 */
const htmlparser2 = lazy<typeof Htmlparser2>('htmlparser2');

const MB = 1024 * 1024;
const mb = (bytes: number) => `${Math.round(bytes / MB)} MB`;

/** Inflates `data` through `stages` inflaters into nothing; returns the bytes that came out, or throws past `budget`. */
async function inflatedSize(data: Uint8Array, stages: (() => NodeJS.ReadWriteStream)[], budget: number): Promise<number> {
  let n = 0;
  const count = new Writable({
    write(chunk: Buffer, _enc, done) {
      n += chunk.length;
      done(n > budget ? new LimitError('inflated past the budget') : null);
    },
  });
  try {
    await pipeline([Readable.from([Buffer.from(data.buffer, data.byteOffset, data.byteLength)]), ...stages.map((make) => make()), count]);
  } catch (err) {
    if (err instanceof LimitError) throw err;
    // A corrupt or truncated stream: what came out counts; the parser will judge the rest.
  }
  return n;
}

// Truncated streams are common in real PDFs: inflate what is there rather than fail.
const lenient = { finishFlush: constants.Z_SYNC_FLUSH };

/** A zip archive (a DOCX package): entry count, then every entry's real inflated size, against the limits. */
export async function checkZip(filename: string, data: Buffer, limits: IngestLimits): Promise<void> {
  const directory = zipDirectory(data);
  if (!directory) return; // not a zip: the DOCX reader says so
  if (directory.count > limits.pages) throw beyond(filename, `has ${directory.count} parts`, `${limits.pages}`, 'ingest-max-pages');
  let total = 0;
  for (const entry of directory.entries) {
    // What the header declares is checked first (cheap), then what the bytes really inflate to: a header may lie.
    if (total + entry.declaredSize > limits.inflatedBytes) throw tooMuch(filename, limits);
    const body = entry.method === 8 ? zipEntryData(data, entry) : undefined;
    if (!body) {
      total += entry.declaredSize;
      continue;
    }
    try {
      total += await inflatedSize(body, [() => createInflateRaw(lenient)], limits.inflatedBytes - total);
    } catch (err) {
      if (err instanceof LimitError) throw tooMuch(filename, limits);
      throw err;
    }
  }
}

const tooMuch = (filename: string, limits: IngestLimits) =>
  beyond(filename, 'inflates to more than its compressed parts may', mb(limits.inflatedBytes), 'ingest-max-inflated-mb');

const STREAM = Buffer.from('stream');
const ENDSTREAM = Buffer.from('endstream');

/**
 * A PDF's Flate streams (FlateDecode, also chained), inflated and counted against the limit. Streams
 * other filters or encryption hide are left to the memory limit of the ingestion process.
 */
export async function checkPdf(filename: string, data: Buffer, limits: IngestLimits): Promise<void> {
  let total = 0;
  let from = 0;
  for (;;) {
    const kw = data.indexOf(STREAM, from);
    if (kw < 0) return;
    from = kw + STREAM.length;
    // `stream` right after a dictionary's `>>` (not the tail of `endstream`), then an end of line.
    const before = data.subarray(Math.max(0, kw - 4096), kw).toString('latin1');
    if (!/>>\s*$/.test(before)) continue;
    let start = from;
    if (data[start] === 0x0d) start++;
    if (data[start] === 0x0a) start++;
    const dict = before.slice(before.lastIndexOf(' obj') + 1);
    const filters = /\/Filter\s*(\[[^\]]*\]|\/\w+)/.exec(dict)?.[1] ?? '';
    const flates = /^\[?\s*((?:\/(?:FlateDecode|Fl)\b\s*)+)/.exec(filters)?.[1].match(/\//g)?.length ?? 0;
    const stop = data.indexOf(ENDSTREAM, start);
    const end = stop < 0 ? data.length : stop;
    from = end;
    if (!flates) continue;
    const stages = Array.from({ length: flates }, () => () => createInflate(lenient));
    try {
      total += await inflatedSize(data.subarray(start, end), stages, limits.inflatedBytes - total);
    } catch (err) {
      if (err instanceof LimitError)
        throw beyond(filename, 'has streams that inflate to more', mb(limits.inflatedBytes), 'ingest-max-inflated-mb');
      throw err;
    }
  }
}

/** HTML elements nested deeper than the limit (as htmlparser2, html-to-text's parser, nests them). */
export function checkHtmlDepth(filename: string, html: string, limits: IngestLimits): void {
  let depth = 0;
  const deep = new LimitError('deep');
  const parser = new (htmlparser2().Parser)({
    onopentag() {
      if (++depth > limits.depth) throw deep;
    },
    onclosetag() {
      depth--;
    },
  });
  try {
    parser.write(html);
    parser.end();
  } catch (err) {
    if (err === deep) throw beyond(filename, 'nests elements deeper', `${limits.depth} levels`, 'ingest-max-depth');
    throw err;
  }
}

/** JSON arrays and objects nested deeper than the limit (counted outside strings; the text need not be valid JSON). */
export function checkJsonDepth(filename: string, text: string, limits: IngestLimits): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limits.depth) throw beyond(filename, 'nests arrays and objects deeper', `${limits.depth} levels`, 'ingest-max-depth');
    } else if (c === 0x5d || c === 0x7d) depth = Math.max(0, depth - 1);
  }
}
