import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { endianness, homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import { wallNow } from '../core/clock.js';
import { FILE_SLICE } from '../core/file-slices.js';
import { idPattern } from '../core/ids.js';
import { insideRoot } from '../core/paths.js';
import { StoreIndex, type FileMeta, type IndexParts } from './index-core.js';
import { Int8Rows } from './int8-rows.js';
import { SUB, TOP } from './ivf.js';
import type { SourceLocation } from './search-source.js';

/**
 * Saved search indexes (docs/files.md, "Saved indexes"): a large store's index as the search worker holds
 * it, written to a file of a folder Standin owns, so that a first load on an instance (a start, a new
 * instance, a store evicted past --search-memory-mb) reads arrays and applies the changes logged since,
 * instead of reading, tokenizing and quantizing every chunk again.
 *
 * The file: 16 bytes (`STANDIX1`, the header's length, its CRC-32), the header as JSON in the rest of a
 * 4,096-byte block (format, store, the store's creation time, which database, the `index_version` it
 * reflects and what that version's change logged, embedder, dimensions, every length, the body's length and
 * CRC-32), then the arrays one after another, each from an 8-byte boundary, in the machine's byte order
 * (little-endian; a big-endian machine saves nothing). Everything in it is checked before use (lengths
 * against the file's size, which is bounded by the search memory budget; the checksum; each array against
 * the others, StoreIndex.restore): a truncated, corrupt, foreign or crafted file is refused and the store
 * is loaded from its rows as without it. A file is written under a temporary name, a slice at a time
 * (the worker's other work goes between), and renamed over the old one when whole; a crash leaves the old
 * file or none, and a torn write fails its checksum.
 */
export const FORMAT = 1;
const MAGIC = Buffer.from('STANDIX1', 'latin1');
const HEAD = 4096;
/** `.part` files older than this are a crashed writer's (a live one renames within minutes). */
const STALE_PART_MS = 3_600_000;
const STORE_ID = idPattern('vs');

/** Whom a saved file must belong to: the store, its creation, the database and the embedder. */
export interface SavedIdentity {
  store: string;
  createdAt: number;
  /** `sourceKey` of the database. */
  source: string;
  embedder: string;
}

interface Header extends SavedIdentity {
  format: number;
  version: number;
  fingerprint: string;
  dimensions: number;
  approximate: boolean;
  n: number;
  entries: number;
  terms: number;
  wordBytes: number;
  fileBytes: number;
  /** -1: no quantizer. */
  ivfSlots: number;
  bodyBytes: number;
  crc: number;
}

/** Which database a file's store lives in: a hash of the SQLite file's path, or of the PostgreSQL URL without its password. */
export function sourceKey(at: SourceLocation): string {
  let text: string;
  if ('sqliteFile' in at) text = `sqlite:${at.sqliteFile}`;
  else {
    try {
      const u = new URL(at.databaseUrl);
      u.password = '';
      text = u.href;
    } catch {
      text = at.databaseUrl;
    }
  }
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** What a version's change logged, as the header keeps it: a store's history that diverged (a restored backup) does not match. */
export function fingerprintOf(fileIds: readonly string[]): string {
  return createHash('sha256')
    .update([...new Set(fileIds)].sort().join('\n'))
    .digest('hex')
    .slice(0, 32);
}

/**
 * The folder of saved indexes when --search-index-dir is not given: `search-indexes` in the data folder of
 * a SQLite store; otherwise the user's cache folder (XDG_CACHE_HOME or ~/.cache), or the temporary folder
 * (a folder per user) when there is no home.
 */
export function defaultIndexDir(data: string, sqlite: boolean): string {
  if (sqlite && data !== ':memory:') return join(data, 'search-indexes');
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && xdg.startsWith('/')) return join(xdg, 'standin', 'search-indexes');
  let home = '';
  try {
    home = homedir();
  } catch {
    // No home folder: the temporary folder below.
  }
  if (home && home !== '/') return join(home, '.cache', 'standin', 'search-indexes');
  return join(tmpdir(), `standin-search-indexes-${process.getuid?.() ?? 'user'}`);
}

/**
 * Makes the folder (mode 0700) and checks it is one this user owns that nobody else may write to (another
 * user's files in a shared temporary folder would otherwise be read); the reason it cannot be used, or null.
 */
export async function prepareDir(dir: string): Promise<string | null> {
  if (endianness() !== 'LE') return 'saved indexes are little-endian and this machine is not';
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const st = await stat(dir);
    if (!st.isDirectory()) return `${dir} is not a folder`;
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) return `${dir} belongs to another user`;
    if (st.mode & 0o022) return `${dir} may be written by other users`;
    return null;
  } catch (err) {
    return `${dir}: ${(err as Error).message}`;
  }
}

