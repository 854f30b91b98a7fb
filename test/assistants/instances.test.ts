import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../../src/core/settings.js';
import { createStandin, type Standin } from '../../src/server/app.js';
import { applyConfig } from '../../src/admin/config-file.js';
import { startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';
import { TEST_MODELS, until } from './setup.js';
import { readerOf, watchSnapshots } from './snapshots.js';

/**
 * Two instances on one PostgreSQL: A serves the requests but runs no workers, B only executes runs. A
 * stream opened on A follows the run B executes; a cancel sent to A stops B's execution; runs started
 * on both with workers on both are each executed once.
 */
describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('several instances on one PostgreSQL', () => {
  let a: TestStandin;
  let b: Standin;
  let client: OpenAI;
  let clientB: OpenAI;
  beforeAll(async () => {
    a = await startTestStandin({ dialect: 'postgres', settings: { workers: false } });
    await applyConfig(a.ctx, a.modules, { models: TEST_MODELS });
    const { settings } = readSettings([], {});
    Object.assign(settings, {
      data: a.ctx.settings.data,
      databaseUrl: a.ctx.settings.databaseUrl,
      port: 0,
      logLevel: 'silent',
      adminKey: TEST_KEYS.admin,
      workers: true,
    });
    b = await createStandin(settings, { logger: false });
    await applyConfig(b.ctx, b.modules, { models: TEST_MODELS });
    const urlA = await a.listen();
    const urlB = await b.listen();
    client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${urlA}/v1`, maxRetries: 0 });
    clientB = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${urlB}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a stream on A follows the run executed by B', async () => {
    const assistant = await client.beta.assistants.create({ model: 'slow-model' });
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'from another instance' }] });
    const stream = client.beta.threads.runs.stream(t.id, { assistant_id: assistant.id });
    const snapshots = watchSnapshots(stream);
    const events: string[] = [];
    for await (const e of stream) events.push(e.event);
    expect(await snapshots.verify(readerOf(client))).toMatchObject({ messages: 1, textDone: 1 });
    expect(events[0]).toBe('thread.run.created');
    expect(events.filter((e) => e === 'thread.message.delta').length).toBeGreaterThan(1);
    expect(events.at(-1)).toBe('thread.run.completed');
    expect((await stream.finalRun()).status).toBe('completed');
  });

  it('a cancel sent to A stops the execution on B', async () => {
    const assistant = await client.beta.assistants.create({ model: 'slow-model' });
    const t = await client.beta.threads.create({ messages: [{ role: 'user', content: 'a long reply to cancel from the other instance' }] });
    const run = await client.beta.threads.runs.create(t.id, { assistant_id: assistant.id });
    await until(
      () => client.beta.threads.messages.list(t.id, { run_id: run.id }),
      (p) => p.data.length === 1,
    );
    await client.beta.threads.runs.cancel(run.id, { thread_id: t.id });
    const ended = await client.beta.threads.runs.poll(run.id, { thread_id: t.id }, { pollIntervalMs: 20 });
    expect(ended.status).toBe('cancelled');
    const [m] = (await client.beta.threads.messages.list(t.id, { run_id: run.id })).data;
    expect(m.incomplete_details).toEqual({ reason: 'run_cancelled' });
  });

  it('with workers on both, every run is executed exactly once', async () => {
    a.ctx.jobs.start();
    const assistant = await client.beta.assistants.create({ model: 'gpt-4o' });
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? client : clientB).beta.threads.createAndRun({
          assistant_id: assistant.id,
          thread: { messages: [{ role: 'user', content: `n${i}` }] },
        }),
      ),
    );
    for (const r of runs) {
      const done = await client.beta.threads.runs.poll(r.id, { thread_id: r.thread_id }, { pollIntervalMs: 20 });
      expect(done.status).toBe('completed');
      const messages = await client.beta.threads.messages.list(r.thread_id, { run_id: r.id });
      expect(messages.data).toHaveLength(1);
      const starts = await a.ctx.store.db
        .selectFrom('run_events')
        .select('seq')
        .where('run_id', '=', r.id)
        .where('event', '=', 'thread.run.in_progress')
        .execute();
      expect(starts).toHaveLength(1);
    }
  });
});
