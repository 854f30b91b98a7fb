import { spawnSync } from 'node:child_process';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, codeInterpreterTool, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { generateText, streamText } from 'ai';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bwrapAvailable } from '../../src/code-interpreter/bwrap.js';
import { applyConfig } from '../../src/admin/config-file.js';
import { dialects } from '../helpers.js';
import { startEnv, TEST_MODELS, type Env } from '../assistants/setup.js';

// A client's first call loads its modules and the routes' validators: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

/**
 * bwrap with Debian's python3-pandas and python3-matplotlib runs the pandas and chart cases; without them
 * (no bubblewrap, or no pandas in /usr/bin/python3) those cases are skipped, and the rest run on Pyodide.
 */
const science = bwrapAvailable() && spawnSync('/usr/bin/python3', ['-c', 'import pandas, matplotlib'], { timeout: 30_000 }).status === 0;
const fence = (code: string) => `Please run:\n\n\`\`\`python\n${code}\n\`\`\``;
const PANDAS = ['import pandas as pd', 'df = pd.read_csv("/mnt/data/sales.csv")', 'print(df.groupby("region").units.sum().to_dict())'].join(
  '\n',
);
const CHART = [
  'import pandas as pd, matplotlib',
  'matplotlib.use("Agg")',
  'import matplotlib.pyplot as plt',
  'df = pd.read_csv("/mnt/data/sales.csv")',
  'df.groupby("region").units.sum().plot.bar()',
  'plt.savefig("/mnt/data/units.png")',
].join('\n');
const SALES = 'region,units\nnorth,3\nsouth,5\nnorth,4\n';

/**
 * Issue 36: code_interpreter on /v1/responses as the Agents SDK (`codeInterpreterTool`) and the AI SDK 7
 * (`openai.tools.codeInterpreter`) use it, unchanged: a pandas computation over an uploaded file, and a
 * matplotlib chart returned as a container file the answer cites. The built-in model runs the message's
 * fenced python block (docs/models.md).
 */
describe.each(dialects())('code_interpreter through the agent SDKs (%s)', (dialect) => {
  let env: Env;
  let client: OpenAI;
  let runner: Runner;
  let openai: ReturnType<typeof createOpenAI>;
  let fileId: string;

  beforeAll(async () => {
    env = await startEnv(dialect, TEST_MODELS);
    const executor = science ? { executor: 'bwrap', pool_size: 0 } : { executor: 'pyodide', pool_size: 0 };
    await applyConfig(env.s.ctx, env.s.modules, { models: TEST_MODELS, code_interpreter: executor });
    client = new OpenAI({ apiKey: env.s.keys.platform, baseURL: `${env.url}/v1`, maxRetries: 0 });
    fileId = (await client.files.create({ file: await toFile(Buffer.from(SALES), 'sales.csv'), purpose: 'user_data' })).id;
    runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }) });
    setTracingDisabled(true);
    openai = createOpenAI({ apiKey: env.s.keys.platform, baseURL: `${env.url}/v1` });
  });
  afterAll(() => env?.s.close());

  it.runIf(science)('the Agents SDK runs a pandas computation with codeInterpreterTool, its outputs included', async () => {
    const agent = new Agent({
      name: 'Analyst',
      instructions: 'Use Python for numbers.',
      model: 'gpt-4.1',
      tools: [codeInterpreterTool({ container: { type: 'auto', file_ids: [fileId] }, includeOutputs: true })],
    });
    const result = await runner.run(agent, fence(PANDAS));
    expect(result.finalOutput).toContain("{'north': 7, 'south': 5}");
    const call = result.newItems.find((i) => i.type === 'tool_call_item')!.rawItem as any;
    expect(call).toMatchObject({ type: 'hosted_tool_call', name: 'code_interpreter_call', status: 'completed' });
    expect(call.providerData.outputs).toEqual([{ type: 'logs', logs: "{'north': 7, 'south': 5}\n" }]);
    // The next turn passes this turn's items (the code_interpreter_call among them) back as input.
    const next = await runner.run(agent, [...result.history, { role: 'user', content: 'thanks' }]);
    expect(next.finalOutput).toBeTruthy();
  });

  it.runIf(science)('the Agents SDK streams a run that draws a chart, returned as a cited container file', async () => {
    const agent = new Agent({
      name: 'Analyst',
      instructions: 'Draw charts with matplotlib.',
      model: 'gpt-4.1',
      tools: [codeInterpreterTool({ container: { type: 'auto', file_ids: [fileId] } })],
    });
    const result = await runner.run(agent, fence(CHART), { stream: true });
    let text = '';
    for await (const t of result.toTextStream()) text += t;
    await result.completed;
    expect(text).toContain('sandbox:/mnt/data/units.png');
    const message = result.rawResponses.at(-1)!.output.find((o: any) => o.type === 'message') as any;
    const citation = message.content[0].providerData?.annotations?.[0] ?? message.content[0].annotations?.[0];
    expect(citation).toMatchObject({ type: 'container_file_citation', filename: 'units.png' });
    const png = await client.containers.files.content.retrieve(citation.file_id, { container_id: citation.container_id });
    expect([...new Uint8Array(await png.arrayBuffer()).subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });

  it('the AI SDK generates text with openai.tools.codeInterpreter in a container it names', async () => {
    const container = await client.containers.create({ name: 'ai-sdk', file_ids: [fileId] });
    const r = await generateText({
      model: openai('gpt-4.1'),
      prompt: fence('print(open("/mnt/data/sales.csv").read().count("north"))'),
      tools: { code_interpreter: openai.tools.codeInterpreter({ container: container.id }) },
    });
    expect(r.text).toContain('2');
    const call = r.toolCalls.find((t) => t.toolName === 'code_interpreter')!;
    expect(call.input).toMatchObject({ containerId: container.id });
    const result = r.toolResults.find((t) => t.toolName === 'code_interpreter')!;
    expect((result.output as any).outputs).toEqual([{ type: 'logs', logs: '2\n' }]);
  });

  it.runIf(science)('the AI SDK streams a chart with openai.tools.codeInterpreter; the answer cites the file', async () => {
    const r = streamText({
      model: openai('gpt-4.1'),
      prompt: fence(CHART),
      tools: { code_interpreter: openai.tools.codeInterpreter({ container: { fileIds: [fileId] } }) },
    });
    let text = '';
    for await (const t of r.textStream) text += t;
    expect(text).toContain('sandbox:/mnt/data/units.png');
    expect((await r.toolResults).map((t) => t.toolName)).toEqual(['code_interpreter']);
    const sources = (await r.sources) as any[];
    expect(sources.some((s) => s.sourceType === 'document' && s.filename === 'units.png')).toBe(true);
  });
});