/** The file of a store's saved index in `dir` (the store id checked: it becomes a file name). */
export function savedPath(dir: string, source: string, store: string): string {
  if (!STORE_ID.test(store) || !/^[0-9a-f]{16}$/.test(source)) throw new Error('not a store id');
  return insideRoot(dir, `${source}-${store}.idx`);
}

type Section = { bytes: number; kind: 'i8' | 'u8' | 'u16' | 'i32' | 'u32' | 'f32' | 'f64'; count: number };
const WIDTH = { i8: 1, u8: 1, u16: 2, i32: 4, u32: 4, f32: 4, f64: 8 } as const;
const pad8 = (x: number) => Math.ceil(x / 8) * 8;

/** The body's arrays in file order, from the header's lengths. */
function layout(h: Pick<Header, 'dimensions' | 'approximate' | 'n' | 'entries' | 'terms' | 'wordBytes' | 'fileBytes' | 'ivfSlots'>) {
  const { n, dimensions: d } = h;
  const s = (kind: Section['kind'], count: number): Section => ({ kind, count, bytes: count * WIDTH[kind] });
  const list: [string, Section][] = [];
  if (h.approximate) list.push(['q8', s('i8', n * d)], ['qscale', s('f32', n)]);
  else list.push(['vectors', s('f32', n * d)]);
  list.push(
    ['hasVector', s('u8', n)],
    ['alive', s('u8', n)],
    ['fileOf', s('i32', n)],
    ['seqs', s('u32', n)],
    ['lengths', s('u32', n)],
    ['termStart', s('u32', n + 1)],
    ['slotTerms', s('i32', h.entries)],
    ['slotTfs', s('u16', h.entries)],
    ['maxTf', s('u16', h.terms)],
    ['minLen', s('f64', h.terms)],
    ['words', s('u8', h.wordBytes)],
    ['files', s('u8', h.fileBytes)],
  );
  if (h.ivfSlots >= 0)
    list.push(['top', s('f32', TOP * d)], ['sub', s('f32', TOP * SUB * d)], ['lens', s('u32', TOP * SUB)], ['slots', s('i32', h.ivfSlots)]);
  return { list, bodyBytes: list.reduce((sum, [, x]) => sum + pad8(x.bytes), 0) };
}

const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/**
 * Writes a store's index to `path` (through a temporary file, renamed when whole). Gives up (false, no file
 * left) when the index changed between two slices, `current()` turns false (the store was dropped, forgotten
 * or the indexes cleared), the file would be larger than `maxBytes`, or the disk refused.
 */
export async function saveIndex(
  path: string,
  who: SavedIdentity,
  at: { version: number; fingerprint: string },
  index: StoreIndex,
  maxBytes: number,
  current: () => boolean,
): Promise<boolean> {
  const parts = index.parts();
  const changes = index.changes;
  const words = Buffer.from(parts.words.join('\n'), 'utf8');
  const files = Buffer.from(JSON.stringify(parts.files), 'utf8');
  const ivf = parts.ivf;
  const shape = {
    dimensions: parts.dimensions,
    approximate: parts.approximate,
    n: parts.n,
    entries: parts.slotTerms.length,
    terms: parts.words.length,
    wordBytes: words.length,
    fileBytes: files.length,
    ivfSlots: ivf ? ivf.slots.length : -1,
  };
  const { list, bodyBytes } = layout(shape);
  if (HEAD + bodyBytes > maxBytes) return false;
  const arrays = { ...parts, words, files, ...(ivf ?? {}) } as unknown as Record<string, ArrayBufferView>;
  const part = `${path}.${process.pid}.${threadId}.${randomBytes(4).toString('hex')}.part`;
  let fh: FileHandle | undefined;
  try {
    fh = await open(part, 'wx', 0o600);
    let pos = HEAD;
    let crc = 0;
    const zeros = Buffer.alloc(8);
    for (const [name, section] of list) {
      const all = bytesOf(arrays[name]);
      if (all.length !== section.bytes) throw new Error(`${name} is not its length`);
      for (let off = 0; off < all.length; off += FILE_SLICE) {
        // The int8 rows are copied first: they live in a WebAssembly memory, which a change made while the
        // write is under way may grow, and a memory that could not grow in place is moved.
        const view = all.subarray(off, Math.min(all.length, off + FILE_SLICE));
        const slice = name === 'q8' ? Buffer.from(view) : view;
        crc = crc32(slice, crc);
        await fh.write(slice, 0, slice.length, pos);
        pos += slice.length;
        // The index changed while the slice was written (a delta, a compaction): the file would mix two states.
        if (index.changes !== changes || !current()) throw new Error('changed');
      }
      const padding = pad8(section.bytes) - section.bytes;
      if (padding) {
        crc = crc32(zeros.subarray(0, padding), crc);
        await fh.write(zeros, 0, padding, pos);
        pos += padding;
      }
    }
    const header: Header = { format: FORMAT, ...who, ...at, ...shape, bodyBytes, crc };
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    if (json.length > HEAD - 16) throw new Error('header too long');
    const head = Buffer.alloc(HEAD, 0x20);
    MAGIC.copy(head, 0);
    head.writeUInt32LE(json.length, 8);
    head.writeUInt32LE(crc32(json), 12);
    json.copy(head, 16);
    await fh.write(head, 0, HEAD, 0);
    await fh.close();
    fh = undefined;
    if (!current()) throw new Error('changed');
    await rename(part, path);
    return true;
  } catch {
    await fh?.close().catch(() => {});
    await unlink(part).catch(() => {});
    return false;
  }
}

