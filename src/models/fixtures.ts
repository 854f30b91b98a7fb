import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Logger } from '../core/module.js';
import { ModelError } from './errors.js';
import { FIXTURE_VERSION, parseFixture, type Exchange } from './fixture-format.js';
import type { ChatChunk, ChatRequest, ChatResult } from './types.js';

export { FIXTURE_VERSION, type Exchange };

/**
 * Fixtures of recorded model exchanges (the `record` and `replay` providers): a folder holding one JSON file
 * per exchange, named `<model>-<first 16 hex of the key>.json`, where the key is the sha256 of the
 * normalized request. One file per exchange keeps concurrent recordings apart (each is written to a
 * temporary name and renamed into place, atomically) and makes a new recording one new file in a diff.
 */
/** Objects with their keys sorted and `undefined` dropped, at every depth: one text for one meaning. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = canonical(v);
  }
  return out;
}

/**
 * The part of a request that decides the answer: model, messages, tools, tool choice and the sampling and
 * format parameters. Not the caller's abort signal, not whether the caller streams (a recording holds the
 * chunks either way), not a parameter left null, and no tool settings without tools (an upstream is sent
 * none then). API keys are never part of a request here.
 */
export function normalizeRequest(request: ChatRequest): Record<string, unknown> {
  const { signal: _signal, ...rest } = request;
  const out: Record<string, unknown> = { ...rest };
  for (const [k, v] of Object.entries(out)) if (v === null || v === undefined) delete out[k];
  if (!request.tools?.length) {
    delete out.tools;
    delete out.tool_choice;
    delete out.parallel_tool_calls;
  }
  return canonical(out) as Record<string, unknown>;
}

/** The sha256 (hex) of the normalized request's canonical JSON. */
export function requestKey(normalized: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(normalized)).digest('hex');
}

/** The file of an exchange: readable model name, then the key's start. */
export function fixtureName(model: string, key: string): string {
  return `${model.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64)}-${key.slice(0, 16)}.json`;
}

/** Leaf values by path (`messages.1.content`), for the distance and the differences of two requests. */
function leaves(value: unknown, path = '', out = new Map<string, string>()): Map<string, string> {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    if (entries.length === 0) out.set(path, JSON.stringify(value));
    for (const [k, v] of entries) leaves(v, path ? `${path}.${k}` : k, out);
  } else out.set(path, JSON.stringify(value));
  return out;
}

/** The paths where two normalized requests differ, with the value on each side (undefined: absent). */
export function differences(recorded: unknown, requested: unknown): { path: string; recorded?: string; requested?: string }[] {
  const a = leaves(recorded);
  const b = leaves(requested);
  const out: { path: string; recorded?: string; requested?: string }[] = [];
  for (const path of new Set([...a.keys(), ...b.keys()]))
    if (a.get(path) !== b.get(path)) out.push({ path, recorded: a.get(path), requested: b.get(path) });
  return out;
}

const clip = (text: string | undefined) => (text === undefined ? '(absent)' : text.length > 80 ? `${text.slice(0, 77)}…` : text);

/** How many recordings a miss compares with, and how many bytes of them; past either, the first ones. */
const MAX_COMPARED = 10_000;
const MAX_COMPARED_BYTES = 256 * 1024 * 1024;

/** How a fixture folder reads its files. */
export interface FolderOptions {
  /** The fixtures root the folder is inside: files are named relative to it in messages, never by a server path. */
  root: string;
  /** Largest fixture file (bytes): a larger one is refused by its size, before it is read. */
  maxBytes: number;
  log?: Pick<Logger, 'warn' | 'error'>;
}

/** One file as last read: its size and time, and the exchange it holds or the rule it breaks. */
interface Entry {
  mtimeMs: number;
  size: number;
  exchange?: Exchange;
  problem?: string;
}

/** The first `size` + 1 bytes of a file at most: one more than its size says when it grew since. */
async function readBounded(path: string, size: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(size + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buf.length; length += n)
      n = (await handle.read(buf, length, buf.length - length, length)).bytesRead;
    return buf.subarray(0, length);
  } finally {
    await handle.close();
  }
}

/**
 * A fixture folder: reads an exchange by request, writes one atomically, and explains a miss. Files are
 * read once: each is kept (parsed and checked) until its size or time changes, and the folder is listed
 * again only when its own time changes (a file added, renamed or removed). A file that breaks the format
 * is refused with its name and the rule, logged once per version of the file.
 */
