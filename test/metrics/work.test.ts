import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers.js';
import { startEnv, weatherTool, type Env } from '../assistants/setup.js';
import { startReceiver } from '../webhooks/receiver.js';
import { parse, value, type Sample } from './scrape.js';

const P = '/admin/v1/projects/proj_demo';

/** The work metrics, read by scraping after real work: webhook attempts and deliveries, run transitions, ingestion. */
describe.each(dialects())('work metrics (%s)', (dialect) => {
  let env: Env;
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
  beforeAll(async () => {
    env = await startEnv(dialect);
  });
  afterAll(async () => {
    await env?.s.close();
    for (const rx of receivers) await rx.close();
  });

  const scrape = async (): Promise<Sample[]> => {
    const res = await fetch(`${env.url}/admin/v1/metrics`, { headers: { authorization: `Bearer ${env.s.keys.admin}` } });
    expect(res.status).toBe(200);
    return parse(await res.text());
  };

  it('counts runs entering each status', async () => {
    const { client } = env;
    const before = await scrape();
    const assistant = await client.beta.assistants.create({ model: 'gpt-4o', tools: [weatherTool] });
    const plain = await client.beta.threads.createAndRunPoll({
      assistant_id: assistant.id,
      thread: { messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(plain.status).toBe('completed');
    const asking = await client.beta.threads.createAndRunPoll({
      assistant_id: assistant.id,
      thread: { messages: [{ role: 'user', content: 'weather please' }] },
    });
    expect(asking.status).toBe('requires_action');
    const call = asking.required_action!.submit_tool_outputs.tool_calls[0];
    const done = await client.beta.threads.runs.submitToolOutputsAndPoll(asking.id, {
      thread_id: asking.thread_id,
      tool_outputs: [{ tool_call_id: call.id, output: 'sunny' }],
    });
    expect(done.status).toBe('completed');

    const after = await scrape();
    const moved = (status: string) =>
      (value(after, 'standin_run_transitions_total', { status }) ?? 0) - (value(before, 'standin_run_transitions_total', { status }) ?? 0);
    // Two runs created (queued), one queued again after its tool outputs: three starts, one wait, two ends.
    expect(['queued', 'in_progress', 'requires_action', 'completed', 'failed'].map(moved)).toEqual([3, 3, 1, 2, 0]);
  });

  it('counts webhook attempts by outcome and the deliveries that ended', async () => {
    const ok = await startReceiver();
    const refusing = await startReceiver(() => ({ status: 503, body: 'down' }));
    receivers.push(ok, refusing);
    for (const [name, url] of [
      ['ok', ok.url],
      ['refusing', refusing.url],
    ]) {
      const ep = await env.s.req('POST', `${P}/webhook_endpoints`, { key: 'admin', body: { name, url, event_types: ['batch.completed'] } });
      expect(ep.status).toBe(201);
    }
    expect((await env.s.req('POST', `${P}/events`, { key: 'admin', body: { type: 'batch.completed' } })).status).toBe(201);
    await expect.poll(() => ok.received.length + refusing.received.length, { timeout: 10_000 }).toBe(2);
    // The attempts are recorded (and counted) just after the receivers answered.
    let m: Sample[] = [];
    await expect
      .poll(async () => value((m = await scrape()), 'standin_webhook_attempt_duration_seconds_count', { outcome: 'http_error' }), {
        timeout: 10_000,
      })
      .toBe(1);
    expect(value(m, 'standin_webhook_attempt_duration_seconds_count', { outcome: 'ok' })).toBe(1);
    expect(value(m, 'standin_webhook_attempt_duration_seconds_bucket', { outcome: 'ok', le: '+Inf' })).toBe(1);
    expect(value(m, 'standin_webhook_deliveries_total', { status: 'succeeded' })).toBe(1);
    // The refused delivery is pending its retry, not ended.
    expect(value(m, 'standin_webhook_deliveries_total', { status: 'failed' })).toBeUndefined();
  });

  it('counts ingestion attempts by outcome, with their time', async () => {
    const { client } = env;
    const store = await client.vectorStores.create({ name: 'metrics' });
    const good = await client.files.create({
      file: await toFile(Buffer.from('Copper mines closed in 1911.'), 'mines.txt'),
      purpose: 'assistants',
    });
    const bad = await client.files.create({ file: await toFile(Buffer.from([0, 159, 146, 150, 0, 1]), 'blob.bin'), purpose: 'assistants' });
    const a = await client.vectorStores.files.createAndPoll(store.id, { file_id: good.id }, { pollIntervalMs: 50 });
    const b = await client.vectorStores.files.createAndPoll(store.id, { file_id: bad.id }, { pollIntervalMs: 50 });
    expect([a.status, b.status]).toEqual(['completed', 'failed']);

    const m = await scrape();
    expect(value(m, 'standin_ingestion_duration_seconds_count', { outcome: 'completed' })).toBe(1);
    expect(value(m, 'standin_ingestion_duration_seconds_count', { outcome: 'failed' })).toBe(1);
    expect(value(m, 'standin_ingestion_duration_seconds_sum', { outcome: 'completed' })).toBeGreaterThan(0);
  });
});
