import { describe, expect, it } from 'vitest';
import { createBuiltinProvider, chunks } from './builtin.js';
import { compileModelsConfig } from './config.js';
import type { ChatChunk, ChatRequest } from './types.js';

function provider(entry: Record<string, unknown> = {}) {
  const [route] = compileModelsConfig({ m: { provider: 'builtin', ...entry } as any });
  return createBuiltinProvider(route.builtin!);
}

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
      required: ['city', 'days'],
    },
  },
};

describe('builtin provider', () => {
  it('echoes the last user message by default and streams it in chunks', async () => {
    const seen: ChatChunk[] = [];
    const r = await provider({ chunk_chars: 8 }).complete(
      { model: 'm', messages: [{ role: 'user', content: 'hello there, general' }] },
      (c) => seen.push(c),
    );
    expect(r.content).toBe('You said: hello there, general');
    expect(r.finish_reason).toBe('stop');
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.map((c) => (c.type === 'text' ? c.delta : '')).join('')).toBe(r.content);
    expect(r.usage.total_tokens).toBe(r.usage.prompt_tokens + r.usage.completion_tokens);
    expect(r.usage.completion_tokens).toBeGreaterThan(0);
  });

  it("calls a custom tool's function with free text as `input`: a rule's arguments, else the message", async () => {
    const sql = {
      type: 'function' as const,
      function: { name: 'sql', parameters: { type: 'object', properties: { input: { type: 'string' } } } },
    };
    const p = provider({ chunk_chars: 2, rules: [{ match: 'report', tool_calls: [{ name: 'sql', arguments: 'SELECT "x"\n' }] }] });
    const seen: ChatChunk[] = [];
    const ruled = await p.complete(
      { model: 'm', messages: [{ role: 'user', content: 'the report' }], tools: [sql], custom: ['sql'] },
      (c) => seen.push(c),
    );
    expect(ruled.tool_calls[0].function.arguments).toBe(JSON.stringify({ input: 'SELECT "x"\n' }));
    // The input streams in pieces, as code does.
    expect(seen.filter((c) => c.type === 'tool_call' && c.arguments).length).toBeGreaterThan(3);
    const base: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'SELECT 1' }], tools: [weather, sql], custom: ['sql'] };
    const forced = await p.complete({ ...base, tool_choice: { type: 'function', function: { name: 'sql' } } });
    expect(forced.tool_calls[0].function).toEqual({ name: 'sql', arguments: '{"input":"SELECT 1"}' });
    const named = await p.complete({ ...base, messages: [{ role: 'user', content: 'use sql here' }] });
    expect(named.tool_calls[0].function).toEqual({ name: 'sql', arguments: '{"input":"use sql here"}' });
    // Without the note, the same function is an ordinary one: its arguments come from its schema.
    const plain = await p.complete({ ...base, custom: undefined, tool_choice: { type: 'function', function: { name: 'sql' } } });
    expect(plain.tool_calls[0].function.arguments).toBe('{}');
  });

  it('answers by rule: substring and regex, with {{input}}', async () => {
    const p = provider({
      rules: [
        { match: 'PING', reply: 'pong ({{input}})' },
        { regex: '/^bye\\b/i', reply: 'see you' },
      ],
    });
    expect((await p.complete({ model: 'm', messages: [{ role: 'user', content: 'a ping!' }] })).content).toBe('pong (a ping!)');
    expect((await p.complete({ model: 'm', messages: [{ role: 'user', content: 'Bye now' }] })).content).toBe('see you');
    expect((await p.complete({ model: 'm', messages: [{ role: 'user', content: 'goodbye' }] })).content).toBe('You said: goodbye');
  });

  it('calls the tools a rule names, only when offered, then replies after the outputs', async () => {
    const p = provider({
      rules: [
        {
          match: 'weather',
          tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
          after_tool_outputs: 'Weather: {{output}}',
        },
      ],
    });
    const noTools = await p.complete({ model: 'm', messages: [{ role: 'user', content: 'weather?' }] });
    expect(noTools.tool_calls).toEqual([]);
    expect(noTools.content).toBe('You said: weather?');
    const withTools = await p.complete({ model: 'm', messages: [{ role: 'user', content: 'weather?' }], tools: [weather] });
    expect(withTools.finish_reason).toBe('tool_calls');
    expect(withTools.content).toBeNull();
    expect(withTools.tool_calls[0].function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    const call = withTools.tool_calls[0];
    const after = await p.complete({
      model: 'm',
      tools: [weather],
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: 'sunny' },
      ],
    });
    expect(after.content).toBe('Weather: sunny');
    expect(after.tool_calls).toEqual([]);
  });

  it('builds arguments from the schema when a tool is forced', async () => {
    const p = provider();
    const required = await p.complete({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [weather],
      tool_choice: 'required',
    });
    expect(JSON.parse(required.tool_calls[0].function.arguments)).toEqual({ city: 'example', days: 1 });
    const named = await p.complete({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [weather, { type: 'function', function: { name: 'other' } }],
      tool_choice: { type: 'function', function: { name: 'other' } },
    });
    expect(named.tool_calls.map((c) => c.function.name)).toEqual(['other']);
    expect(named.tool_calls[0].function.arguments).toBe('{}');
    const none = await p.complete({
      model: 'm',
      messages: [{ role: 'user', content: 'use get_weather' }],
      tools: [weather],
      tool_choice: 'none',
    });
    expect(none.tool_calls).toEqual([]);
    const mentioned = await p.complete({ model: 'm', messages: [{ role: 'user', content: 'use get_weather please' }], tools: [weather] });
    expect(mentioned.tool_calls[0].function.name).toBe('get_weather');
  });

  it('honours parallel_tool_calls=false', async () => {
    const p = provider({ rules: [{ match: 'two', tool_calls: [{ name: 'a' }, { name: 'b' }] }] });
    const tools = [
      { type: 'function' as const, function: { name: 'a' } },
      { type: 'function' as const, function: { name: 'b' } },
    ];
    expect((await p.complete({ model: 'm', messages: [{ role: 'user', content: 'two' }], tools })).tool_calls).toHaveLength(2);
    expect(
      (await p.complete({ model: 'm', messages: [{ role: 'user', content: 'two' }], tools, parallel_tool_calls: false })).tool_calls,
    ).toHaveLength(1);
  });

  it('cuts the reply at max_tokens with finish_reason length', async () => {
    const long = 'word '.repeat(600);
    const r = await provider({ rules: [{ match: 'long', reply: long }] }).complete({
      model: 'm',
      messages: [{ role: 'user', content: 'long' }],
      max_tokens: 256,
    });
    expect(r.finish_reason).toBe('length');
    expect(r.usage.completion_tokens).toBeLessThanOrEqual(256);
    expect(r.content!.length).toBeLessThan(long.length);
  });

  it('replies JSON for json_object and a schema-shaped object for json_schema', async () => {
    const p = provider();
    const obj = await p.complete({ model: 'm', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } });
    expect(JSON.parse(obj.content!)).toEqual({ reply: 'hi' });
    const schema = { type: 'object', properties: { n: { type: 'number' }, tag: { enum: ['a', 'b'] } }, required: ['n', 'tag'] };
    const js = await p.complete({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
    });
    expect(JSON.parse(js.content!)).toEqual({ n: 0, tag: 'a' });
  });

  it('reports content_filter and stops on abort', async () => {
    const p = provider({
      rules: [
        { match: 'bad', finish_reason: 'content_filter', reply: '' },
        { match: 'slow', reply: 'a b c d', delay: '50ms' },
      ],
      chunk_chars: 1,
    });
    expect((await p.complete({ model: 'm', messages: [{ role: 'user', content: 'bad' }] })).finish_reason).toBe('content_filter');
    const ac = new AbortController();
    const pending = p.complete({ model: 'm', messages: [{ role: 'user', content: 'slow' }], signal: ac.signal } as ChatRequest, () => {});
    ac.abort(new Error('cancelled'));
    await expect(pending).rejects.toThrow('cancelled');
  });
});

