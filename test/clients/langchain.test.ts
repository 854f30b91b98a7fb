import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { dialects } from '../helpers.js';
import { startEnv, TEST_MODELS, type Env } from '../assistants/setup.js';

// A client's first call loads its modules and the routes' validators: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

/**
 * Issue 35: LangChain (@langchain/openai 1.6) with and without `useResponsesApi`; a gpt-5.x model name goes
 * through the Responses API even without it. Each flow runs on both, and which endpoint served it is checked.
 */
describe.each(dialects())('LangChain (%s)', (dialect) => {
  let env: Env;
  const paths: string[] = [];
  beforeAll(async () => {
    env = await startEnv(dialect, TEST_MODELS);
  });
  afterAll(() => env?.s.close());

  const weather = tool(async ({ city }) => `windy in ${city}`, {
    name: 'get_weather',
    description: 'The weather of a city',
    schema: z.object({ city: z.string() }),
  });

  const variants = [
    { name: 'chat completions (gpt-4.1)', model: 'gpt-4.1', useResponsesApi: false, path: '/v1/chat/completions' },
    { name: 'useResponsesApi (gpt-4.1)', model: 'gpt-4.1', useResponsesApi: true, path: '/v1/responses' },
    { name: 'a gpt-5.x model name (gpt-5.2-pro)', model: 'gpt-5.2-pro', useResponsesApi: undefined, path: '/v1/responses' },
  ];

  describe.each(variants)('$name', ({ model, useResponsesApi, path }) => {
    const chat = () =>
      new ChatOpenAI({
        model,
        apiKey: env.s.keys.platform,
        configuration: {
          baseURL: `${env.url}/v1`,
          fetch: (url: any, init: any) => {
            paths.push(new URL(String(url)).pathname);
            return fetch(url, init);
          },
        },
        ...(useResponsesApi === undefined ? {} : { useResponsesApi }),
        maxRetries: 0,
      });

    it('invoke', async () => {
      paths.length = 0;
      const r = await chat().invoke('hello from LangChain');
      expect(r.text).toBe('You said: hello from LangChain');
      expect(paths).toEqual([path]);
    });

    it('stream', async () => {
      paths.length = 0;
      let text = '';
      let chunks = 0;
      for await (const c of await chat().stream('stream this reply back to me in pieces please')) {
        text += c.text;
        chunks++;
      }
      expect(text).toBe('You said: stream this reply back to me in pieces please');
      expect(chunks).toBeGreaterThan(1);
      expect(paths).toEqual([path]);
    });

    // A reasoning model's reply carries a reasoning item, which LangChain passes back on the next turn.
    it('tools', async () => {
      const llm = chat().bindTools([weather]);
      const first = await llm.invoke('What is the weather in Paris?');
      expect(first.tool_calls).toMatchObject([{ name: 'get_weather', args: { city: 'Paris' } }]);
      const out = await weather.invoke(first.tool_calls![0]);
      const second = await llm.invoke([{ role: 'user', content: 'What is the weather in Paris?' }, first, out]);
      expect(second.text).toBe('The weather is windy in Paris.');
    });

    it('structured output', async () => {
      const llm = chat().withStructuredOutput(z.object({ name: z.string(), age: z.number() }));
      const r = await llm.invoke('Tell me about a person.');
      expect(r).toEqual({ name: expect.any(String), age: expect.any(Number) });
    });
  });
});
