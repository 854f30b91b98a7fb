import { spawnSync } from 'node:child_process';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapAvailable } from '../../src/code-interpreter/bwrap.js';
import { startChatServer, type ChatServer } from '../assistants/chat-server.js';
import { startEnv, TEST_MODELS, type Env } from '../assistants/setup.js';
import { dialects, startTestStandin, TEST_KEYS, type TestDialect, type TestStandin } from '../helpers.js';

const bwrap = bwrapAvailable();
const science = bwrap && spawnSync('/usr/bin/python3', ['-c', 'import pandas, matplotlib'], { timeout: 30_000 }).status === 0;
const fence = (code: string) => `Run this:\n\n\`\`\`python\n${code}\n\`\`\``;

/** The cases: each store with bwrap where the machine has it, and Pyodide on SQLite (its kernels take seconds to load). */
const cases: { dialect: TestDialect; executor: 'bwrap' | 'pyodide' }[] = [
  ...(bwrap ? dialects().map((dialect) => ({ dialect, executor: 'bwrap' as const })) : []),
  { dialect: 'sqlite', executor: 'pyodide' },
];

/**
 * The code_interpreter tool of /v1/responses through the openai SDK, driven by the built-in model (it runs
 * the fenced python blocks of the message): containers made for the response or named by id, the
 * `code_interpreter_call` item and its outputs with `include`, files the code writes cited in the answer,
 * the streamed events. bwrap where bubblewrap and /usr/bin/python3 are here (pandas and matplotlib for the chart).
 */
