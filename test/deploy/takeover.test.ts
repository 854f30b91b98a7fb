import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstances, type Instance } from '../fleet/instances.js';
import { ensureBuilt } from '../process.js';

/**
 * Issue 29, "a run survives its instance": two instances on one PostgreSQL and one Redis, a burst of work
 * on B — runs polled and streamed (one of them past an answered tool call), background responses (one
 * streamed, followed on A), a batch and an ingestion — and B is killed with SIGKILL while it works.
 * Everything completes through A, each once: one reply per run, its steps once, each response and batch
 * line answered once, the followed stream continuous. Short leases (`--lease-ms`) keep the wait short.
 */
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;
const redisUrl = process.env.STANDIN_TEST_REDIS_URL;

const API_KEY = `sk-proj-takeover-${randomBytes(12).toString('hex')}`;
const MODEL = `takeover-${randomUUID()}`;
const LEASE_MS = 1500;
const REPLY = 'A slow answer, streamed in small pieces, that outlives the instance that started it.';
/** The streamed background response's answer: 45 pieces, 120 ms apart, so it is in flight when B dies. */
const STORY = REPLY.repeat(3);
const AFTER_TOOL = 'It is sunny in Paris, and this answer outlives its instance too.';
const terminal = ['completed', 'failed', 'cancelled', 'expired', 'incomplete'];

