import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelErrorCode } from './errors.js';
import type { ChatChunk, ChatRequest, ChatResult } from './types.js';

/**
 * Fixtures of recorded model exchanges (the `record` and `replay` providers): a folder holding one JSON file
 * per exchange, named `<model>-<first 16 hex of the key>.json`, where the key is the sha256 of the
 * normalized request. One file per exchange keeps concurrent recordings apart (each is written to a
 * temporary name and renamed into place, atomically) and makes a new recording one new file in a diff.
 */
export const FIXTURE_VERSION = 1;

/** What a fixture file holds, in this order (keys sorted inside `request`, so files diff well). */
export interface Exchange {
  standin_fixture: typeof FIXTURE_VERSION;
  key: string;
  request: Record<string, unknown>;
  /** The pieces the provider passed on as the answer arrived; a replay passes the same ones. */
  chunks: ChatChunk[];
  result?: ChatResult;
  /** An error the upstream answered with (an HTTP status): replayed as the same error. */
  error?: { code: ModelErrorCode; message: string; status: number | null };
}

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

/** How many recordings a miss compares with; a folder larger than this is compared by its first files. */
const MAX_COMPARED = 10_000;

/** A fixture folder: reads an exchange by request, writes one atomically, and explains a miss. */
export function fixtureFolder(dir: string) {
  async function readExchange(file: string): Promise<Exchange | undefined> {
    try {
      const parsed = JSON.parse(await readFile(join(dir, file), 'utf8')) as Exchange;
      return parsed?.standin_fixture === FIXTURE_VERSION && typeof parsed.key === 'string' ? parsed : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    dir,
    /** The recorded exchange of this request, or undefined. */
    async find(request: ChatRequest): Promise<Exchange | undefined> {
      const key = requestKey(normalizeRequest(request));
      const found = await readExchange(fixtureName(request.model, key));
      return found?.key === key ? found : undefined;
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
    /** The message of a miss: the request's key, and the nearest recording with where it differs. */
    async missMessage(request: ChatRequest): Promise<string> {
      const normalized = normalizeRequest(request);
      const key = requestKey(normalized);
      const head = `Replay miss: no recorded exchange for this request (model '${request.model}', key ${key.slice(0, 16)}) in ${dir}.`;
      let files: string[] = [];
      try {
        files = (await readdir(dir)).filter((f) => f.endsWith('.json') && !f.startsWith('.')).sort();
      } catch {
        return `${head} The folder does not exist: record first (provider: record).`;
      }
      let nearest: { file: string; diff: ReturnType<typeof differences> } | undefined;
      for (const file of files.slice(0, MAX_COMPARED)) {
        const exchange = await readExchange(file);
        if (!exchange) continue;
        const diff = differences(exchange.request, normalized);
        if (!nearest || diff.length < nearest.diff.length) nearest = { file, diff };
      }
      if (!nearest) return `${head} The folder holds no recorded exchanges: record first (provider: record).`;
      const shown = nearest.diff
        .slice(0, 3)
        .map((d) => `${d.path}: recorded ${clip(d.recorded)}, requested ${clip(d.requested)}`)
        .join('; ');
      const more = nearest.diff.length > 3 ? ` (and ${nearest.diff.length - 3} more)` : '';
      return `${head} Nearest recorded: ${nearest.file}, which differs at ${shown}${more}.`;
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