describe.each(cases)('responses: code_interpreter ($executor, $dialect)', { timeout: 120_000 }, ({ dialect, executor }) => {
  let s: TestStandin;
  let client: OpenAI;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    const config = executor === 'bwrap' ? { executor, pool_size: 0 } : { executor, pool_size: 0, packages: 'http://127.0.0.1:9/' };
    expect((await s.req('POST', '/admin/v1/config', { key: 'admin', body: { code_interpreter: config } })).status).toBe(200);
    client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${await s.listen()}/v1`, maxRetries: 0 });
  });
  afterAll(() => s?.close());

  it('runs code in an auto container with the given files; outputs with include; the written file cited', async () => {
    const data = await client.files.create({ file: await toFile(Buffer.from('3\n4\n5\n'), 'numbers.txt'), purpose: 'user_data' });
    const code = [
      'nums = [int(x) for x in open("/mnt/data/numbers.txt").read().split()]',
      'print(sum(nums))',
      '_ = open("/mnt/data/total.txt", "w").write(str(sum(nums)))',
    ].join('\n');
    const r = await client.responses.create({
      model: 'gpt-4o',
      input: fence(code),
      tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: [data.id], memory_limit: '4g' } }],
      include: ['code_interpreter_call.outputs'],
    });
    expect(r.status).toBe('completed');
    expect(r.output.map((o) => o.type)).toEqual(['code_interpreter_call', 'message']);
    const call = r.output[0] as OpenAI.Responses.ResponseCodeInterpreterToolCall;
    expect(call).toMatchObject({ status: 'completed', code: `${code}\n`, outputs: [{ type: 'logs', logs: '12\n' }] });
    expect(call.id).toMatch(/^ci_/);
    const container = await client.containers.retrieve(call.container_id);
    expect(container).toMatchObject({ status: 'running', memory_limit: '4g' });
    const files = (await client.containers.files.list(call.container_id)).data;
    const total = files.find((f) => f.path === '/mnt/data/total.txt')!;
    expect(total).toMatchObject({ source: 'assistant', bytes: 2 });
    expect(files.find((f) => f.path === '/mnt/data/numbers.txt')).toMatchObject({ source: 'user' });
    const message = r.output[1] as OpenAI.Responses.ResponseOutputMessage;
    const text = message.content[0] as OpenAI.Responses.ResponseOutputText;
    expect(text.text).toContain('12');
    expect(text.annotations).toEqual([
      {
        type: 'container_file_citation',
        container_id: call.container_id,
        file_id: total.id,
        filename: 'total.txt',
        start_index: text.text.indexOf('sandbox:/mnt/data/total.txt'),
        end_index: text.text.indexOf('sandbox:/mnt/data/total.txt') + 'sandbox:/mnt/data/total.txt'.length,
      },
    ]);
    const cited = await client.containers.files.content.retrieve(total.id, { container_id: call.container_id });
    expect(await cited.text()).toBe('12');
    // Without include, the outputs are null (as on the platform).
    const plain = await client.responses.create({
      model: 'gpt-4o',
      input: fence('print(1)'),
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
    });
    expect((plain.output[0] as OpenAI.Responses.ResponseCodeInterpreterToolCall).outputs).toBeNull();
  });

  it('keeps Python state in a container named by id across responses, and streams the call', async () => {
    const c = await client.containers.create({ name: 'session' });
    const tools = [{ type: 'code_interpreter' as const, container: c.id }];
    await client.responses.create({ model: 'gpt-4o', input: fence('x = 41'), tools });
    const stream = await client.responses.create({
      model: 'gpt-4o',
      input: fence('print(x + 1)'),
      tools,
      stream: true,
      include: ['code_interpreter_call.outputs'],
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const types = events.map((e) => e.type);
    const calls = types.filter((t) => t.startsWith('response.code_interpreter_call'));
    expect(calls[0]).toBe('response.code_interpreter_call.in_progress');
    expect(calls.slice(-3)).toEqual([
      'response.code_interpreter_call_code.done',
      'response.code_interpreter_call.interpreting',
      'response.code_interpreter_call.completed',
    ]);
    const code = events
      .filter(
        (e): e is OpenAI.Responses.ResponseCodeInterpreterCallCodeDeltaEvent => e.type === 'response.code_interpreter_call_code.delta',
      )
      .map((e) => e.delta)
      .join('');
    expect(code).toBe('print(x + 1)\n');
    const done = events.find((e) => e.type === 'response.completed') as OpenAI.Responses.ResponseCompletedEvent;
    expect(done.response.output[0]).toMatchObject({
      type: 'code_interpreter_call',
      container_id: c.id,
      outputs: [{ type: 'logs', logs: '42\n' }],
    });
    const added = events.find((e) => e.type === 'response.output_item.added') as OpenAI.Responses.ResponseOutputItemAddedEvent;
    expect(added.item).toMatchObject({ type: 'code_interpreter_call', status: 'in_progress' });
  });

  it.runIf(executor === 'bwrap' && science)(
    'computes with pandas and returns a matplotlib chart as a cited container file and an image output',
    async () => {
      const code = [
        'import pandas as pd, matplotlib.pyplot as plt',
        'df = pd.DataFrame({"city": ["Oslo", "Lima", "Cairo"], "temp": [4, 19, 25]})',
        'print(df.temp.mean())',
        'df.plot.bar(x="city", y="temp")',
        'plt.savefig("/mnt/data/chart.png")',
      ].join('\n');
      const r = await client.responses.create({
        model: 'gpt-4o',
        input: fence(code),
        tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
        include: ['code_interpreter_call.outputs'],
      });
      const call = r.output[0] as OpenAI.Responses.ResponseCodeInterpreterToolCall;
      expect(call.outputs![0]).toEqual({ type: 'logs', logs: '16.0\n' });
      const text = (r.output[1] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
      const [citation] = text.annotations as OpenAI.Responses.ResponseOutputText.ContainerFileCitation[];
      expect(citation).toMatchObject({ type: 'container_file_citation', filename: 'chart.png', container_id: call.container_id });
      const png = Buffer.from(
        await (await client.containers.files.content.retrieve(citation.file_id, { container_id: call.container_id })).arrayBuffer(),
      );
      expect([...png.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    },
  );

  it('refuses a bad tool entry by name, and a container that is not there or expired', async () => {
    const bad = async (tool: unknown, status = 400) => {
      const r = await s.req('POST', '/v1/responses', { key: 'platform', body: { model: 'gpt-4o', input: 'hi', tools: [tool] } });
      expect(r.status, JSON.stringify(tool)).toBe(status);
      return r.body.error;
    };
    expect(await bad({ type: 'code_interpreter' })).toMatchObject({ param: 'tools[0].container', code: 'missing_required_parameter' });
    expect(await bad({ type: 'code_interpreter', container: '../etc' })).toMatchObject({ param: 'tools[0].container' });
    expect(await bad({ type: 'code_interpreter', container: { type: 'auto', memory_limit: '2g' } })).toMatchObject({
      param: 'tools[0].container.memory_limit',
    });
    expect(await bad({ type: 'code_interpreter', container: { type: 'auto', color: 1 } })).toMatchObject({
      param: 'tools[0].container.color',
    });
    expect(await bad({ type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-nope'] } }, 404)).toMatchObject({
      param: 'tools[0].container.file_ids[0]',
    });
    expect(await bad({ type: 'code_interpreter', container: 'cntr_nope' }, 404)).toMatchObject({ param: 'tools[0].container' });
    const c = await client.containers.create({ name: 'old', expires_after: { anchor: 'last_active_at', minutes: 1 } });
    await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '2m' } });
    expect(await bad({ type: 'code_interpreter', container: c.id })).toMatchObject({ code: 'container_expired' });
  });
});

/**
 * An upstream model (a Chat Completions server) is given code_interpreter as a function, and Standin runs its calls;
 * and an Assistants integration with code_interpreter moved over to a container.
 */
describe('responses: code_interpreter with an upstream model, and an Assistants integration moved over', { timeout: 120_000 }, () => {
  let env: Env;
  let chat: ChatServer;
  beforeAll(async () => {
    chat = await startChatServer();
    env = await startEnv('sqlite', {
      'up-*': { provider: 'upstream', base_url: chat.url, api_key: 'sk-up', timeout: '5s' },
      ...TEST_MODELS,
    });
  });
  afterAll(async () => {
    await env?.s.close();
    await chat?.close();
  });

  it("offers the function (not Standin's own interpreter note), runs the call, feeds the logs back; streamed with no function_call item", async () => {
    const client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${env.url}/v1`, maxRetries: 0 });
    const before = chat.requests.length;
    const r = await client.responses.create({
      model: 'up-1',
      input: 'call:code_interpreter print(6 * 7)',
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
    });
    const sent = chat.requests.slice(before).map((x) => x.body);
    expect(sent).toHaveLength(2);
    expect(sent[0].tools.map((t: any) => t.function.name)).toEqual(['code_interpreter']);
    expect(sent[0]).not.toHaveProperty('interpreter');
    expect(sent[1].messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_up_1', content: '42' });
    expect(r.output.map((o) => o.type)).toEqual(['code_interpreter_call', 'message']);
    expect(r.output_text).toBe('Tool said: 42');
    const stream = client.responses.stream({
      model: 'up-1',
      input: 'call:code_interpreter print(6 * 7)',
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
    });
    const added: string[] = [];
    for await (const e of stream) if (e.type === 'response.output_item.added') added.push(e.item.type);
    expect(added).toEqual(['code_interpreter_call', 'message']);
    expect((await stream.finalResponse()).output_text).toBe('Tool said: 42');
  });

  it('moves an Assistants integration with code_interpreter over (docs/responses.md): same file, same code, same logs', async () => {
    const client = new OpenAI({
      apiKey: TEST_KEYS.platform,
      baseURL: `${env.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'OpenAI-Beta': 'assistants=v2' },
    });
    const file = await client.files.create({ file: await toFile(Buffer.from('2\n3\n7\n'), 'n.txt'), purpose: 'assistants' });
    const message = fence(`print(sum(int(x) for x in open("/mnt/data/${file.id}").read().split()))`);
    // Before: an assistant with the file in its tool_resources, a run on a thread.
    const assistant = await client.beta.assistants.create({
      model: 'gpt-4.1',
      tools: [{ type: 'code_interpreter' }],
      tool_resources: { code_interpreter: { file_ids: [file.id] } },
    });
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: message }] });
    const run = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id });
    expect(run.status).toBe('completed');
    const steps = await client.beta.threads.runs.steps.list(run.id, { thread_id: thread.id });
    const step = steps.data.find((x) => x.step_details.type === 'tool_calls')!
      .step_details as OpenAI.Beta.Threads.Runs.ToolCallsStepDetails;
    const ran = step.tool_calls[0] as OpenAI.Beta.Threads.Runs.CodeInterpreterToolCall;
    // After: the thread's session is a container with the assistant's files (at /mnt/data/<filename> there:
    // the code names the file by its name), and the response names it.
    const container = await client.containers.create({ name: `thread ${thread.id}`, file_ids: [file.id] });
    const r = await client.responses.create({
      model: 'gpt-4.1',
      input: fence('print(sum(int(x) for x in open("/mnt/data/n.txt").read().split()))'),
      tools: [{ type: 'code_interpreter', container: container.id }],
      include: ['code_interpreter_call.outputs'],
    });
    const call = r.output[0] as OpenAI.Responses.ResponseCodeInterpreterToolCall;
    expect(ran.code_interpreter.outputs).toEqual([{ type: 'logs', logs: '12\n' }]);
    expect(call.outputs).toEqual([{ type: 'logs', logs: '12\n' }]);
  });
});
