import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers.js';
import { startEnv, until, weatherTool, type Env } from './setup.js';
import { readerOf, watchSnapshots } from './snapshots.js';

/** Splits a raw SSE body into frames of {event, data}. */
function frames(body: string): { event: string | null; data: string }[] {
  return body
    .split('\n\n')
    .filter((f) => f.trim())
    .map((f) => {
      const lines = f.split('\n');
      return {
        event: lines.find((l) => l.startsWith('event: '))?.slice(7) ?? null,
        data: lines
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n'),
      };
    });
}

describe.each(dialects())('run streaming (%s)', (dialect) => {
  let env: Env;
  let assistantId: string;
  beforeAll(async () => {
    env = await startEnv(dialect);
    assistantId = (await env.client.beta.assistants.create({ model: 'gpt-4o', tools: [weatherTool] })).id;
  });
  afterAll(() => env?.s.close());

  it('runs.stream: the platform order of events, indexed deltas, finalRun() and finalMessages()', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'stream this reply to me in several pieces' }] });
    const stream = client.beta.threads.runs.stream(t.id, { assistant_id: assistantId });
    const snapshots = watchSnapshots(stream);
    const events: string[] = [];
    const deltas: any[] = [];
    let text = '';
    stream.on('textDelta', (d) => (text += d.value ?? ''));
    for await (const e of stream) {
      events.push(e.event);
      if (e.event === 'thread.message.delta') deltas.push(e.data.delta);
    }
    const run = await stream.finalRun();
    expect(run.status).toBe('completed');
    expect(await snapshots.verify(readerOf(client))).toMatchObject({ messages: 1, textDone: 1 });
    const compact = events.filter((e, i) => e !== 'thread.message.delta' || events[i - 1] !== 'thread.message.delta');
    expect(compact).toEqual([
      'thread.run.created',
      'thread.run.queued',
      'thread.run.in_progress',
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.message.created',
      'thread.message.in_progress',
      'thread.message.delta',
      'thread.message.completed',
      'thread.run.step.completed',
      'thread.run.completed',
    ]);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.content[0].index === 0 && d.content[0].type === 'text')).toBe(true);
    expect(text).toBe('You said: stream this reply to me in several pieces');
    const [message] = await stream.finalMessages();
    expect((message.content[0] as any).text.value).toBe(text);
    expect(run.usage).not.toBeNull();
  });

  it('raw frames: an event line on every frame, JSON data, closed by event: done / data: [DONE]', async () => {
    const { url, s } = env;
    const res = await fetch(`${url}/v1/threads/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keys.platform}`, 'content-type': 'application/json', 'OpenAI-Beta': 'assistants=v2' },
      body: JSON.stringify({ assistant_id: assistantId, stream: true, thread: { messages: [{ role: 'user', content: 'hi' }] } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const all = frames(await res.text());
    expect(all.every((f) => f.event !== null)).toBe(true);
    expect(all[0].event).toBe('thread.created');
    expect(JSON.parse(all[0].data).object).toBe('thread');
    expect(all[1].event).toBe('thread.run.created');
    expect(all.at(-2)!.event).toBe('thread.run.completed');
    expect(all.at(-1)).toEqual({ event: 'done', data: '[DONE]' });
    for (const f of all.slice(0, -1)) expect(() => JSON.parse(f.data)).not.toThrow();
  });

  it('requires_action ends the stream; submitToolOutputsStream continues it to completion', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'weather in paris?' }] });
    const first = client.beta.threads.runs.stream(t.id, { assistant_id: assistantId });
    const firstSnapshots = watchSnapshots(first);
    const events: string[] = [];
    const toolDeltas: any[] = [];
    for await (const e of first) {
      events.push(e.event);
      if (e.event === 'thread.run.step.delta') toolDeltas.push(...((e.data.delta.step_details as any)?.tool_calls ?? []));
    }
    expect(events).toEqual([
      'thread.run.created',
      'thread.run.queued',
      'thread.run.in_progress',
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.run.step.delta',
      'thread.run.step.delta',
      'thread.run.requires_action',
    ]);
    expect(toolDeltas[0]).toMatchObject({
      index: 0,
      type: 'function',
      id: expect.stringMatching(/^call_/),
      function: { name: 'get_weather' },
    });
    const run = await first.finalRun();
    expect(run.status).toBe('requires_action');
    expect(await firstSnapshots.verify(readerOf(client))).toMatchObject({ steps: 1, toolCallDone: 1 });
    const call = run.required_action!.submit_tool_outputs.tool_calls[0];
    const second = client.beta.threads.runs.submitToolOutputsStream(run.id, {
      thread_id: t.id,
      tool_outputs: [{ tool_call_id: call.id, output: 'rainy' }],
    });
    const secondSnapshots = watchSnapshots(second);
    const after: string[] = [];
    for await (const e of second) after.push(e.event);
    expect(await secondSnapshots.verify(readerOf(client))).toMatchObject({ steps: 2, messages: 1 });
    expect(after.filter((e) => e !== 'thread.message.delta')).toEqual([
      'thread.run.step.completed',
      'thread.run.queued',
      'thread.run.in_progress',
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.message.created',
      'thread.message.in_progress',
      'thread.message.completed',
      'thread.run.step.completed',
      'thread.run.completed',
    ]);
    const done = await second.finalRun();
    expect(done.status).toBe('completed');
    expect((await second.finalMessages())[0].content[0]).toMatchObject({ type: 'text', text: { value: 'The weather is rainy.' } });
  });

  it('a cancelled streaming run ends with thread.run.cancelled and the incomplete message', async () => {
    const { client } = env;
    const slow = await client.beta.assistants.create({ model: 'slow-model' });
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'a slow and rather long answer please' }] });
    const stream = client.beta.threads.runs.stream(t.id, { assistant_id: slow.id });
    const snapshots = watchSnapshots(stream);
    const events: string[] = [];
    let cancelled = false;
    for await (const e of stream) {
      events.push(e.event);
      if (e.event === 'thread.message.delta' && !cancelled) {
        cancelled = true;
        await client.beta.threads.runs.cancel(stream.currentRun()!.id, { thread_id: t.id });
      }
    }
    const tail = events.filter((e) => e !== 'thread.message.delta').slice(-4);
    expect(tail).toEqual(['thread.run.cancelling', 'thread.message.incomplete', 'thread.run.step.cancelled', 'thread.run.cancelled']);
    expect((await stream.finalRun()).status).toBe('cancelled');
    expect(await snapshots.verify(readerOf(client))).toMatchObject({ messages: 1, messageDone: 1 });
  });

  it('errors before the stream starts are plain JSON errors (thread lock)', async () => {
    const { client } = env;
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'weather' }] });
    const run = await client.beta.threads.runs.createAndPoll(t.id, { assistant_id: assistantId });
    expect(run.status).toBe('requires_action');
    const res = await fetch(`${env.url}/v1/threads/${t.id}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.s.keys.platform}`, 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: assistantId, stream: true }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toBe(`Thread ${t.id} already has an active run ${run.id}.`);
  });

  it('a failure while streaming arrives as event: error', async () => {
    const { client, url, s } = env;
    const slow = await client.beta.assistants.create({ model: 'slow-model' });
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'a slow answer to be interrupted by deletion' }] });
    const res = await fetch(`${url}/v1/threads/${t.id}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keys.platform}`, 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: slow.id, stream: true }),
    });
    await until(
      () => client.beta.threads.runs.list(t.id),
      (p) => p.data[0]?.status === 'in_progress',
    );
    await client.beta.threads.delete(t.id);
    const all = frames(await res.text());
    const last = all.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data)).toMatchObject({ code: 'server_error', message: expect.stringContaining('was deleted') });
  });
});
