import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers.js';
import { startChatServer, type ChatServer } from './chat-server.js';
import { startEnv, weatherTool, type Env } from './setup.js';
import { readerOf, watchSnapshots } from './snapshots.js';

/** Runs served by an upstream that speaks Chat Completions (the test server streams text and tool-call deltas). */
describe.each(dialects())('runs on an upstream model (%s)', (dialect) => {
  let env: Env;
  let chat: ChatServer;
  let assistantId: string;
  beforeAll(async () => {
    chat = await startChatServer();
    env = await startEnv(dialect, {
      // A generous timeout where the answer is due (a loaded CI machine can take over a second to give it);
      // 'tight-*' times out before the test server's 3 s 'slow' answer.
      'up-*': { provider: 'upstream', base_url: chat.url, api_key: 'sk-upstream', model: 'served-model', timeout: '30s' },
      'whole-*': { provider: 'upstream', base_url: chat.url, api_key: 'sk-upstream', stream: false, timeout: '30s' },
      'tight-*': { provider: 'upstream', base_url: chat.url, api_key: 'sk-upstream', model: 'served-model', timeout: '1500ms' },
    });
    assistantId = (await env.client.beta.assistants.create({ model: 'up-1', instructions: 'You are upstream.', tools: [weatherTool] })).id;
  });
  afterAll(async () => {
    await env?.s.close();
    await chat?.close();
  });

  it('streams the upstream text into the message, with the upstream usage', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'hello upstream world' }] });
    const stream = client.beta.threads.runs.stream(t.id, { assistant_id: assistantId, temperature: 0.4 });
    const snapshots = watchSnapshots(stream);
    let deltas = 0;
    for await (const e of stream) if (e.event === 'thread.message.delta') deltas++;
    const run = await stream.finalRun();
    expect(run.status).toBe('completed');
    expect(await snapshots.verify(readerOf(client))).toMatchObject({ textDone: 1 });
    expect(deltas).toBeGreaterThan(1);
    expect(run.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    const [m] = (await client.beta.threads.messages.list(t.id, { run_id: run.id })).data;
    expect((m.content[0] as any).text.value).toBe('Upstream says: hello upstream world');
    const sent = chat.requests.at(-1);
    expect(sent.headers.authorization).toBe('Bearer sk-upstream');
    expect(sent.body).toMatchObject({
      model: 'served-model',
      stream: true,
      temperature: 0.4,
      tool_choice: 'auto',
      parallel_tool_calls: true,
    });
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'You are upstream.' },
      { role: 'user', content: 'hello upstream world' },
    ]);
    expect(sent.body.tools).toEqual([weatherTool]);
  });

  it('tool-call deltas become requires_action; the outputs go back upstream as tool messages', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'please call:get_weather' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    expect(run.status).toBe('requires_action');
    const [call] = run.required_action!.submit_tool_outputs.tool_calls;
    expect(call).toEqual({
      id: 'call_up_1',
      type: 'function',
      function: { name: 'get_weather', arguments: JSON.stringify({ q: 'please call:get_weather' }) },
    });
    const done = await client.beta.threads.runs.submitToolOutputsAndPoll(run.id, {
      thread_id: t.id,
      tool_outputs: [{ tool_call_id: call.id, output: '18C' }],
    });
    expect(done.status).toBe('completed');
    expect(done.usage).toEqual({ prompt_tokens: 22, completion_tokens: 14, total_tokens: 36 });
    const sent = chat.requests.at(-1).body.messages;
    expect(sent.slice(-3)).toEqual([
      { role: 'user', content: 'please call:get_weather' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_up_1',
            type: 'function',
            function: { name: 'get_weather', arguments: JSON.stringify({ q: 'please call:get_weather' }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_up_1', content: '18C' },
    ]);
    const [m] = (await client.beta.threads.messages.list(t.id, { run_id: run.id })).data;
    expect((m.content[0] as any).text.value).toBe('Tool said: 18C');
  });

  it('truncation_strategy last_messages shapes what is sent; max_completion_tokens becomes max_tokens', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({
      messages: ['one', 'two', 'three', 'four'].map((content) => ({ role: 'user' as const, content })),
    });
    const run = await client.beta.threads.runs.createAndPoll(t.id, {
      assistant_id: assistantId,
      truncation_strategy: { type: 'last_messages', last_messages: 2 },
      max_completion_tokens: 300,
      tool_choice: 'none',
    });
    expect(run.status).toBe('completed');
    const body = chat.requests.at(-1).body;
    expect(body.messages.map((m: any) => m.content)).toEqual(['You are upstream.', 'three', 'four']);
    expect(body.max_tokens).toBe(300);
    expect(body.tool_choice).toBe('none');
  });

  it('auto truncation drops middle messages to fit max_prompt_tokens, keeping the first and the latest', async () => {
    const { client } = env;
    const filler = ' lorem ipsum dolor sit amet'.repeat(30);
    const contents = Array.from({ length: 8 }, (_, i) => `m${i}${filler}`);
    const t = await client.beta.threads.create({ messages: contents.map((content) => ({ role: 'user' as const, content })) });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId, max_prompt_tokens: 900, tools: [] });
    expect(run.last_error).toBeNull();
    expect(run.status).toBe('completed');
    const sent: string[] = chat.requests.at(-1).body.messages.map((m: any) => m.content);
    expect(sent[0]).toBe('You are upstream.');
    expect(sent[1]).toBe(contents[0]);
    expect(sent.at(-1)).toBe(contents[7]);
    expect(sent.length).toBeLessThan(contents.length + 1);
    expect(sent.slice(1)).toEqual(contents.filter((c) => sent.includes(c)));
  });

  it('upstream failures fail the run with the matching last_error code; the message and step fail too', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'fail:429' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    expect(run.status).toBe('failed');
    expect(run.last_error).toMatchObject({ code: 'rate_limit_exceeded' });
    expect(run.failed_at).not.toBeNull();
    const t2 = await client.beta.threads.create({ messages: [{ role: 'user', content: 'slow' }] });
    const timedOut = await client.beta.threads.runs.createAndPoll(t2.id, { assistant_id: assistantId, model: 'tight-1' });
    expect(timedOut).toMatchObject({ status: 'failed', last_error: { code: 'server_error' } });
    const t3 = await client.beta.threads.create({ messages: [{ role: 'user', content: 'fail:400' }] });
    expect((await client.beta.threads.runs.createAndPoll(t3.id, { assistant_id: assistantId })).last_error).toMatchObject({
      code: 'invalid_prompt',
    });
  });

  /** A streamed call of get_weather, its outputs submitted by a second stream: each stream's snapshots equal the stored objects. */
  async function streamCallThenAnswer(assistant: string, content: string) {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content }] });
    const first = client.beta.threads.runs.stream(t.id, { assistant_id: assistant });
    const firstSnapshots = watchSnapshots(first);
    const run = await first.finalRun();
    expect(run.status).toBe('requires_action');
    expect(await firstSnapshots.verify(readerOf(client))).toMatchObject({ steps: 1, toolCallDone: 1 });
    const [call] = run.required_action!.submit_tool_outputs.tool_calls;
    const second = client.beta.threads.runs.submitToolOutputsStream(run.id, {
      thread_id: t.id,
      tool_outputs: [{ tool_call_id: call.id, output: '18C' }],
    });
    const secondSnapshots = watchSnapshots(second);
    expect((await second.finalRun()).status).toBe('completed');
    expect(await secondSnapshots.verify(readerOf(client))).toMatchObject({ messages: 1, textDone: 1 });
  }

  it('streamed: the upstream tool-call deltas build the step the API returns, and the answer after the outputs', () =>
    streamCallThenAnswer(assistantId, 'stream please call:get_weather'));

  it('streamed from an upstream without streaming: the calls and the text still add up to the stored objects', async () => {
    const whole = await env.client.beta.assistants.create({ model: 'whole-1', tools: [weatherTool] });
    await streamCallThenAnswer(whole.id, 'whole please call:get_weather');
  });
});
