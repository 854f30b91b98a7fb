import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelProviders } from '../../src/models/types.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { startReceiver } from '../webhooks/receiver.js';
import { chatLine, fileLines, uploadBatchFile, verifiedEvent, waitFor } from './fixtures.js';

/** `/v1/batches` end to end through the openai SDK, with the batch.* events verified by standardwebhooks. */
describe.each(dialects())('batches (%s)', (dialect) => {
  let s: TestStandin;
  let client: OpenAI;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let secret: string;
  // Lines whose message is "hold" wait for this gate (a model call in flight the test controls).
  let gate: { promise: Promise<void>; open: () => void };
  const newGate = () => {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    gate = { promise, open };
  };

  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    newGate();
    const models = s.ctx.services.models;
    const holding: ModelProviders = {
      ...models,
      async complete(req, onChunk) {
        if (req.messages.at(-1)?.content === 'hold') await gate.promise;
        return models.complete(req, onChunk);
      },
    };
    s.ctx.services.models = holding as typeof models;
    rx = await startReceiver();
    const url = await s.listen();
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
    const ep = await s.req('POST', '/admin/v1/projects/proj_demo/webhook_endpoints', {
      key: 'admin',
      body: { name: 'batches', url: rx.url, event_types: ['batch.completed', 'batch.failed', 'batch.expired', 'batch.cancelled'] },
    });
    expect(ep.status).toBe(201);
    secret = ep.body.secret;
  });
  afterAll(async () => {
    gate?.open();
    await rx?.close();
    await s?.close();
  });

  it('runs good and bad lines to completion: output and error files matched by custom_id, batch.completed', async () => {
    const lines = [
      chatLine('good-1', 'Hello there'),
      chatLine('bad-unknown', 'x', { not_a_parameter: true }),
      chatLine('good-2', 'Say something else'),
      JSON.stringify({ custom_id: 'bad-no-messages', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini' } }),
      chatLine('good-3', 'A third one', { max_completion_tokens: 5 }),
    ];
    const input = await uploadBatchFile(client, lines);
    const created = await client.batches.create({
      input_file_id: input,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'nightly' },
    });
    expect(created).toMatchObject({ object: 'batch', status: 'validating', model: 'gpt-4o-mini', metadata: { job: 'nightly' } });
    expect(created.expires_at).toBe(created.created_at + 86_400);

    const done = await waitFor(client, created.id);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 5, completed: 3, failed: 2 });
    for (const t of ['in_progress_at', 'finalizing_at', 'completed_at'] as const)
      expect(done[t]).toBeGreaterThanOrEqual(created.created_at);
    expect(done.usage!.input_tokens).toBeGreaterThan(0);
    expect(done.usage!.output_tokens).toBeGreaterThan(0);

    const output = await fileLines(client, done.output_file_id!);
    expect(output.map((l) => l.custom_id)).toEqual(['good-1', 'good-2', 'good-3']);
    for (const l of output) {
      expect(l.id).toMatch(/^batch_req_/);
      expect(l.error).toBeNull();
      expect(l.response.status_code).toBe(200);
      expect(l.response.request_id).toMatch(/^req_/);
      expect(l.response.body).toMatchObject({ object: 'chat.completion', model: 'gpt-4o-mini' });
    }
    // The same body sent directly answers the same text (the built-in model is deterministic).
    const direct = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] });
    expect(output[0].response.body.choices[0].message.content).toBe(direct.choices[0].message.content);

    const errors = await fileLines(client, done.error_file_id!);
    expect(errors.map((l) => l.custom_id)).toEqual(['bad-unknown', 'bad-no-messages']);
    expect(errors[0].response).toMatchObject({
      status_code: 400,
      body: { error: { type: 'invalid_request_error', code: 'unknown_parameter', param: 'not_a_parameter' } },
    });
    expect(errors[1].response.body.error).toMatchObject({ code: 'missing_required_parameter', param: 'messages' });

    const files = await client.files.retrieve(done.output_file_id!);
    expect(files).toMatchObject({ purpose: 'batch_output', filename: `${done.id}_output.jsonl` });
    expect(await verifiedEvent(rx, secret, done.id)).toMatchObject({ type: 'batch.completed', data: { id: done.id } });
    const listed = await client.batches.list({ limit: 100 });
    expect(listed.data.map((b) => b.id)).toContain(done.id);
  });

  it('refuses at create what the platform refuses at create, and fails an invalid file with errors', async () => {
    await expect(
      client.batches.create({ input_file_id: 'file-nope', endpoint: '/v1/chat/completions', completion_window: '24h' }),
    ).rejects.toMatchObject({ status: 400, param: 'input_file_id' });
    const notBatch = await client.files.create({ file: new File(['x'], 'a.txt'), purpose: 'assistants' });
    await expect(
      client.batches.create({ input_file_id: notBatch.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    ).rejects.toMatchObject({ status: 400, param: 'input_file_id' });
    const input = await uploadBatchFile(client, [chatLine('a', 'hi')]);
    await expect(
      client.batches.create({ input_file_id: input, endpoint: '/v1/completions', completion_window: '24h' }),
    ).rejects.toMatchObject({
      status: 400,
      param: 'endpoint',
      code: 'unsupported_value',
    });

    const bad = await uploadBatchFile(client, [
      chatLine('a', 'hi'),
      chatLine('a', 'again'),
      '{oops',
      chatLine('c', 'x').replace('/v1/chat/completions', '/v1/embeddings'),
    ]);
    const failed = await client.batches.create({ input_file_id: bad, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(failed.status).toBe('failed');
    expect(failed.failed_at).toBeGreaterThan(0);
    expect(failed.errors!.data!.map((e) => [e.code, e.line])).toEqual([
      ['duplicate_custom_id', 2],
      ['invalid_json_line', 3],
      ['invalid_url', 4],
    ]);
    expect(await verifiedEvent(rx, secret, failed.id)).toMatchObject({ type: 'batch.failed' });
  });

  it('cancels: the lines in flight finish, the rest never run, partial output is kept, batch.cancelled', async () => {
    newGate();
    const lines = Array.from({ length: 40 }, (_, i) => chatLine(`c-${i}`, i === 5 ? 'hold' : `line ${i}`));
    const input = await uploadBatchFile(client, lines);
    const b = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitFor(client, b.id, (x) => x.status === 'in_progress');
    const cancelling = await client.batches.cancel(b.id);
    expect(cancelling.status).toBe('cancelling');
    expect(cancelling.cancelling_at).toBeGreaterThan(0);
    expect((await client.batches.cancel(b.id)).status).toBe('cancelling');
    gate.open();
    const done = await waitFor(client, b.id);
    expect(done.status).toBe('cancelled');
    expect(done.cancelled_at).toBeGreaterThan(0);
    // The first group of 32 was in flight when the cancel came: it finished; the other 8 never ran.
    const output = await fileLines(client, done.output_file_id!);
    expect(output.map((l) => l.custom_id)).toEqual(Array.from({ length: 32 }, (_, i) => `c-${i}`));
    const errors = await fileLines(client, done.error_file_id!);
    expect(errors.map((l) => [l.custom_id, l.error.code, l.response])).toEqual(
      Array.from({ length: 8 }, (_, i) => [`c-${32 + i}`, 'batch_cancelled', null]),
    );
    expect(done.request_counts).toEqual({ total: 40, completed: 32, failed: 8 });
    expect(await verifiedEvent(rx, secret, b.id)).toMatchObject({ type: 'batch.cancelled' });
    await expect(client.batches.cancel(b.id)).rejects.toMatchObject({ status: 409 });
  });

  it('expires after 24 hours of the Standin clock with partial results, batch.expired', async () => {
    newGate();
    // The first group of 32 runs; the second waits on a held line when the window ends.
    const lines = Array.from({ length: 40 }, (_, i) => chatLine(`e-${i}`, i === 32 ? 'hold' : `line ${i}`));
    const input = await uploadBatchFile(client, lines);
    const b = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitFor(client, b.id, (x) => x.request_counts?.completed === 32);
    expect((await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { seconds: 86_401 } })).status).toBe(200);
    const done = await waitFor(client, b.id);
    gate.open();
    expect(done.status).toBe('expired');
    expect(done.expired_at).toBeGreaterThanOrEqual(done.expires_at!);
    expect((await fileLines(client, done.output_file_id!)).map((l) => l.custom_id)).toEqual(Array.from({ length: 32 }, (_, i) => `e-${i}`));
    // The lines in flight when the window ended did not finish within it: they are expired too.
    const errors = await fileLines(client, done.error_file_id!);
    expect(errors.map((l) => [l.custom_id, l.response])).toEqual(Array.from({ length: 8 }, (_, i) => [`e-${32 + i}`, null]));
    expect(errors[0].error).toEqual({
      code: 'batch_expired',
      message: 'This request could not be executed before the completion window expired.',
    });
    expect(done.request_counts).toEqual({ total: 40, completed: 32, failed: 8 });
    expect(await verifiedEvent(rx, secret, b.id)).toMatchObject({ type: 'batch.expired' });
  });

  it('holds the input tokens of pending batches against the batch queue limit (rule 4), freed when a batch ends', async () => {
    newGate();
    const rl = s.ctx.services.ratelimit;
    const config = rl.config();
    rl.setConfig({ ...config, organizations: { ...config.organizations, org_demo: { models: { '*': { batch_queue_tokens: 100 } } } } });
    try {
      // ~60 tokens each: one fits, two do not.
      const content = 'hold ' + 'x'.repeat(150);
      const first = await uploadBatchFile(client, [chatLine('q-1', 'hold'), chatLine('q-2', content)]);
      const a = await client.batches.create({ input_file_id: first, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const second = await uploadBatchFile(client, [chatLine('r-1', content)]);
      const refused = await client.batches
        .create({ input_file_id: second, endpoint: '/v1/chat/completions', completion_window: '24h' })
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 429, code: 'token_limit_exceeded' });
      expect((refused as Error).message).toContain(
        'Enqueued token limit reached for gpt-4o-mini in organization org_demo. Limit: 100 enqueued tokens',
      );
      gate.open();
      expect((await waitFor(client, a.id)).status).toBe('completed');
      const b = await client.batches.create({ input_file_id: second, endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect((await waitFor(client, b.id)).status).toBe('completed');
    } finally {
      rl.setConfig(config);
    }
  });
});
