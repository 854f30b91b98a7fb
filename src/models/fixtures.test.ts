import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBuiltinProvider } from './builtin.js';
import { ModelError } from './errors.js';
import { differences, fixtureFolder, normalizeRequest, requestKey } from './fixtures.js';
import { createRecordProvider, createReplayProvider } from './recording.js';
import type { ChatChunk, ChatRequest } from './types.js';

const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content }],
  ...extra,
});
const keyOf = (r: ChatRequest) => requestKey(normalizeRequest(r));

describe('the key of a request', () => {
  it('ignores what does not change the answer: the signal, null parameters, key order, tool settings without tools', () => {
    const base = ask('hi', { temperature: 0.2 });
    expect(keyOf({ ...base, signal: new AbortController().signal, top_p: null, max_tokens: null })).toBe(keyOf(base));
    expect(keyOf({ temperature: 0.2, messages: [{ content: 'hi', role: 'user' }], model: 'gpt-4o' })).toBe(keyOf(base));
    expect(keyOf({ ...base, tools: [], tool_choice: 'auto', parallel_tool_calls: true })).toBe(keyOf(base));
  });
  it('changes with the model, the messages, the tools and the sampling parameters', () => {
    const base = ask('hi', { temperature: 0.2 });
    const tool = { type: 'function' as const, function: { name: 'f' } };
    const keys = [
      base,
      { ...base, model: 'gpt-4.1' },
      ask('hi!', { temperature: 0.2 }),
      { ...base, temperature: 0.3 },
      { ...base, max_tokens: 10 },
      { ...base, tools: [tool] },
      { ...base, tools: [tool], tool_choice: 'required' as const },
    ].map(keyOf);
    expect(new Set(keys).size).toBe(keys.length);
  });
  it('differences name each path that differs, with both sides', () => {
    expect(differences(normalizeRequest(ask('a', { temperature: 1 })), normalizeRequest(ask('b')))).toEqual([
      { path: 'messages.0.content', recorded: '"a"', requested: '"b"' },
      { path: 'temperature', recorded: '1', requested: undefined },
    ]);
  });
});

describe('record and replay providers', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'standin-fixtures-unit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const builtin = () => createBuiltinProvider({ rules: [], chunkChars: 4, delayMs: 0 });
  const warnings: string[] = [];
  const log = { warn: (_obj: unknown, msg?: string) => warnings.push(msg ?? ''), error: () => {} };
  const opts = () => ({ root: dir, maxBytes: 1 << 20, log });

  it('a recorded exchange replays with the same chunks and result, whether the caller streams or not', async () => {
    const recorder = createRecordProvider(builtin(), dir, opts());
    const live: ChatChunk[] = [];
    const result = await recorder.complete(ask('replay me'), (c) => live.push(c));
    expect(live.length).toBeGreaterThan(2);
    const [file] = readdirSync(dir);
    expect(file).toMatch(/^gpt-4o-[0-9a-f]{16}\.json$/);
    const text = readFileSync(join(dir, file), 'utf8');
    expect(JSON.parse(text)).toEqual({
      standin_fixture: 1,
      key: keyOf(ask('replay me')),
      request: normalizeRequest(ask('replay me')),
      chunks: live,
      result,
    });

    const replay = createReplayProvider(dir, opts());
    const again: ChatChunk[] = [];
    expect(await replay.complete(ask('replay me'), (c) => again.push(c))).toEqual(result);
    expect(again).toEqual(live);
    expect(await replay.complete(ask('replay me'))).toEqual(result);
  });

  it('concurrent recordings each land whole, with no temporary file left', async () => {
    const recorder = createRecordProvider(builtin(), dir, opts());
    await Promise.all(Array.from({ length: 40 }, (_, i) => recorder.complete(ask(`message ${i % 8}`))));
    const files = readdirSync(dir);
    expect(files).toHaveLength(8);
    for (const f of files) expect(JSON.parse(readFileSync(join(dir, f), 'utf8')).standin_fixture).toBe(1);
  });

  it('an error the upstream answered with is recorded and replayed as the same error', async () => {
    const failing = {
      name: 'upstream',
      complete: async () => {
        throw new ModelError('rate_limit_exceeded', 'The model upstream answered 429: slow down', 429);
      },
    };
    await expect(createRecordProvider(failing, dir, opts()).complete(ask('too fast'))).rejects.toMatchObject({
      code: 'rate_limit_exceeded',
    });
    const err = await createReplayProvider(dir, opts())
      .complete(ask('too fast'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ code: 'rate_limit_exceeded', status: 429, message: 'The model upstream answered 429: slow down' });
  });

  it('a miss names the key to the caller and the nearest recording to the log; an absent folder says to record first', async () => {
    const absent = await createReplayProvider(join(dir, 'none'), opts())
      .complete(ask('x'))
      .catch((e: ModelError) => e);
    expect(absent).toMatchObject({ code: 'invalid_prompt' });
    expect((absent as Error).message).toContain('The fixture folder does not exist: record first');
    const recorder = createRecordProvider(builtin(), dir, opts());
    await recorder.complete(ask('the weather in Paris'));
    await recorder.complete(ask('something else entirely', { temperature: 1 }));
    const miss = (await createReplayProvider(dir, opts())
      .complete(ask('the weather in Oslo'))
      .catch((e: ModelError) => e)) as ModelError;
    expect(miss.code).toBe('invalid_prompt');
    const nearest = `gpt-4o-${keyOf(ask('the weather in Paris')).slice(0, 16)}.json`;
    const head = `Replay miss: no recorded exchange for this request (model 'gpt-4o', key ${keyOf(ask('the weather in Oslo')).slice(0, 16)}).`;
    expect(miss.message).toBe(`${head} Record it (provider: record); the nearest recording and where it differs are in Standin's log.`);
    expect(warnings.at(-1)).toBe(
      `${head} Nearest recorded: ${nearest}, which differs at messages.0.content: recorded "the weather in Paris", requested "the weather in Oslo".`,
    );
    expect(await fixtureFolder(dir, opts()).find(ask('the weather in Oslo'))).toBeUndefined();
  });
});