export type Restored = { index: StoreIndex; version: number; fingerprint: string } | { refused: string };

const isCount = (x: unknown, max = 2 ** 40): x is number => Number.isSafeInteger(x) && (x as number) >= 0 && (x as number) <= max;

/** The header of a saved file, checked for shape and belonging to `who`; or why not. */
function headerOf(head: Buffer, who: SavedIdentity): Header | string {
  if (!head.subarray(0, 8).equals(MAGIC)) return 'not a saved index';
  const len = head.readUInt32LE(8);
  if (len > HEAD - 16) return 'its header is too long';
  const json = head.subarray(16, 16 + len);
  if (crc32(json) !== head.readUInt32LE(12)) return 'its header is corrupt';
  let h: Header;
  try {
    h = JSON.parse(json.toString('utf8')) as Header;
  } catch {
    return 'its header is not JSON';
  }
  if (typeof h !== 'object' || h === null) return 'its header is not an object';
  if (h.format !== FORMAT) return `format ${String(h.format)}, not ${FORMAT}`;
  if (h.store !== who.store || h.createdAt !== who.createdAt || h.source !== who.source) return 'it is of another store';
  if (h.embedder !== who.embedder) return 'it is of another embedder';
  if (typeof h.fingerprint !== 'string' || typeof h.approximate !== 'boolean' || !isCount(h.crc, 0xffffffff)) return 'its header';
  for (const k of ['version', 'n', 'entries', 'terms', 'wordBytes', 'fileBytes', 'bodyBytes'] as const)
    if (!isCount(h[k])) return `its header's ${k}`;
  if (!isCount(h.dimensions, 65_536) || !isCount(h.n, 2 ** 31 - 2) || !(h.ivfSlots === -1 || isCount(h.ivfSlots, 2 ** 31 - 1)))
    return 'its header';
  return h;
}

/**
 * Reads a store's saved index, if there is one that belongs to `who`, is no larger than `maxBytes` and
 * passes every check; its version and fingerprint say which changes to apply after it. The per-chunk
 * arrays get a sixteenth spare, as a load's renumbering leaves them.
 */
