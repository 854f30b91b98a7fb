import OpenAI, { toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { chatLine, fileLines, uploadBatchFile, waitFor } from './fixtures.js';

/**
 * The example of docs/testing.md "Holding a batch": a user's test holds the project's batches and
 * ingestion through the control plane, sees each state stay put across real time, then releases,
 * cancels, or advances the Standin clock past the window.
 */
describe.each(dialects())('held work (%s)', (dialect) => {
  let s: TestStandin;
  let client: OpenAI;
  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await s.req(method, `/admin/v1${path}`, { key: 'admin', body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const holds = (body: unknown) => admin('PUT', '/projects/proj_demo/work_holds', body);
  /** Real time passes (well past the workers' one-second look at the holds) and the batch is unchanged. */
  const staysPut = async (id: string, status: Batch['status']) => {
    const before = await client.batches.retrieve(id);
    expect(before.status).toBe(status);
    await new Promise((r) => setTimeout(r, 2500));
    const after = await client.batches.retrieve(id);
    expect(after.status).toBe(status);
    expect(after.request_counts).toEqual(before.request_counts);
    return after;
  };
  const newBatch = async (n = 2) => {
    const lines = Array.from({ length: n }, (_, i) => chatLine(`req-${i}`, `Hello ${i}`));
    return client.batches.create({
      input_file_id: await uploadBatchFile(client, lines),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
  };

  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${await s.listen()}/v1`, maxRetries: 0 });
  });
  beforeEach(() => admin('DELETE', '/projects/proj_demo/work_holds'));
  afterAll(() => s?.close());

  it('holds a batch in each stage until released, then it completes', async () => {
    await holds({ batch_hold_at: ['validating', 'in_progress', 'finalizing'] });
    const batch = await newBatch();
    await staysPut(batch.id, 'validating');

    await holds({ batch_hold_at: ['in_progress', 'finalizing'] });
    await waitFor(client, batch.id, (b) => b.status === 'in_progress');
    const held = await staysPut(batch.id, 'in_progress');
    expect(held.request_counts).toEqual({ total: 2, completed: 0, failed: 0 });

    await holds({ batch_hold_at: ['finalizing'] });
    await waitFor(client, batch.id, (b) => b.status === 'finalizing');
    const finalizing = await staysPut(batch.id, 'finalizing');
    expect(finalizing.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    expect(finalizing.output_file_id).toBeNull();

    await holds({});
    const done = await waitFor(client, batch.id);
    expect(done.status).toBe('completed');
    expect((await fileLines(client, done.output_file_id!)).map((l) => l.custom_id)).toEqual(['req-0', 'req-1']);
  });

  it('cancels a held batch: cancelling (itself holdable), then cancelled with every line unrun', async () => {
    await holds({ batch_hold_at: ['in_progress', 'cancelling'] });
    const batch = await newBatch(3);
    await waitFor(client, batch.id, (b) => b.status === 'in_progress');
    expect((await client.batches.cancel(batch.id)).status).toBe('cancelling');
    await staysPut(batch.id, 'cancelling');

    await holds({ batch_hold_at: ['in_progress'] });
    const done = await waitFor(client, batch.id);
    expect(done).toMatchObject({ status: 'cancelled', request_counts: { total: 3, completed: 0, failed: 3 } });
    expect(done.cancelled_at).toBeGreaterThanOrEqual(done.cancelling_at!);
    const errors = await fileLines(client, done.error_file_id!);
    expect(errors.map((l) => l.error.code)).toEqual(['batch_cancelled', 'batch_cancelled', 'batch_cancelled']);
  });

  it('expires a held batch when the clock passes its completion window', async () => {
    await holds({ batch_hold_at: ['validating'] });
    const batch = await newBatch();
    await staysPut(batch.id, 'validating');
    await admin('POST', '/clock/advance', { duration: '25h' });
    const done = await waitFor(client, batch.id);
    expect(done.status).toBe('expired');
    expect(done.expired_at).toBeGreaterThanOrEqual(batch.expires_at!);
    const errors = await fileLines(client, done.error_file_id!);
    expect(errors.map((l) => [l.custom_id, l.error.code])).toEqual([
      ['req-0', 'batch_expired'],
      ['req-1', 'batch_expired'],
    ]);
  });

  it('paces a batch on the Standin clock: each stage lasts until the clock is advanced past it', async () => {
    await holds({ batch_pace: { validating: '10m', in_progress: '1h', finalizing: '5m' } });
    const batch = await newBatch();
    await staysPut(batch.id, 'validating');
    await admin('POST', '/clock/advance', { duration: '10m' });
    await waitFor(client, batch.id, (b) => b.status === 'in_progress' && b.request_counts!.completed === 2);
    await staysPut(batch.id, 'in_progress');
    await admin('POST', '/clock/advance', { duration: '1h' });
    await waitFor(client, batch.id, (b) => b.status === 'finalizing');
    await staysPut(batch.id, 'finalizing');
    await admin('POST', '/clock/advance', { duration: '5m' });
    const done = await waitFor(client, batch.id);
    expect(done.status).toBe('completed');
    expect(done.finalizing_at! - done.in_progress_at!).toBeGreaterThanOrEqual(3600);
  });

  it('holds vector store ingestion: the file stays in_progress until released, then completes', async () => {
    await holds({ ingestion: 'hold' });
    const file = await client.files.create({
      file: await toFile(Buffer.from('Held text about otters.'), 'otters.txt'),
      purpose: 'assistants',
    });
    const store = await client.vectorStores.create({ name: 'held' });
    const attached = await client.vectorStores.files.create(store.id, { file_id: file.id });
    expect(attached.status).toBe('in_progress');
    await new Promise((r) => setTimeout(r, 2500));
    expect((await client.vectorStores.files.retrieve(file.id, { vector_store_id: store.id })).status).toBe('in_progress');
    // Looking again whether the hold was released is not an attempt: the file keeps all its attempts.
    const [job] = await s.ctx.store.db
      .selectFrom('jobs')
      .select(['attempts', 'rechecks'])
      .where('kind', '=', 'vector_stores.ingest')
      .where('payload', 'like', `%${file.id}%`)
      .execute();
    expect(job.rechecks).toBeGreaterThanOrEqual(2);
    // At most the claim looking right now is counted, until it says it only rechecked.
    expect(job.attempts - job.rechecks).toBeLessThanOrEqual(1);

    await admin('DELETE', '/projects/proj_demo/work_holds');
    const done = await client.vectorStores.files.poll(store.id, file.id, { pollIntervalMs: 50 });
    expect(done.status).toBe('completed');
  });

  it('refuses a bad hold with 400 and an unknown project with 404', async () => {
    const bad = await s.req('PUT', '/admin/v1/projects/proj_demo/work_holds', { key: 'admin', body: { batch_hold_at: ['sleeping'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('batch_hold_at');
    const pace = await s.req('PUT', '/admin/v1/projects/proj_demo/work_holds', {
      key: 'admin',
      body: { batch_pace: { in_progress: 'soon' } },
    });
    expect(pace.status).toBe(400);
    const missing = await s.req('PUT', '/admin/v1/projects/proj_nope/work_holds', { key: 'admin', body: {} });
    expect(missing.status).toBe(404);
    expect((await s.req('PUT', '/admin/v1/projects/proj_demo/work_holds', { body: {} })).status).toBe(401);
  });
});
