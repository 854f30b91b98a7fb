import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { startChatServer, type ChatServer } from '../assistants/chat-server.js';
import { startEnv, weatherTool, type Env } from '../assistants/setup.js';
import { chatLine, fileLines, uploadBatchFile, waitFor } from '../batches/fixtures.js';
import { dialects } from '../helpers.js';

/**
 * Record a real model once, replay it offline: Standin records every exchange with a Chat Completions
 * server (the test's own, on loopback) through the `record` provider, the server stops, and the `replay`
 * provider gives every caller — chat completions and responses, plain and streamed, runs, batches — the same
 * answers from the fixture folder. A changed prompt is a miss naming the nearest recording.
 */
describe.each(dialects())('record and replay a model (%s)', (dialect) => {
  let env: Env;
  let chat: ChatServer;
  let dir: string;
  const fixtureFiles = () => readdirSync(dir).filter((f) => f.endsWith('.json'));
  /** What Standin logged at warn: where a miss's nearest recording is told (to the operator, not the caller). */
  const warnings: string[] = [];

  beforeAll(async () => {
    chat = await startChatServer();
    dir = mkdtempSync(join(tmpdir(), 'standin-fixtures-'));
    // The folder is a temporary one: the fixtures root (the working directory by default) is the system's.
    env = await startEnv(
      dialect,
      { '*': { provider: 'record', base_url: chat.url, api_key: 'sk-upstream-secret', fixtures: dir } },
      { fixturesRoot: tmpdir() },
    );
    env.s.ctx.log.warn = (_obj: unknown, msg?: string) => void warnings.push(msg ?? '');
  });
  afterAll(async () => {
    await env?.s.close();
    await chat?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every caller of a provider once; what each client saw. */
  async function exercise() {
    const { client } = env;
    const plain = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello recorded world' }],
      temperature: 0.2,
    });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream these few words please' }],
      stream: true,
    });
    const deltas: string[] = [];
    let finish: string | null = null;
    for await (const c of stream) {
      if (c.choices[0]?.delta?.content) deltas.push(c.choices[0].delta.content);
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    const tool = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'please call:get_weather' }],
      tools: [weatherTool],
    });

    const assistant = await client.beta.assistants.create({ model: 'gpt-4o', instructions: 'You are recorded.', tools: [weatherTool] });
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'run and call:get_weather' }] });
    const run = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id });
    const call = run.required_action?.submit_tool_outputs.tool_calls[0];
    const done = await client.beta.threads.runs.submitToolOutputsAndPoll(run.id, {
      thread_id: thread.id,
      tool_outputs: [{ tool_call_id: call!.id, output: '18C' }],
    });
    const [message] = (await client.beta.threads.messages.list(thread.id, { run_id: run.id })).data;

    const response = await client.responses.create({ model: 'gpt-4.1', input: 'hello from responses' });
    const responseStream = client.responses.stream({ model: 'gpt-4.1', input: 'stream from responses please' });
    const responseDeltas: string[] = [];
    responseStream.on('response.output_text.delta', (e) => responseDeltas.push(e.delta));
    const streamedResponse = await responseStream.finalResponse();

    const input = await uploadBatchFile(client, [chatLine('one', 'hello batch one'), chatLine('two', 'hello batch two')]);
    const batch = await waitFor(
      client,
      (await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' })).id,
    );
    const lines = (await fileLines(client, batch.output_file_id!)).map((l) => [l.custom_id, l.response.body.choices[0].message.content]);

    return {
      plain: [plain.choices[0].message.content, plain.usage?.total_tokens],
      streamed: { deltas, finish },
      tool: tool.choices[0].message.tool_calls,
      run: { first: run.status, call, status: done.status, usage: done.usage, text: (message.content[0] as any).text.value },
      response: response.output_text,
      streamedResponse: { deltas: responseDeltas, text: streamedResponse.output_text, usage: streamedResponse.usage },
      batch: { status: batch.status, lines: lines.sort() },
    };
  }

  let recorded: Awaited<ReturnType<typeof exercise>>;

  it('records every exchange through the upstream, one readable file each', async () => {
    recorded = await exercise();
    expect(recorded.plain).toEqual(['Upstream says: hello recorded world', 18]);
    expect(recorded.streamed.deltas.length).toBeGreaterThan(2);
    expect(recorded.streamed.deltas.join('')).toBe('Upstream says: stream these few words please');
    expect(recorded.tool).toMatchObject([{ type: 'function', function: { name: 'get_weather' } }]);
    expect(recorded.run).toMatchObject({ first: 'requires_action', status: 'completed', text: 'Tool said: 18C' });
    expect(recorded.response).toBe('Upstream says: hello from responses');
    expect(recorded.streamedResponse.deltas.length).toBeGreaterThan(2);
    expect(recorded.streamedResponse.text).toBe('Upstream says: stream from responses please');
    expect(recorded.batch.lines).toEqual([
      ['one', 'Upstream says: hello batch one'],
      ['two', 'Upstream says: hello batch two'],
    ]);
    // plain, streamed, tool, the run's two turns, the response and the streamed one, two batch lines.
    expect(fixtureFiles()).toHaveLength(9);
    const upstreamCalls = chat.requests.length;
    expect(upstreamCalls).toBe(9);
    for (const file of fixtureFiles()) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(text).not.toContain('sk-upstream-secret');
      const fixture = JSON.parse(text);
      expect(Object.keys(fixture)).toEqual(['standin_fixture', 'key', 'request', 'chunks', 'result']);
      expect(Object.keys(fixture.request)).toEqual(Object.keys(fixture.request).sort());
      expect(file).toBe(`${fixture.request.model}-${fixture.key.slice(0, 16)}.json`);
    }
  });

  it('recording the same request again rewrites the same bytes (stable in git)', async () => {
    const file = fixtureFiles().find((f) => readFileSync(join(dir, f), 'utf8').includes('hello recorded world'))!;
    const before = readFileSync(join(dir, file), 'utf8');
    await env.client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello recorded world' }],
      temperature: 0.2,
      stream: true,
    });
    expect(readFileSync(join(dir, file), 'utf8')).toBe(before);
    expect(fixtureFiles()).toHaveLength(9);
  });

  it('with the upstream gone, replay gives every caller the same answers, streams chunk for chunk', async () => {
    await chat.close();
    await applyConfig(env.s.ctx, env.s.modules, { models: { '*': { provider: 'replay', fixtures: dir } } });
    const replayed = await exercise();
    expect(replayed).toEqual(recorded);
  });

  it('a changed prompt is a miss: 400 invalid_prompt naming the request key; the log names the nearest recording', async () => {
    const err = await env.client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello recorded word' }], temperature: 0.2 })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_prompt' });
    const nearest = fixtureFiles().find((f) => readFileSync(join(dir, f), 'utf8').includes('hello recorded world'))!;
    expect(err.message).toMatch(/Replay miss: no recorded exchange for this request \(model 'gpt-4o-mini', key [0-9a-f]{16}\)/);
    expect(err.message).not.toContain('Nearest');
    expect(err.message).not.toContain(dir);
    expect(warnings.at(-1)).toContain(
      `Nearest recorded: ${relative(tmpdir(), join(dir, nearest))}, which differs at messages.0.content: recorded "hello recorded world", requested "hello recorded word"`,
    );
  });

  it('a miss in a response fails it with invalid_prompt; in a batch, the line answers 400 invalid_prompt', async () => {
    const { client } = env;
    const response = await client.responses.create({ model: 'gpt-4.1', input: 'hello from responses!' });
    expect(response.status).toBe('failed');
    expect(response.error?.code).toBe('invalid_prompt');
    expect(warnings.some((w) => w.includes('requested "hello from responses!"'))).toBe(true);
    const input = await uploadBatchFile(client, [chatLine('one', 'hello batch one'), chatLine('new', 'hello batch three')]);
    const batch = await waitFor(
      client,
      (await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' })).id,
    );
    const lines = [
      ...(batch.output_file_id ? await fileLines(client, batch.output_file_id) : []),
      ...(batch.error_file_id ? await fileLines(client, batch.error_file_id) : []),
    ];
    const byId = Object.fromEntries(lines.map((l) => [l.custom_id, l.response]));
    expect(byId.one.body.choices[0].message.content).toBe('Upstream says: hello batch one');
    expect(byId.new.status_code).toBe(400);
    expect(byId.new.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_prompt' });
    expect(byId.new.body.error.message).toMatch(/^Replay miss: /);
    expect(warnings.some((w) => w.includes('requested "hello batch three"'))).toBe(true);
  });

  it('a miss in a run fails the run with invalid_prompt and the same explanation in the log', async () => {
    const { client } = env;
    const assistant = await client.beta.assistants.create({ model: 'gpt-4o', instructions: 'You are recorded.', tools: [weatherTool] });
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'something never recorded' }] });
    const run = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id });
    expect(run.status).toBe('failed');
    expect(run.last_error?.code).toBe('invalid_prompt');
    expect(run.last_error?.message).toMatch(/^Replay miss: /);
    expect(warnings.at(-1)).toMatch(
      /^Replay miss: .* Nearest recorded: \S+gpt-4o-[0-9a-f]{16}\.json, which differs at messages\.1\.content/,
    );
  });
});