export async function restoreIndex(path: string, who: SavedIdentity, maxBytes: number, approximateFrom: number): Promise<Restored> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch {
    return { refused: 'none saved' };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { refused: 'not a file' };
    if (st.size > maxBytes) return { refused: `larger (${st.size} bytes) than the search memory budget` };
    if (st.size < HEAD) return { refused: 'truncated' };
    const head = Buffer.alloc(HEAD);
    await fh.read(head, 0, HEAD, 0);
    const h = headerOf(head, who);
    if (typeof h === 'string') return { refused: h };
    const { list, bodyBytes } = layout(h);
    // Every length is bounded by the file's size before anything is allocated.
    if (bodyBytes !== h.bodyBytes || HEAD + bodyBytes !== st.size) return { refused: 'its lengths do not match its size' };
    const n = h.n;
    const cap = n + (n >> 4) + 16;
    const terms = h.entries + (h.entries >> 4) + 16;
    // Per-chunk arrays (and the chunks' words) get room for the changes that follow.
    const room: Record<string, number> = {
      q8: cap * h.dimensions,
      vectors: cap * h.dimensions,
      termStart: cap + 1,
      slotTerms: terms,
      slotTfs: terms,
      ...Object.fromEntries(['qscale', 'hasVector', 'alive', 'fileOf', 'seqs', 'lengths'].map((k) => [k, cap])),
    };
    const made: Record<string, ArrayBufferView> = {};
    let pos = HEAD;
    let crc = 0;
    for (const [name, section] of list) {
      const count = room[name] ?? section.count;
      // The int8 rows are read into the WebAssembly memory that searches them (int8-rows.ts), not copied there after.
      const a =
        name === 'q8'
          ? new Int8Rows(h.dimensions, cap).array
          : new {
              i8: Int8Array,
              u8: Uint8Array,
              u16: Uint16Array,
              i32: Int32Array,
              u32: Uint32Array,
              f32: Float32Array,
              f64: Float64Array,
            }[section.kind](count);
      const bytes = bytesOf(a).subarray(0, section.bytes);
      for (let off = 0; off < bytes.length; off += FILE_SLICE) {
        const slice = bytes.subarray(off, Math.min(bytes.length, off + FILE_SLICE));
        const { bytesRead } = await fh.read(slice, 0, slice.length, pos + off);
        if (bytesRead !== slice.length) return { refused: 'truncated' };
        crc = crc32(slice, crc);
      }
      const padding = pad8(section.bytes) - section.bytes;
      if (padding) {
        const tail = Buffer.alloc(padding);
        await fh.read(tail, 0, padding, pos + section.bytes);
        crc = crc32(tail, crc);
      }
      pos += pad8(section.bytes);
      made[name] = a;
    }
    if (crc !== h.crc) return { refused: 'its checksum does not match (corrupt)' };
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let words: string[];
    let files: (FileMeta | null)[];
    try {
      words = h.terms ? decoder.decode(made.words).split('\n') : [];
      files = JSON.parse(decoder.decode(made.files)) as (FileMeta | null)[];
    } catch {
      return { refused: 'its word or file table is not valid' };
    }
    if (words.length !== h.terms) return { refused: 'its word table does not match its header' };
    if (!Array.isArray(files)) return { refused: 'its file table is not a list' };
    const parts = {
      ...(made as unknown as Omit<IndexParts, 'words' | 'files' | 'ivf'>),
      vectors: (made.vectors as Float32Array<ArrayBuffer>) ?? new Float32Array(0),
      q8: (made.q8 as Int8Array<ArrayBuffer>) ?? new Int8Array(0),
      qscale: (made.qscale as Float32Array<ArrayBuffer>) ?? new Float32Array(0),
      dimensions: h.dimensions,
      approximate: h.approximate,
      n,
      words,
      files,
      ivf:
        h.ivfSlots >= 0
          ? {
              top: made.top as Float32Array<ArrayBuffer>,
              sub: made.sub as Float32Array<ArrayBuffer>,
              lens: made.lens as Uint32Array<ArrayBuffer>,
              slots: made.slots as Int32Array<ArrayBuffer>,
            }
          : null,
    } satisfies IndexParts;
    try {
      return { index: await StoreIndex.restore(parts, approximateFrom), version: h.version, fingerprint: h.fingerprint };
    } catch (err) {
      return { refused: (err as Error).message };
    }
  } catch (err) {
    return { refused: (err as Error).message };
  } finally {
    await fh.close().catch(() => {});
  }
}

/** Removes a store's saved index (a deleted store). */
export async function removeSaved(dir: string, source: string, store: string): Promise<void> {
  await unlink(savedPath(dir, source, store)).catch(() => {});
}

/**
 * The saved stores of one database in `dir` (by the name's prefix), and removes crashed writers' `.part`
 * files; `keep` says which of the stores still exist, and the others' files are removed.
 */
export async function sweepSaved(dir: string, source: string, keep: (stores: string[]) => Promise<Set<string>>): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const now = wallNow();
  for (const name of names)
    if (name.endsWith('.part')) {
      const st = await stat(join(dir, name)).catch(() => undefined);
      if (st && now - st.mtimeMs > STALE_PART_MS) await unlink(join(dir, name)).catch(() => {});
    }
  const prefix = `${source}-`;
  const stores = names.filter((f) => f.startsWith(prefix) && f.endsWith('.idx')).map((f) => f.slice(prefix.length, -4));
  const valid = stores.filter((s) => STORE_ID.test(s));
  const kept = valid.length ? await keep(valid) : new Set<string>();
  let removed = 0;
  for (const s of valid)
    if (!kept.has(s)) {
      await removeSaved(dir, source, s);
      removed++;
    }
  return removed;
}

/** Removes every saved index of one database (the state was reset or replaced by an import). */
export async function clearSaved(dir: string, source: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) if (name.startsWith(`${source}-`) && name.endsWith('.idx')) await unlink(join(dir, name)).catch(() => {});
}
