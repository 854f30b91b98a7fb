import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers.js';
import { startEnv, timeTool, until, weatherTool, type Env } from './setup.js';

describe.each(dialects())('runs (%s)', (dialect) => {
  let env: Env;
  let assistantId: string;
  beforeAll(async () => {
    env = await startEnv(dialect);
    assistantId = (
      await env.client.beta.assistants.create({
        model: 'gpt-4o',
        instructions: 'Be brief.',
        tools: [weatherTool, timeTool, { type: 'code_interpreter' }],
      })
    ).id;
  });
  afterAll(() => env?.s.close());

  it('createAndPoll: queued → in_progress → completed, with the reply, usage and a message_creation step', async () => {
    const { client } = env;
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'hello there' }] });
    const created = await client.beta.threads.runs.create(thread.id, { assistant_id: assistantId, metadata: { n: '1' } }).withResponse();
    expect(created.data.status).toBe('queued');
    expect(created.data.usage).toBeNull();
    expect(created.data.expires_at).toBe(created.data.created_at + 600);
    expect(created.response.headers.get('openai-poll-after-ms')).toBeTruthy();
    const run = await client.beta.threads.runs.poll(created.data.id, { thread_id: thread.id });
    expect(run).toMatchObject({
      status: 'completed',
      instructions: 'Be brief.',
      model: 'gpt-4o',
      metadata: { n: '1' },
      expires_at: null,
      last_error: null,
      tool_choice: 'auto',
      parallel_tool_calls: true,
    });
    expect(run.started_at).not.toBeNull();
    expect(run.completed_at).not.toBeNull();
    expect(run.usage!.total_tokens).toBe(run.usage!.prompt_tokens + run.usage!.completion_tokens);
    expect(run.usage!.prompt_tokens).toBeGreaterThan(0);

    const messages = await client.beta.threads.messages.list(thread.id, { run_id: run.id });
    expect(messages.data).toHaveLength(1);
    expect(messages.data[0]).toMatchObject({
      role: 'assistant',
      run_id: run.id,
      assistant_id: assistantId,
      status: 'completed',
      content: [{ type: 'text', text: { value: 'You said: hello there', annotations: [] } }],
    });
    const steps = await client.beta.threads.runs.steps.list(run.id, { thread_id: thread.id });
    expect(steps.data).toHaveLength(1);
    expect(steps.data[0]).toMatchObject({
      object: 'thread.run.step',
      type: 'message_creation',
      status: 'completed',
      step_details: { type: 'message_creation', message_creation: { message_id: messages.data[0].id } },
    });
    expect(steps.data[0].usage!.total_tokens).toBeGreaterThan(0);
    const step = await client.beta.threads.runs.steps.retrieve(steps.data[0].id, {
      thread_id: thread.id,
      run_id: run.id,
      include: ['step_details.tool_calls[*].file_search.results[*].content'],
    });
    expect(step).toEqual(steps.data[0]);
    const runs = await client.beta.threads.runs.list(thread.id);
    expect(runs.data.map((r) => r.id)).toEqual([run.id]);
    const modified = await client.beta.threads.runs.update(run.id, { thread_id: thread.id, metadata: { n: '2' } });
    expect(modified.metadata).toEqual({ n: '2' });
  });

  it('createAndRunPoll with additional settings; the run records them', async () => {
    const run = await env.client.beta.threads.createAndRunPoll({
      assistant_id: assistantId,
      thread: { messages: [{ role: 'user', content: 'hi' }] },
      instructions: 'Override.',
      temperature: 0.3,
      top_p: 0.5,
      max_prompt_tokens: 1000,
      max_completion_tokens: 500,
      truncation_strategy: { type: 'last_messages', last_messages: 3 },
      tool_choice: 'none',
      parallel_tool_calls: false,
      response_format: { type: 'json_object' },
    });
    expect(run).toMatchObject({
      status: 'completed',
      instructions: 'Override.',
      temperature: 0.3,
      top_p: 0.5,
      max_prompt_tokens: 1000,
      max_completion_tokens: 500,
      truncation_strategy: { type: 'last_messages', last_messages: 3 },
      tool_choice: 'none',
      parallel_tool_calls: false,
      response_format: { type: 'json_object' },
    });
    const [m] = (await env.client.beta.threads.messages.list(run.thread_id, { run_id: run.id })).data;
    expect(JSON.parse((m.content[0] as any).text.value)).toEqual({ reply: 'hi' });
  });

  it('refuses bad run parameters', async () => {
    const { client } = env;
    const t = await client.beta.threads.create();
    const bad = async (body: any, param: string | null, re: RegExp) => {
      const err = await client.beta.threads.runs.create(t.id, { assistant_id: assistantId, ...body }).catch((e) => e);
      expect(err.status).toBe(400);
      expect(err.error.param).toBe(param);
      expect(err.error.message).toMatch(re);
    };
    await bad({ max_prompt_tokens: 255 }, 'max_prompt_tokens', /at least 256/);
    await bad({ max_completion_tokens: 100 }, 'max_completion_tokens', /at least 256/);
    await bad({ truncation_strategy: { type: 'last_messages', last_messages: 0 } }, 'truncation_strategy.last_messages', /at least 1/);
    await bad({ truncation_strategy: { type: 'last_messages' } }, 'truncation_strategy.last_messages', /required/);
    await bad({ truncation_strategy: { type: 'middle' } }, 'truncation_strategy.type', /Supported values/);
    await bad({ tool_choice: { type: 'function' } }, 'tool_choice.function', /Missing required/);
    await bad({ tool_choice: { type: 'function', function: {} } }, 'tool_choice.function.name', /Missing required/);
    await bad({ tool_choice: 'sometimes' }, 'tool_choice', /Supported values/);
    await bad({ tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice', /not among the run's tools/);
    await bad({ tool_choice: { type: 'file_search' } }, 'tool_choice', /not among/);
    await bad({ tools: Array.from({ length: 21 }, () => ({ type: 'code_interpreter' })) }, 'tools', /maximum length 20/);
    await bad({ additional_messages: [{ role: 'user' }] }, 'additional_messages[0].content', /Missing required/);
    await bad({ temperature: 3 }, 'temperature', /at most 2/);
    await bad({ model: '' }, 'model', /at least 1/);
    const noAssistant = await client.beta.threads.runs.create(t.id, { assistant_id: 'asst_missing' }).catch((e) => e);
    expect(noAssistant.status).toBe(404);
    expect(noAssistant.error.message).toBe("No assistant found with id 'asst_missing'.");
    const noThread = await client.beta.threads.runs.create('thread_missing', { assistant_id: assistantId }).catch((e) => e);
    expect(noThread.status).toBe(404);
  });

  it('requires_action → submitToolOutputsAndPoll; outputs show in the step; the reply uses them', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: "What's the weather?" }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    expect(run.status).toBe('requires_action');
    expect(run.usage).toBeNull();
    const calls = run.required_action!.submit_tool_outputs.tool_calls;
    expect(calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    const pending = (await client.beta.threads.runs.steps.list(run.id, { thread_id: t.id })).data[0];
    expect(pending).toMatchObject({ type: 'tool_calls', status: 'in_progress', usage: null });
    expect((pending.step_details as any).tool_calls[0]).toMatchObject({
      id: calls[0].id,
      type: 'function',
      function: { name: 'get_weather', output: null },
    });

    const partial = await client.beta.threads.runs.submitToolOutputs(run.id, { thread_id: t.id, tool_outputs: [] }).catch((e) => e);
    expect(partial.status).toBe(400);
    expect(partial.error.message).toContain(calls[0].id);
    const unknown = await client.beta.threads.runs
      .submitToolOutputs(run.id, { thread_id: t.id, tool_outputs: [{ tool_call_id: 'call_other', output: 'x' }] })
      .catch((e) => e);
    expect(unknown.status).toBe(400);

    const done = await client.beta.threads.runs.submitToolOutputsAndPoll(run.id, {
      thread_id: t.id,
      tool_outputs: [{ tool_call_id: calls[0].id, output: 'sunny, 21°C' }],
    });
    expect(done.status).toBe('completed');
    expect(done.required_action).toBeNull();
    const steps = (await client.beta.threads.runs.steps.list(run.id, { thread_id: t.id, order: 'asc' })).data;
    expect(steps.map((s) => [s.type, s.status])).toEqual([
      ['tool_calls', 'completed'],
      ['message_creation', 'completed'],
    ]);
    expect((steps[0].step_details as any).tool_calls[0].function.output).toBe('sunny, 21°C');
    expect(steps[0].usage).not.toBeNull();
    const [reply] = (await client.beta.threads.messages.list(t.id, { run_id: run.id })).data;
    expect((reply.content[0] as any).text.value).toBe('The weather is sunny, 21°C.');
    const again = await client.beta.threads.runs
      .submitToolOutputs(run.id, { thread_id: t.id, tool_outputs: [{ tool_call_id: calls[0].id, output: 'x' }] })
      .catch((e) => e);
    expect(again.status).toBe(400);
    expect(again.error.message).toBe('Runs in status "completed" do not accept tool outputs.');
  });

  it('parallel tool calls need every output in one request; parallel_tool_calls=false asks one at a time', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'use both tools' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    const calls = run.required_action!.submit_tool_outputs.tool_calls;
    expect(calls.map((c) => c.function.name)).toEqual(['get_weather', 'get_time']);
    const one = await client.beta.threads.runs
      .submitToolOutputs(run.id, { thread_id: t.id, tool_outputs: [{ tool_call_id: calls[0].id, output: 'a' }] })
      .catch((e) => e);
    expect(one.status).toBe(400);
    expect(one.error.message).toMatch(/^Expected tool outputs for call_ids/);
    const done = await client.beta.threads.runs.submitToolOutputsAndPoll(run.id, {
      thread_id: t.id,
      tool_outputs: calls.map((c) => ({ tool_call_id: c.id, output: c.function.name })),
    });
    expect(done.status).toBe('completed');
    const t2 = await client.beta.threads.create({ messages: [{ role: 'user', content: 'use both tools' }] });
    const single = await client.beta.threads.runs.createAndPoll(t2.id, { assistant_id: assistantId, parallel_tool_calls: false });
    expect(single.required_action!.submit_tool_outputs.tool_calls).toHaveLength(1);
  });

  it('tool_choice required and a named function force calls with schema-built arguments', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'anything' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, {
      assistant_id: assistantId,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    expect(run.required_action!.submit_tool_outputs.tool_calls[0].function).toEqual({ name: 'get_time', arguments: '{"tz":"example"}' });
    await client.beta.threads.runs.cancel(run.id, { thread_id: t.id });
    await until(
      () => client.beta.threads.runs.retrieve(run.id, { thread_id: t.id }),
      (r) => r.status === 'cancelled',
    );
  });

  it('thread lock: no messages or runs while a run is active, with the platform message', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'weather please' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    expect(run.status).toBe('requires_action');
    const msg = await client.beta.threads.messages.create(t.id, { role: 'user', content: 'more' }).catch((e) => e);
    expect(msg.status).toBe(400);
    expect(msg.error.message).toBe(`Can't add messages to ${t.id} while a run ${run.id} is active.`);
    const second = await client.beta.threads.runs.create(t.id, { assistant_id: assistantId }).catch((e) => e);
    expect(second.status).toBe(400);
    expect(second.error.message).toBe(`Thread ${t.id} already has an active run ${run.id}.`);
    const withMessages = await client.beta.threads.runs
      .create(t.id, { assistant_id: assistantId, additional_messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(withMessages.status).toBe(400);
    await client.beta.threads.runs.submitToolOutputsAndPoll(run.id, {
      thread_id: t.id,
      tool_outputs: [{ tool_call_id: run.required_action!.submit_tool_outputs.tool_calls[0].id, output: 'ok' }],
    });
    expect((await client.beta.threads.messages.create(t.id, { role: 'user', content: 'more' })).role).toBe('user');
    const next = await client.beta.threads.runs.createAndPoll(t.id, {
      assistant_id: assistantId,
      additional_messages: [{ role: 'user', content: 'bye' }],
    });
    expect(next.status).toBe('completed');
  });

  it('cancel: in_progress → cancelling → cancelled; message incomplete (run_cancelled), step cancelled', async () => {
    const { client } = env;
    const slow = await client.beta.assistants.create({ model: 'slow-model' });
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'tell me something quite long please' }] });
    const run = await client.beta.threads.runs.create(t.id, { assistant_id: slow.id });
    // Wait until the reply has started (the message exists), then cancel.
    await until(
      () => client.beta.threads.messages.list(t.id, { run_id: run.id }),
      (p) => p.data.length === 1,
    );
    const cancelling = await client.beta.threads.runs.cancel(run.id, { thread_id: t.id });
    expect(cancelling.status).toBe('cancelling');
    const ended = await client.beta.threads.runs.poll(run.id, { thread_id: t.id }, { pollIntervalMs: 10 });
    expect(ended.status).toBe('cancelled');
    expect(ended.cancelled_at).not.toBeNull();
    expect(ended.usage).not.toBeNull();
    const [m] = (await client.beta.threads.messages.list(t.id, { run_id: run.id })).data;
    expect(m).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'run_cancelled' } });
    expect(m.incomplete_at).not.toBeNull();
    const [s] = (await client.beta.threads.runs.steps.list(run.id, { thread_id: t.id })).data;
    expect(s).toMatchObject({ status: 'cancelled', type: 'message_creation' });
    expect(s.cancelled_at).not.toBeNull();
    const twice = await client.beta.threads.runs.cancel(run.id, { thread_id: t.id }).catch((e) => e);
    expect(twice.status).toBe(400);
    expect(twice.error.message).toBe("Cannot cancel run with status 'cancelled'.");
    // The lock is released.
    await client.beta.threads.messages.create(t.id, { role: 'user', content: 'ok' });
  });

  it('cancel while requires_action cancels the tool_calls step', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'weather?' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    await client.beta.threads.runs.cancel(run.id, { thread_id: t.id });
    const ended = await client.beta.threads.runs.poll(run.id, { thread_id: t.id }, { pollIntervalMs: 10 });
    expect(ended).toMatchObject({ status: 'cancelled', required_action: null });
    const [s] = (await client.beta.threads.runs.steps.list(run.id, { thread_id: t.id })).data;
    expect(s).toMatchObject({ type: 'tool_calls', status: 'cancelled' });
  });

  it('expiry: after 10 minutes of the Standin clock an unfinished run is expired, its step too', async () => {
    const { client, s } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'weather?' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    expect(run.status).toBe('requires_action');
    s.ctx.clock.advance(9 * 60_000);
    expect((await client.beta.threads.runs.retrieve(run.id, { thread_id: t.id })).status).toBe('requires_action');
    s.ctx.clock.advance(61_000);
    const expired = await client.beta.threads.runs.retrieve(run.id, { thread_id: t.id });
    expect(expired.status).toBe('expired');
    expect(expired.expires_at).toBe(run.expires_at);
    const [step] = (await client.beta.threads.runs.steps.list(run.id, { thread_id: t.id })).data;
    expect(step.status).toBe('expired');
    expect(step.expired_at).not.toBeNull();
    const late = await client.beta.threads.runs
      .submitToolOutputs(run.id, {
        thread_id: t.id,
        tool_outputs: [{ tool_call_id: run.required_action!.submit_tool_outputs.tool_calls[0].id, output: 'x' }],
      })
      .catch((e) => e);
    expect(late.status).toBe(400);
    expect(late.error.message).toBe('Runs in status "expired" do not accept tool outputs.');
    await client.beta.threads.messages.create(t.id, { role: 'user', content: 'unlocked' });
  });

  it('expiry by the scheduled job, without anyone reading the run', async () => {
    const { client, s } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'weather?' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    s.ctx.clock.advance(10 * 60_000 + 1000);
    const row = await until(
      () => s.ctx.store.db.selectFrom('thread_runs').select('status').where('id', '=', run.id).executeTakeFirstOrThrow(),
      (r) => r.status === 'expired',
    );
    expect(row.status).toBe('expired');
  });

  it('max_completion_tokens reached → run incomplete, message incomplete (max_tokens)', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'a long story please' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId, max_completion_tokens: 256 });
    expect(run.status).toBe('incomplete');
    expect(run.incomplete_details).toEqual({ reason: 'max_completion_tokens' });
    expect(run.usage!.completion_tokens).toBeLessThanOrEqual(256);
    const [m] = (await client.beta.threads.messages.list(t.id, { run_id: run.id })).data;
    expect(m).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_tokens' } });
  });

  it('max_prompt_tokens: auto truncation drops middle messages; a prompt that cannot fit ends incomplete', async () => {
    const { client } = env;
    const filler = 'lorem ipsum dolor sit amet '.repeat(40);
    const t = await client.beta.threads.create({
      messages: Array.from({ length: 6 }, (_, i) => ({ role: 'user' as const, content: `${i}: ${filler}` })),
    });
    const fits = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId, max_prompt_tokens: 1000, tools: [] });
    expect(fits.status).toBe('completed');
    expect(fits.usage!.prompt_tokens).toBeLessThanOrEqual(1000);
    const huge = await client.beta.threads.create({ messages: [{ role: 'user', content: filler.repeat(5) }] });
    const over = await client.beta.threads.runs.createAndPoll(huge.id, { assistant_id: assistantId, max_prompt_tokens: 256 });
    expect(over.status).toBe('incomplete');
    expect(over.incomplete_details).toEqual({ reason: 'max_prompt_tokens' });
    expect((await client.beta.threads.messages.list(huge.id, { run_id: over.id })).data).toHaveLength(0);
  });

  it('content_filter: the message is incomplete with that reason; the run completes', async () => {
    const t = await env.client.beta.threads.create({ messages: [{ role: 'user', content: 'say something filtered' }] });
    const run = await env.client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    expect(run.status).toBe('completed');
    const [m] = (await env.client.beta.threads.messages.list(t.id, { run_id: run.id })).data;
    expect(m).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
  });

  it('deleting a thread takes its runs; reading them is a 404', async () => {
    const { client } = env;
    const run = await client.beta.threads.createAndRunPoll({
      assistant_id: assistantId,
      thread: { messages: [{ role: 'user', content: 'hi' }] },
    });
    await client.beta.threads.delete(run.thread_id);
    await expect(client.beta.threads.runs.retrieve(run.id, { thread_id: run.thread_id })).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.threads.runs.steps.list(run.id, { thread_id: run.thread_id })).rejects.toMatchObject({ status: 404 });
  });
});
