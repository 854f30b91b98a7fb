import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { dialects } from '../helpers.js';
import { startEnv, TEST_MODELS, type Env } from '../assistants/setup.js';

// A client's first call loads its modules and the routes' validators: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

/**
 * Issue 35: the Agents SDK (@openai/agents 0.20, its own openai 7.59 and zod 4 in test/clients) against
 * Standin's Responses API, on the built-in model: the flows of its quick start, unchanged.
 */
describe.each(dialects())('the Agents SDK (%s)', (dialect) => {
  let env: Env;
  let runner: Runner;
  // A runner of this Standin's own: the SDK's default provider keeps the first client it was given.
  const run: Runner['run'] = ((agent: Agent<any, any>, input: any, options?: any) => runner.run(agent, input, options)) as Runner['run'];
  const calls: string[] = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather of a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `sunny in ${city}`;
    },
  });
  beforeAll(async () => {
    env = await startEnv(dialect, TEST_MODELS);
    const openAIClient = new OpenAI({ apiKey: env.s.keys.platform, baseURL: `${env.url}/v1`, maxRetries: 0 });
    runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient, useResponses: true }) });
    setTracingDisabled(true);
  });
  afterAll(() => env?.s.close());

  it('runs an agent with a function tool', async () => {
    const agent = new Agent({ name: 'Weather', instructions: 'Answer about the weather.', model: 'gpt-4.1', tools: [getWeather] });
    const result = await run(agent, 'What is the weather in Paris?');
    expect(calls).toContain('Paris');
    expect(result.finalOutput).toBe('The weather is sunny in Paris.');
  });

  it('streams a run', async () => {
    const agent = new Agent({ name: 'Weather', instructions: 'Answer about the weather.', model: 'gpt-4.1', tools: [getWeather] });
    const result = await run(agent, 'What is the weather like?', { stream: true });
    let text = '';
    for await (const e of result.toTextStream()) text += e;
    await result.completed;
    expect(text).toBe('The weather is sunny in Paris.');
    expect(result.finalOutput).toBe(text);
  });

  it('hands off to another agent', async () => {
    const spanish = new Agent({ name: 'Spanish', instructions: 'Answer in Spanish.', model: 'gpt-4.1' });
    const triage = new Agent({ name: 'Triage', instructions: 'Route the user.', model: 'gpt-4.1', handoffs: [spanish] });
    const result = await run(triage, 'Please transfer_to_Spanish, I speak Spanish.');
    expect(result.lastAgent?.name).toBe('Spanish');
    expect(result.finalOutput).toMatch(/transfer_to_Spanish returned/);
  });

  it('gives a typed final output (outputType)', async () => {
    const agent = new Agent({
      name: 'Extractor',
      instructions: 'Extract the event.',
      model: 'gpt-4.1',
      outputType: z.object({ name: z.string(), attendees: z.array(z.string()), day: z.number() }),
    });
    const result = await run(agent, 'Alice and Bob meet on day 3.');
    expect(result.finalOutput).toEqual({ name: expect.any(String), attendees: expect.any(Array), day: expect.any(Number) });
  });

  it('waits for a human to approve a tool call, then goes on', async () => {
    let ran = 0;
    const refund = tool({
      name: 'refund',
      description: 'Refund an order',
      parameters: z.object({ order: z.string() }),
      needsApproval: true,
      execute: async ({ order }) => {
        ran++;
        return `refunded ${order}`;
      },
    });
    const agent = new Agent({ name: 'Support', instructions: 'Help.', model: 'gpt-4.1', tools: [refund] });
    let result = await run(agent, 'Please refund my order.');
    expect(result.interruptions).toHaveLength(1);
    expect(ran).toBe(0);
    for (const i of result.interruptions) result.state.approve(i);
    result = await run(agent, result.state);
    expect(ran).toBe(1);
    expect(result.finalOutput).toMatch(/refund returned: refunded/);
  });

  it('runs statelessly with store: false (each turn sends the whole conversation)', async () => {
    const agent = new Agent({
      name: 'Weather',
      instructions: 'Answer about the weather.',
      model: 'gpt-4.1',
      tools: [getWeather],
      modelSettings: { store: false },
    });
    const result = await run(agent, 'What is the weather in Paris?');
    expect(result.finalOutput).toBe('The weather is sunny in Paris.');
    const ids = result.rawResponses.map((r) => r.responseId!);
    for (const id of ids) await expect(env.client.responses.retrieve(id)).rejects.toMatchObject({ status: 404 });
  });

  it('runs statelessly on a reasoning model: the reasoning comes back encrypted and is read on the next turn', async () => {
    const agent = new Agent({
      name: 'Weather',
      instructions: 'Answer about the weather.',
      model: 'gpt-5.1',
      tools: [getWeather],
      modelSettings: { store: false, reasoning: { effort: 'low' }, providerData: { include: ['reasoning.encrypted_content'] } },
    });
    const result = await run(agent, 'What is the weather in Paris?');
    expect(result.finalOutput).toBe('The weather is sunny in Paris.');
    const reasoning = result.rawResponses[0].output.find((o) => o.type === 'reasoning') as {
      providerData?: { encrypted_content?: string };
    };
    expect(reasoning?.providerData?.encrypted_content ?? (reasoning as any)?.encrypted_content).toMatch(/^stenc1\./);
  });

  it('runs on a reasoning model name (gpt-5.x) with its reasoning settings', async () => {
    const agent = new Agent({
      name: 'Thinker',
      instructions: 'Think.',
      model: 'gpt-5.1',
      modelSettings: { reasoning: { effort: 'low', summary: 'auto' } },
    });
    const result = await run(agent, 'hello thinker');
    expect(result.finalOutput).toBe('You said: hello thinker');
    const usage = result.rawResponses[0].usage;
    expect(usage.outputTokensDetails).toEqual([expect.objectContaining({ reasoning_tokens: expect.any(Number) })]);
  });
});