export function fixtureFolder(dir: string, opts: FolderOptions) {
  const named = (file: string) => relative(opts.root, join(dir, file));
  const entries = new Map<string, Entry>();
  /** The folder's time when it was last listed. */
  let listed: number | undefined;

  /** The entry of one file, read and checked only when it changed; undefined when there is no such file. */
  async function load(file: string): Promise<Entry | undefined> {
    const path = join(dir, file);
    const st = await lstat(path).catch(() => undefined);
    if (!st) {
      entries.delete(file);
      return undefined;
    }
    const cached = entries.get(file);
    if (cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size) return cached;
    const entry: Entry = { mtimeMs: st.mtimeMs, size: st.size };
    if (!st.isFile()) entry.problem = 'it is not a regular file (a link or a folder)';
    else if (st.size > opts.maxBytes) entry.problem = `it is ${st.size} bytes, over the limit of ${opts.maxBytes} (--fixture-max-bytes)`;
    else {
      const bytes = await readBounded(path, st.size);
      // Written to while read (an editor, a recording): read again next time, past the limit or not.
      if (bytes.length !== st.size)
        throw new ModelError('server_error', `The fixture ${named(file)} changed while it was read; try again.`);
      try {
        entry.exchange = parseFixture(bytes.toString('utf8'));
      } catch (err) {
        entry.problem = (err as Error).message;
      }
    }
    if (entry.problem) opts.log?.error({ fixture: named(file) }, `the fixture ${named(file)} is refused: ${entry.problem}`);
    entries.set(file, entry);
    return entry;
  }

  /** Brings the entries up to date with the folder; false when there is no folder. */
  async function list(): Promise<boolean> {
    const st = await stat(dir).catch(() => undefined);
    if (!st?.isDirectory()) {
      entries.clear();
      listed = undefined;
      return false;
    }
    if (st.mtimeMs === listed) return true;
    const files = (await readdir(dir)).filter((f) => f.endsWith('.json') && !f.startsWith('.')).sort();
    const kept = new Set<string>();
    let bytes = 0;
    for (const file of files.slice(0, MAX_COMPARED)) {
      const entry = await load(file);
      if (!entry) continue;
      kept.add(file);
      if ((bytes += entry.size) > MAX_COMPARED_BYTES) break;
    }
    for (const file of entries.keys()) if (!kept.has(file)) entries.delete(file);
    listed = st.mtimeMs;
    return true;
  }

  return {
    dir,
    /** The recorded exchange of this request, or undefined; a ModelError naming the rule when its file breaks the format. */
    async find(request: ChatRequest): Promise<Exchange | undefined> {
      const key = requestKey(normalizeRequest(request));
      const file = fixtureName(request.model, key);
      const entry = await load(file);
      if (entry?.problem) throw new ModelError('server_error', `The fixture ${named(file)} is refused: ${entry.problem}.`);
      return entry?.exchange?.key === key ? entry.exchange : undefined;
    },
    /** Records an exchange: written under a temporary name, then renamed over the file (atomic). */
    async write(request: ChatRequest, answer: Pick<Exchange, 'chunks' | 'result' | 'error'>): Promise<string> {
      const normalized = normalizeRequest(request);
      const key = requestKey(normalized);
      const exchange: Exchange = { standin_fixture: FIXTURE_VERSION, key, request: normalized, ...canonicalAnswer(answer) };
      const name = fixtureName(request.model, key);
      const tmp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
      await mkdir(dir, { recursive: true });
      try {
        await writeFile(tmp, `${JSON.stringify(exchange, null, 2)}\n`);
        await rename(tmp, join(dir, name));
      } catch (err) {
        await rm(tmp, { force: true });
        throw err;
      }
      return name;
    },
    /**
     * The error of a miss. The caller is told the request's key only: the folder may hold other
     * organizations' recordings, so the nearest recording and where it differs go to the log, for the operator.
     */
    async miss(request: ChatRequest): Promise<ModelError> {
      const normalized = normalizeRequest(request);
      const key = requestKey(normalized);
      const head = `Replay miss: no recorded exchange for this request (model '${request.model}', key ${key.slice(0, 16)}).`;
      if (!(await list()))
        return new ModelError('invalid_prompt', `${head} The fixture folder does not exist: record first (provider: record).`);
      let nearest: { file: string; diff: ReturnType<typeof differences> } | undefined;
      for (const [file, entry] of entries) {
        if (!entry.exchange) continue;
        const diff = differences(entry.exchange.request, normalized);
        if (!nearest || diff.length < nearest.diff.length) nearest = { file, diff };
      }
      if (!nearest)
        return new ModelError('invalid_prompt', `${head} The fixture folder holds no recorded exchanges: record first (provider: record).`);
      const shown = nearest.diff
        .slice(0, 3)
        .map((d) => `${d.path}: recorded ${clip(d.recorded)}, requested ${clip(d.requested)}`)
        .join('; ');
      const more = nearest.diff.length > 3 ? ` (and ${nearest.diff.length - 3} more)` : '';
      opts.log?.warn(
        { fixtures: relative(opts.root, dir) || '.', key: key.slice(0, 16), nearest: named(nearest.file) },
        `${head} Nearest recorded: ${named(nearest.file)}, which differs at ${shown}${more}.`,
      );
      return new ModelError(
        'invalid_prompt',
        `${head} Record it (provider: record); the nearest recording and where it differs are in Standin's log.`,
      );
    },
  };
}

export type FixtureFolder = ReturnType<typeof fixtureFolder>;

/** The answer part in a fixed key order. */
function canonicalAnswer(answer: Pick<Exchange, 'chunks' | 'result' | 'error'>): Pick<Exchange, 'chunks' | 'result' | 'error'> {
  return {
    chunks: answer.chunks.map((c) => canonical(c) as ChatChunk),
    ...(answer.result ? { result: canonical(answer.result) as ChatResult } : {}),
    ...(answer.error ? { error: answer.error } : {}),
  };
}
