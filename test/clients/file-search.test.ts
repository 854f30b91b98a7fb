import { createOpenAI } from '@ai-sdk/openai';
import { Agent, fileSearchTool, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { generateText, streamText } from 'ai';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dialects } from '../helpers.js';
import { startEnv, TEST_MODELS, until, type Env } from '../assistants/setup.js';

// A client's first call loads its modules and the routes' validators: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

const FACT = 'The launch code of the Zephyr probe is 7731-ALPHA.';
const QUESTION = 'What is the launch code of the Zephyr probe?';
const ANSWER = `${FACT}【0:0†source】`;

/**
 * Issue 36: file_search on /v1/responses as the Agents SDK (`fileSearchTool`) and the AI SDK 7
 * (`openai.tools.fileSearch`) use it, unchanged, over a vector store made through the openai SDK.
 */
describe.each(dialects())('file_search through the agent SDKs (%s)', (dialect) => {
  let env: Env;
  let runner: Runner;
  let storeId: string;
  let fileId: string;
  let openai: ReturnType<typeof createOpenAI>;

  beforeAll(async () => {
    env = await startEnv(dialect, TEST_MODELS);
    const client = new OpenAI({ apiKey: env.s.keys.platform, baseURL: `${env.url}/v1`, maxRetries: 0 });
    const file = await client.files.create({
      file: await toFile(Buffer.from(`# Zephyr\n\nProbe notes.\n\n${FACT}\n`), 'zephyr.md'),
      purpose: 'assistants',
    });
    fileId = file.id;
    storeId = (await client.vectorStores.create({ name: 'probes', file_ids: [file.id] })).id;
    await until(
      () => client.vectorStores.retrieve(storeId),
      (vs) => vs.status === 'completed',
    );
    runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }) });
    setTracingDisabled(true);
    openai = createOpenAI({ apiKey: env.s.keys.platform, baseURL: `${env.url}/v1` });
  });
  afterAll(() => env?.s.close());

  it('the Agents SDK runs an agent with fileSearchTool, with its results', async () => {
    const agent = new Agent({
      name: 'Librarian',
      instructions: 'Answer from the files.',
      model: 'gpt-4.1',
      tools: [fileSearchTool(storeId, { maxNumResults: 3, includeSearchResults: true })],
    });
    const result = await runner.run(agent, QUESTION);
    expect(result.finalOutput).toBe(ANSWER);
    const call = result.newItems.find((i) => i.type === 'tool_call_item')!.rawItem as any;
    expect(call).toMatchObject({ type: 'hosted_tool_call', name: 'file_search_call', status: 'completed' });
    expect(call.providerData.results[0]).toMatchObject({ file_id: fileId, filename: 'zephyr.md' });
    // The next turn passes this turn's items back as input.
    const next = await runner.run(agent, [...result.history, { role: 'user', content: 'thanks' }]);
    expect(next.finalOutput).toBeTruthy();
  });

  it('the Agents SDK streams a run with fileSearchTool', async () => {
    const agent = new Agent({
      name: 'Librarian',
      instructions: 'Answer from the files.',
      model: 'gpt-4.1',
      tools: [fileSearchTool([storeId])],
    });
    const result = await runner.run(agent, QUESTION, { stream: true });
    let text = '';
    for await (const t of result.toTextStream()) text += t;
    await result.completed;
    expect(text).toBe(ANSWER);
  });

  it('the AI SDK generates text with openai.tools.fileSearch, its results included', async () => {
    const r = await generateText({
      model: openai('gpt-4.1'),
      prompt: QUESTION,
      tools: { file_search: openai.tools.fileSearch({ vectorStoreIds: [storeId], maxNumResults: 3 }) },
      providerOptions: { openai: { include: ['file_search_call.results'] } },
    });
    expect(r.text).toBe(ANSWER);
    const result = r.toolResults.find((t) => t.toolName === 'file_search')!;
    expect((result.output as any).queries).toEqual([QUESTION]);
    expect((result.output as any).results[0]).toMatchObject({ fileId, filename: 'zephyr.md' });
    expect(r.sources.some((s: any) => s.sourceType === 'document' && s.providerMetadata?.openai?.fileId === fileId)).toBe(true);
  });

  it('the AI SDK streams text with openai.tools.fileSearch', async () => {
    const r = streamText({
      model: openai('gpt-4.1'),
      prompt: QUESTION,
      tools: { file_search: openai.tools.fileSearch({ vectorStoreIds: [storeId] }) },
    });
    let text = '';
    for await (const t of r.textStream) text += t;
    expect(text).toBe(ANSWER);
    expect((await r.toolResults).map((t) => t.toolName)).toEqual(['file_search']);
  });
});
