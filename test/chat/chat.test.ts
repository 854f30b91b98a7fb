import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { startChatServer, type ChatServer } from '../assistants/chat-server.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

const MODELS = {
  'up-*': { provider: 'upstream', base_url: '', api_key: 'sk-upstream', model: 'served-model', timeout: '5s' },
  '*': {
    provider: 'builtin',
    chunk_chars: 4,
    rules: [
      {
        match: 'weather',
        tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
        after_tool_outputs: 'The weather is {{output}}.',
      },
    ],
  },
};

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** `POST /v1/chat/completions` through the openai SDK on a listening Standin. */
describe.each(dialects())('chat completions (%s)', (dialect) => {
  let s: TestStandin;
  let chat: ChatServer;
  let client: OpenAI;
  beforeAll(async () => {
    chat = await startChatServer();
    s = await startTestStandin({ dialect });
    await applyConfig(s.ctx, s.modules, { models: { ...MODELS, 'up-*': { ...MODELS['up-*'], base_url: chat.url } } });
    const url = await s.listen();
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await s?.close();
    await chat?.close();
  });

  it('answers a plain request with a chat.completion and token usage', async () => {
    const { data: c, response } = await client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hello ' },
              { type: 'text', text: 'there' },
            ],
          },
        ],
        temperature: 0.2,
        seed: 7,
        user: 'u-1',
        metadata: { team: 'a' },
      })
      .withResponse();
    expect(c.object).toBe('chat.completion');
    expect(c.id).toMatch(/^chatcmpl-/);
    expect(c.model).toBe('gpt-4o-mini');
    expect(c.choices).toHaveLength(1);
    expect(c.choices[0]).toMatchObject({
      index: 0,
      finish_reason: 'stop',
      message: { role: 'assistant', content: 'You said: hello there' },
    });
    expect(c.usage!.prompt_tokens).toBeGreaterThan(5);
    expect(c.usage!.completion_tokens).toBeGreaterThan(0);
    expect(c.usage!.total_tokens).toBe(c.usage!.prompt_tokens + c.usage!.completion_tokens);
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('cuts at max_completion_tokens (finish_reason length) and at a stop sequence', async () => {
    const long = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten' }],
      max_completion_tokens: 3,
    });
    expect(long.choices[0].finish_reason).toBe('length');
    expect(long.usage!.completion_tokens).toBe(3);
    const stopped = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'alpha beta gamma' }],
      stop: [' beta'],
    });
    expect(stopped.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'You said: alpha' } });
  });

  it('tools: a tool call, then its output back in a tool message', async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather?' }];
    const first = await client.chat.completions.create({ model: 'gpt-4.1', messages, tools: [weatherTool], tool_choice: 'auto' });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const [call] = first.choices[0].message.tool_calls!;
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'sunny' });
    const second = await client.chat.completions.create({ model: 'gpt-4.1', messages, tools: [weatherTool] });
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'The weather is sunny.' } });
  });

  it('runTools runs the function and finishes with the answer', async () => {
    const runner = client.chat.completions.runTools({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'weather please' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            function: (args: { city: string }) => `rainy in ${args.city}`,
            parse: JSON.parse,
          },
        },
      ],
    });
    expect(await runner.finalContent()).toBe('The weather is rainy in Paris.');
  });

  it('json_schema: the reply is an object of the schema', async () => {
    const c = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'give me a person' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'person',
          strict: true,
          schema: {
            type: 'object',
            properties: { name: { type: 'string' }, age: { type: 'integer' } },
            required: ['name', 'age'],
            additionalProperties: false,
          },
        },
      },
    });
    const parsed = JSON.parse(c.choices[0].message.content!);
    expect(typeof parsed.name).toBe('string');
    expect(Number.isInteger(parsed.age)).toBe(true);
    const obj = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'json please' }],
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse(obj.choices[0].message.content!)).toEqual({ reply: 'json please' });
  });

  it('streams chunks the SDK helper assembles, with the usage chunk last', async () => {
    const stream = client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream this text please' }],
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].message.content).toBe('You said: stream this text please');
    expect(final.choices[0].finish_reason).toBe('stop');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBeGreaterThan(2);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    expect(final.usage).toEqual(last.usage);
  });

  it('streams tool call deltas with their index', async () => {
    const stream = client.chat.completions.stream({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'weather in Paris' }],
      tools: [weatherTool],
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.tool_calls![0]).toMatchObject({ function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
  });

  it('a stop sequence split across streamed deltas still cuts', async () => {
    const stream = client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'abcdefghijklmnop' }],
      stop: 'ijkl',
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].message.content).toBe('You said: abcdefgh');
    expect(final.choices[0].finish_reason).toBe('stop');
  });

  it('an upstream model: its text, tool calls and usage come through, streamed or not', async () => {
    const c = await client.chat.completions.create({ model: 'up-1', messages: [{ role: 'user', content: 'hi upstream' }], max_tokens: 50 });
    expect(c.choices[0].message.content).toBe('Upstream says: hi upstream');
    expect(c.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    const sent = chat.requests.at(-1);
    expect(sent.headers.authorization).toBe('Bearer sk-upstream');
    expect(sent.body).toMatchObject({ model: 'served-model', max_tokens: 50, messages: [{ role: 'user', content: 'hi upstream' }] });
    const stream = client.chat.completions.stream({
      model: 'up-1',
      messages: [{ role: 'user', content: 'call:get_weather' }],
      tools: [weatherTool],
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].message.tool_calls![0]).toMatchObject({ id: 'call_up_1', function: { name: 'get_weather' } });
    expect(final.usage).toMatchObject({ total_tokens: 18 });
  });

  it('an upstream failure is the HTTP error, before any stream starts', async () => {
    const err = await client.chat.completions.create({ model: 'up-1', messages: [{ role: 'user', content: 'fail:429' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const err2 = await client.chat.completions
      .create({ model: 'up-1', messages: [{ role: 'user', content: 'fail:500' }], stream: true })
      .catch((e) => e);
    expect(err2).toBeInstanceOf(OpenAI.APIError);
    expect(err2.status).toBe(502);
  });

  it('refuses bad input with 400 naming the member', async () => {
    const bad = async (body: object) => {
      const res = await s.req('POST', '/v1/chat/completions', { key: 'platform', body: { model: 'gpt-4o', ...body } });
      expect(res.status).toBe(400);
      return res.body.error;
    };
    const user = [{ role: 'user', content: 'hi' }];
    expect((await bad({ messages: user, n: 2 })).param).toBe('n');
    expect((await bad({ messages: user, store: true })).param).toBe('store');
    expect((await bad({ messages: user, bogus: 1 })).message).toMatch(/bogus/);
    expect((await bad({ messages: user, stream_options: { include_usage: true } })).param).toBe('stream_options');
    expect((await bad({ messages: user, tool_choice: { type: 'function', function: { name: 'x' } }, tools: [weatherTool] })).param).toBe(
      'tool_choice',
    );
    expect((await bad({ messages: [{ role: 'tool', content: 'x' }] })).param).toBe('messages[0].tool_call_id');
    expect(
      (await bad({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] })).param,
    ).toBe('messages[0].content[0].type');
    expect((await bad({ messages: [] })).param).toBe('messages');
    expect((await bad({ messages: user, temperature: 3 })).param).toBe('temperature');
    expect((await bad({ messages: user, logprobs: true })).param).toBe('logprobs');
  });

  it('needs a key', async () => {
    const res = await s.req('POST', '/v1/chat/completions', { body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(401);
  });
});