async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`${what} did not finish: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.runIf(databaseUrl && redisUrl)('an instance killed during a burst of work (PostgreSQL, Redis)', () => {
  let fleet: Awaited<ReturnType<typeof startInstances>>;
  let a: Instance;
  let b: Instance;
  let dir: string;
  let logOfA = '';
  const sdk = (i: Instance) =>
    new OpenAI({ apiKey: API_KEY, baseURL: `${i.base}/v1`, maxRetries: 0, defaultHeaders: { 'OpenAI-Beta': 'assistants=v2' } });

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'standin-takeover-'));
    const config = {
      models: {
        [MODEL]: {
          provider: 'builtin',
          chunk_chars: 6,
          rules: [
            {
              match: 'weather',
              tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
              after_tool_outputs: AFTER_TOOL,
              delay: '120ms',
            },
            { match: 'slow', reply: REPLY, delay: '120ms' },
            { match: 'held', reply: STORY, delay: '120ms' },
            { match: 'lighthouse', reply: STORY, delay: '120ms' },
          ],
        },
      },
      organizations: [
        {
          id: 'org_takeover',
          name: 'Takeover',
          projects: [{ id: 'proj_takeover', name: 'Takeover', api_keys: [{ name: 'app', value: API_KEY }] }],
        },
      ],
    };
    writeFileSync(join(dir, 'standin.json'), JSON.stringify(config));
    fleet = await startInstances('takeover', {
      redisUrl,
      env: () => ({
        STANDIN_CONFIG: join(dir, 'standin.json'),
        STANDIN_LEASE_MS: String(LEASE_MS),
        STANDIN_SEED: 'false',
        STANDIN_LOG_LEVEL: 'info',
        STANDIN_LOG_REQUESTS: 'false',
      }),
    });
    [a, b] = fleet.instances;
    // A's log (its takeovers at info), shown with TAKEOVER_LOG.
    for (const s of [a.proc.stdout!, a.proc.stderr!]) s.on('data', (d: Buffer) => (logOfA += d.toString()));
  }, 120_000);

  afterAll(async () => {
    if (process.env.TAKEOVER_LOG) console.log(logOfA);
    await fleet?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('every run, background response, batch line and ingestion in flight on the killed instance completes, once', async () => {
    const onA = sdk(a);
    const onB = sdk(b);
    const assistant = await onB.beta.assistants.create({
      model: MODEL,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
    });
    // A run past an answered tool call: its outputs are committed on B before the kill.
    const tool = await onB.beta.threads.createAndRun({
      assistant_id: assistant.id,
      thread: { messages: [{ role: 'user', content: 'weather?' }] },
    });
    const waiting = await until(
      'the tool run',
      () => onB.beta.threads.runs.retrieve(tool.id, { thread_id: tool.thread_id }),
      (r) => r.status === 'requires_action',
    );
    const callId = waiting.required_action!.submit_tool_outputs.tool_calls[0].id;

    // The burst, all on B.
    const polled = await Promise.all(
      Array.from({ length: 8 }, () =>
        onB.beta.threads.createAndRun({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'slow please' }] } }),
      ),
    );
    await onB.beta.threads.runs.submitToolOutputs(tool.id, {
      thread_id: tool.thread_id,
      tool_outputs: [{ tool_call_id: callId, output: 'sunny' }],
    });
    const streamed = Array.from({ length: 4 }, async () => {
      const seen: { runId?: string; threadId?: string; error?: unknown } = {};
      try {
        const stream = await onB.beta.threads.createAndRun({
          assistant_id: assistant.id,
          stream: true,
          thread: { messages: [{ role: 'user', content: 'slow and streamed' }] },
        });
        for await (const e of stream)
          if (e.event === 'thread.run.created') {
            seen.runId = e.data.id;
            seen.threadId = e.data.thread_id;
          }
      } catch (err) {
        seen.error = err; // the stream through B is cut by the kill
      }
      return seen;
    });
    const responses = await Promise.all(
      Array.from({ length: 4 }, (_, i) => onB.responses.create({ model: MODEL, input: `slow response ${i}`, background: true })),
    );
    const lines = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({
        custom_id: `line-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: MODEL, messages: [{ role: 'user', content: `slow line ${i}` }] },
      }),
    ).join('\n');
    const input = await onB.files.create({ file: await toFile(Buffer.from(lines), 'lines.jsonl'), purpose: 'batch' });
    const batch = await onB.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const doc = await onB.files.create({
      file: await toFile(Buffer.from('Standin takes work over. '.repeat(4000)), 'doc.txt'),
      purpose: 'assistants',
    });
    const store = await onB.vectorStores.create({ name: 'takeover', file_ids: [doc.id] });

    // One run and one streamed background response certainly B's and in flight when B dies, whatever the
    // machine's load did to the burst's timing (its work may have ended, or been claimed by A): claimed while
    // A is stopped, each answer 5 s long. The response is followed on A: the follower reads one stream across
    // the takeover. (Started before the burst, the response could end before the kill on a loaded machine.)
    a.proc.kill('SIGSTOP');
    let held: OpenAI.Beta.Threads.Run;
    let streamedId = '';
    try {
      const openedOnB = await onB.responses.create({ model: MODEL, input: 'a lighthouse story', background: true, stream: true });
      for await (const e of openedOnB) {
        if (e.type === 'response.created') streamedId = e.response.id;
        if (e.type === 'response.output_text.delta') break; // the follower on A reads the same events
      }
      held = await onB.beta.threads.createAndRun({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'held' }] } });
      await until(
        'the held run',
        () => onB.beta.threads.runs.retrieve(held.id, { thread_id: held.thread_id }),
        (r) => r.status === 'in_progress',
      );
    } finally {
      a.proc.kill('SIGCONT');
    }
    const followed = (async () => {
      const seen: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const e of await onA.responses.retrieve(streamedId, { stream: true })) seen.push(e);
      return seen;
    })();

    // B dies while it works: no drain, no hand-back.
    await new Promise((r) => setTimeout(r, 400));
    b.proc.kill('SIGKILL');
    const cut = await Promise.all(streamed);

    const runs = [
      ...polled.map((r) => ({ id: r.id, thread: r.thread_id, reply: REPLY })),
      { id: tool.id, thread: tool.thread_id, reply: AFTER_TOOL },
      { id: held.id, thread: held.thread_id, reply: STORY },
      ...cut.filter((s) => s.runId).map((s) => ({ id: s.runId!, thread: s.threadId!, reply: REPLY })),
    ];
    expect(runs).toHaveLength(14);
    for (const r of runs) {
      const done = await until(
        `run ${r.id}`,
        () => onA.beta.threads.runs.retrieve(r.id, { thread_id: r.thread }),
        (x) => terminal.includes(x.status),
      );
      expect(done.status, JSON.stringify(done.last_error)).toBe('completed');
      // One reply, whole; nothing twice.
      const messages = (await onA.beta.threads.messages.list(r.thread, { order: 'asc' })).data;
      const replies = messages.filter((m) => m.role === 'assistant');
      expect(replies.map((m) => [m.status, m.content[0]?.type === 'text' ? m.content[0].text.value : ''])).toEqual([
        ['completed', r.reply],
      ]);
      const steps = (await onA.beta.threads.runs.steps.list(r.id, { thread_id: r.thread, order: 'asc' })).data;
      expect(steps.every((s) => s.status === 'completed')).toBe(true);
      expect(new Set(steps.map((s) => s.id)).size).toBe(steps.length);
      if (r.id === tool.id) {
        // The answered call is not asked again: one tool_calls step with its output, then the reply.
        expect(steps.map((s) => s.type)).toEqual(['tool_calls', 'message_creation']);
        const details = steps[0].step_details as OpenAI.Beta.Threads.Runs.ToolCallsStepDetails;
        expect(details.tool_calls).toHaveLength(1);
        expect(details.tool_calls[0]).toMatchObject({ id: callId, function: { output: 'sunny' } });
      } else expect(steps.map((s) => s.type)).toEqual(['message_creation']);
    }

    for (const r of responses) {
      const done = await until(
        `response ${r.id}`,
        () => onA.responses.retrieve(r.id),
        (x) => terminal.includes(x.status ?? ''),
      );
      expect(done.status).toBe('completed');
      expect(done.output_text).toBeTruthy();
    }

    // The follower's stream is continuous: numbers never repeat or go back, one in_progress, one answer.
    const events = await followed;
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.filter((e) => e.type === 'response.in_progress')).toHaveLength(1);
    const end = events.at(-1)!;
    expect(end.type).toBe('response.completed');
    const streamedDone = await onA.responses.retrieve(streamedId);
    expect(streamedDone.output_text).toBe(STORY);
    if (end.type === 'response.completed') expect(end.response.output).toEqual(streamedDone.output);

    const ended = await until(
      `batch ${batch.id}`,
      () => onA.batches.retrieve(batch.id),
      (x) => terminal.includes(x.status),
    );
    expect(ended.status, JSON.stringify(ended.errors)).toBe('completed');
    expect(ended.request_counts).toMatchObject({ total: 6, completed: 6, failed: 0 });
    const output = (await (await onA.files.content(ended.output_file_id!)).text()).trim().split('\n');
    expect(output.map((l) => JSON.parse(l).custom_id).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `line-${i}`));

    // The kill did cut work in flight: A took runs (and jobs) over, each logged as work.taken_over with its kind and id.
    const takeovers = logOfA
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { event?: string; kind?: string; id?: string })
      .filter((l) => l.event === 'work.taken_over');
    expect(takeovers.filter((t) => t.kind === 'run' && t.id === held.id)).toHaveLength(1);
    // The streamed response was in flight on B and A took it over.
    expect(
      takeovers.filter((t) => (t as { responseId?: string }).responseId === streamedId),
      JSON.stringify(takeovers),
    ).toHaveLength(1);
    expect(takeovers.every((t) => typeof t.id === 'string' && t.id.length > 0)).toBe(true);

    const file = await until(
      'the ingestion',
      () => onA.vectorStores.files.retrieve(doc.id, { vector_store_id: store.id }),
      (x) => x.status !== 'in_progress',
    );
    expect(file.status).toBe('completed');
  }, 120_000);
});
