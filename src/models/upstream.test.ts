import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../../test/assistants/chat-server.js';
import { ModelError } from './errors.js';
import { createModelRegistry } from './providers.js';
import type { ChatChunk } from './types.js';

let server: ChatServer;
beforeAll(async () => {
  server = await startChatServer();
});
afterAll(() => server.close());

const registry = () =>
  createModelRegistry({
    'up-*': { provider: 'upstream', base_url: server.url, api_key: 'sk-up', model: 'real-model', timeout: '1s' },
    plain: { provider: 'upstream', base_url: server.url, stream: false, max_tokens_param: 'max_completion_tokens' },
  });

describe('upstream provider', () => {
  it('streams text deltas and reports the upstream usage', async () => {
    const seen: ChatChunk[] = [];
    const r = await registry().complete(
      {
        model: 'up-1',
        messages: [
          { role: 'system', content: 'be nice' },
          { role: 'user', content: 'hello you' },
        ],
        temperature: 0.5,
      },
      (c) => seen.push(c),
    );
    expect(r.content).toBe('Upstream says: hello you');
    expect(seen.filter((c) => c.type === 'text').length).toBeGreaterThan(1);
    expect(r.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    const sent = server.requests.at(-1);
    expect(sent.headers.authorization).toBe('Bearer sk-up');
    expect(sent.body).toMatchObject({ model: 'real-model', stream: true, stream_options: { include_usage: true }, temperature: 0.5 });
    expect(sent.body.tools).toBeUndefined();
  });

  it('assembles tool-call deltas and passes them on with their index', async () => {
    const seen: ChatChunk[] = [];
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } }];
    const r = await registry().complete(
      { model: 'up-1', messages: [{ role: 'user', content: 'please call:lookup' }], tools, tool_choice: 'auto' },
      (c) => seen.push(c),
    );
    expect(r.finish_reason).toBe('tool_calls');
    expect(r.tool_calls).toEqual([
      { id: 'call_up_1', type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ q: 'please call:lookup' }) } },
    ]);
    expect(seen.filter((c) => c.type === 'tool_call').every((c) => c.type === 'tool_call' && c.index === 0)).toBe(true);
    expect(server.requests.at(-1).body.tools).toEqual(tools);
  });

  it('works without streaming, with the configured limit parameter', async () => {
    const r = await registry().complete({ model: 'plain', messages: [{ role: 'user', content: 'hi' }], max_tokens: 300 });
    expect(r.content).toBe('Upstream says: hi');
    expect(server.requests.at(-1).body).toMatchObject({ stream: false, max_completion_tokens: 300 });
  });

  it('maps upstream failures to run error codes', async () => {
    const reg = registry();
    await expect(reg.complete({ model: 'up-1', messages: [{ role: 'user', content: 'fail:429' }] })).rejects.toMatchObject({
      code: 'rate_limit_exceeded',
      status: 429,
    });
    await expect(reg.complete({ model: 'up-1', messages: [{ role: 'user', content: 'fail:400' }] })).rejects.toMatchObject({
      code: 'invalid_prompt',
    });
    await expect(reg.complete({ model: 'up-1', messages: [{ role: 'user', content: 'fail:503' }] })).rejects.toBeInstanceOf(ModelError);
    await expect(reg.complete({ model: 'up-1', messages: [{ role: 'user', content: 'slow' }] })).rejects.toMatchObject({
      code: 'server_error',
      message: expect.stringContaining('within 1000 ms'),
    });
    const dead = createModelRegistry({ x: { provider: 'upstream', base_url: 'http://127.0.0.1:9/v1' } });
    await expect(dead.complete({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      code: 'server_error',
    });
  });

  it('counts usage with the tokenizer when the upstream sends none, and stops on abort', async () => {
    const quiet = await startChatServer({ usage: false });
    try {
      const reg = createModelRegistry({ q: { provider: 'upstream', base_url: quiet.url } });
      const r = await reg.complete({ model: 'q', messages: [{ role: 'user', content: 'count me' }] });
      expect(r.usage.completion_tokens).toBeGreaterThan(0);
      expect(r.usage.total_tokens).toBe(r.usage.prompt_tokens + r.usage.completion_tokens);
      const ac = new AbortController();
      const p = reg.complete({ model: 'q', messages: [{ role: 'user', content: 'slow' }], signal: ac.signal });
      setTimeout(() => ac.abort(new Error('run cancelled')), 50);
      await expect(p).rejects.toThrow('run cancelled');
    } finally {
      await quiet.close();
    }
  });
});
