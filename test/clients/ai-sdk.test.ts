import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { dialects } from '../helpers.js';
import { startEnv, TEST_MODELS, type Env } from '../assistants/setup.js';

// A client's first call loads its modules and the routes' validators: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

/** Issue 35: the AI SDK 7 with its default OpenAI provider (@ai-sdk/openai 4: the Responses API) on the built-in model. */
describe.each(dialects())('the AI SDK (%s)', (dialect) => {
  let env: Env;
  let openai: ReturnType<typeof createOpenAI>;
  beforeAll(async () => {
    env = await startEnv(dialect, TEST_MODELS);
    openai = createOpenAI({ apiKey: env.s.keys.platform, baseURL: `${env.url}/v1` });
  });
  afterAll(() => env?.s.close());

  const weather = tool({
    description: 'The weather of a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `rainy in ${city}`,
  });

  it('generateText', async () => {
    const r = await generateText({ model: openai('gpt-4.1'), prompt: 'hello from the AI SDK' });
    expect(r.text).toBe('You said: hello from the AI SDK');
    expect(r.usage.inputTokens).toBeGreaterThan(0);
    expect(r.finishReason).toBe('stop');
  });

  it('streamText', async () => {
    const r = streamText({ model: openai('gpt-4.1'), prompt: 'stream this reply back to me in pieces please' });
    const pieces: string[] = [];
    for await (const t of r.textStream) pieces.push(t);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe('You said: stream this reply back to me in pieces please');
    expect((await r.usage).outputTokens).toBeGreaterThan(0);
  });

  it('runs a multi-step tool loop', async () => {
    const r = await generateText({
      model: openai('gpt-4.1'),
      prompt: 'What is the weather in Paris?',
      tools: { get_weather: weather },
      stopWhen: stepCountIs(3),
    });
    expect(r.steps).toHaveLength(2);
    expect(r.steps[0].toolCalls[0]).toMatchObject({ toolName: 'get_weather', input: { city: 'Paris' } });
    expect(r.text).toBe('The weather is rainy in Paris.');
  });

  it('streams a multi-step tool loop', async () => {
    const r = streamText({
      model: openai('gpt-4.1-mini'),
      prompt: 'What is the weather in Paris?',
      tools: { get_weather: weather },
      stopWhen: stepCountIs(3),
    });
    let text = '';
    for await (const t of r.textStream) text += t;
    expect(text).toBe('The weather is rainy in Paris.');
    expect((await r.steps).length).toBe(2);
  });

  it('generateObject', async () => {
    const r = await generateObject({
      model: openai('gpt-4.1'),
      schema: z.object({ title: z.string(), tags: z.array(z.string()), year: z.number().int() }),
      prompt: 'Describe a film.',
    });
    expect(r.object).toEqual({ title: expect.any(String), tags: expect.any(Array), year: expect.any(Number) });
  });
});