describe('builtin provider with file_search', () => {
  const search = { type: 'function' as const, function: { name: 'file_search', parameters: { type: 'object' } } };
  const base = { model: 'm', tools: [weather, search], retrieval: { name: 'file_search' } };

  it('searches when the message asks something, with the message as the query', async () => {
    const asked = await provider().complete({ ...base, messages: [{ role: 'user', content: 'Where is the key?' }] });
    expect(asked.tool_calls.map((c) => [c.function.name, c.function.arguments])).toEqual([
      ['file_search', '{"query":"Where is the key?"}'],
    ]);
    const told = await provider().complete({ ...base, messages: [{ role: 'user', content: 'nice day' }] });
    expect(told).toMatchObject({ content: 'You said: nice day', tool_calls: [] });
    const none = await provider().complete({ ...base, tool_choice: 'none', messages: [{ role: 'user', content: 'Where is the key?' }] });
    expect(none.tool_calls).toEqual([]);
    // A function the message names comes first.
    const named = await provider().complete({ ...base, messages: [{ role: 'user', content: 'what does get_weather say?' }] });
    expect(named.tool_calls[0].function.name).toBe('get_weather');
    // Without `retrieval`, a function named file_search is an ordinary function.
    const plain = await provider().complete({ model: 'm', tools: [search], messages: [{ role: 'user', content: 'Where is the key?' }] });
    expect(plain.tool_calls).toEqual([]);
  });

  it('answers from the top result: its sentence closest to the question, with the marker', async () => {
    const output =
      '【0:0†source】 a.md (score 0.900)\n# Keys\nThe garden gate is green. The key is under the blue stone.\n\n【0:1†source】 b.md (score 0.400)\nOther.';
    const r = await provider().complete({
      ...base,
      messages: [
        { role: 'user', content: 'Where is the key?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'file_search', arguments: '{"query":"key"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: output },
      ],
    });
    expect(r.content).toBe('The key is under the blue stone.【0:0†source】');
    const empty = await provider().complete({
      ...base,
      messages: [
        { role: 'user', content: 'Where is the key?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'file_search', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'No results found in the files.' },
      ],
    });
    expect(empty.content).toBe('I found nothing about that in the files.');
  });
});

describe('chunks', () => {
  it('splits at spaces and keeps every character', () => {
    const text = 'the quick brown fox jumps over the lazy dog';
    const parts = chunks(text, 10);
    expect(parts.join('')).toBe(text);
    expect(parts.every((p) => p.length <= 10)).toBe(true);
    expect(chunks('abc', 0)).toEqual(['abc']);
    expect(chunks('', 5)).toEqual([]);
  });
});
