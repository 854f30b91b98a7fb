import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, ChatResult, ModelProviders } from '../../src/models/types.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { startReceiver } from './receiver.js';

/** A tiny provider: echoes, fails on "fail", runs out of tokens on "long", hangs on "slow" until aborted. */
function fakeModels(): ModelProviders {
  return {
    has: (m) => m === 'fake-model',
    list: () => [{ id: 'fake-model', provider: 'fake', owned_by: 'test' }],
    countTokens: (t) => Math.ceil(t.length / 4),
    async complete(req: ChatRequest): Promise<ChatResult> {
      const last = req.messages.at(-1)?.content ?? '';
      const usage = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 };
      if (last === 'fail') throw Object.assign(new Error('upstream exploded'), { code: 'server_error' });
      if (last === 'slow') {
        await new Promise((_, reject) => req.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
      }
      if (last === 'long') return { content: 'cut sho', tool_calls: [], finish_reason: 'length', usage };
      return { content: `echo: ${last} (${req.messages.length} messages)`, tool_calls: [], finish_reason: 'stop', usage };
    },
  };
}

describe.each(dialects())('responses and their webhook events (%s)', (dialect) => {
  let s: TestStandin;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let client: OpenAI;
  let secret: string;

  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    s.ctx.services.models = { ...s.ctx.services.models, ...fakeModels() };
    rx = await startReceiver();
    const url = await s.listen();
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
    const ep = await s.req('POST', '/admin/v1/projects/proj_demo/webhook_endpoints', {
      key: 'admin',
      body: {
        name: 'responses',
        url: rx.url,
        event_types: ['response.completed', 'response.failed', 'response.cancelled', 'response.incomplete'],
      },
    });
    secret = ep.body.secret;
  });
  afterAll(async () => {
    await rx?.close();
    await s?.close();
  });

  const eventFor = async (responseId: string) => {
    for (let i = 0; i < 500; i++) {
      for (const r of rx.received) {
        const e = await client.webhooks.unwrap(r.body, r.headers as Record<string, string>, secret);
        if ((e.data as { id: string }).id === responseId) return e;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no event for ${responseId}`);
  };

  it('answers in the foreground without events', async () => {
    const r = await client.responses.create({ model: 'fake-model', input: 'hi', instructions: 'be brief' });
    expect(r).toMatchObject({ object: 'response', status: 'completed', background: false, model: 'fake-model' });
    expect(r.output_text).toBe('echo: hi (2 messages)');
    expect(r.usage).toMatchObject({ input_tokens: 5, output_tokens: 3, total_tokens: 8 });
    const next = await client.responses.create({ model: 'fake-model', input: 'again', previous_response_id: r.id });
    expect(next.output_text).toBe('echo: again (3 messages)');
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);
    await expect(client.responses.cancel(r.id)).rejects.toMatchObject({ status: 400 });
  });

  it('runs a background response as a job and emits response.completed', async () => {
    const r = await client.responses.create({ model: 'fake-model', input: 'in the back', background: true, metadata: { ticket: 'T-1' } });
    expect(r.status).toBe('queued');
    const event = await eventFor(r.id);
    expect(event).toMatchObject({ type: 'response.completed', object: 'event', data: { id: r.id } });
    const done = await client.responses.retrieve(r.id);
    expect(done).toMatchObject({ status: 'completed', metadata: { ticket: 'T-1' } });
    expect(done.output_text).toBe('echo: in the back (1 messages)');
  });

  it('emits response.failed and response.incomplete', async () => {
    const failed = await client.responses.create({ model: 'fake-model', input: 'fail', background: true });
    const cut = await client.responses.create({ model: 'fake-model', input: 'long', background: true, max_output_tokens: 16 });
    expect((await eventFor(failed.id)).type).toBe('response.failed');
    expect((await eventFor(cut.id)).type).toBe('response.incomplete');
    expect(await client.responses.retrieve(failed.id)).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'upstream exploded' },
    });
    expect(await client.responses.retrieve(cut.id)).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
  });

  it('cancels a running background response: response.cancelled, once', async () => {
    const r = await client.responses.create({ model: 'fake-model', input: 'slow', background: true });
    for (let i = 0; i < 200 && (await client.responses.retrieve(r.id)).status === 'queued'; i++)
      await new Promise((res) => setTimeout(res, 10));
    const cancelled = await client.responses.cancel(r.id);
    expect(cancelled.status).toBe('cancelled');
    expect((await eventFor(r.id)).type).toBe('response.cancelled');
    expect((await client.responses.cancel(r.id)).status).toBe('cancelled');
    await s.ctx.jobs.drain();
    const events = await s.ctx.store.db.selectFrom('events').select('type').where('payload', 'like', `%${r.id}%`).execute();
    expect(events.map((e) => e.type)).toEqual(['response.cancelled']);
    expect((await client.responses.retrieve(r.id)).status).toBe('cancelled');
  });

  it('is rate limited: x-ratelimit headers on every create, and a background admission is released when its job ends', async () => {
    const { data, response } = await client.responses.create({ model: 'fake-model', input: 'count me' }).withResponse();
    expect(data.status).toBe('completed');
    for (const h of [
      'x-ratelimit-limit-requests',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-reset-requests',
      'x-ratelimit-limit-tokens',
      'x-ratelimit-remaining-tokens',
      'x-ratelimit-reset-tokens',
    ]) {
      expect(response.headers.get(h), h).toBeTruthy();
    }
    // A background response is charged its max_output_tokens at admission and reconciled to its real usage (8) when its job ends.
    const bg = await client.responses
      .create({ model: 'fake-model', input: 'settle me', background: true, max_output_tokens: 20_000 })
      .withResponse();
    const before = Number(bg.response.headers.get('x-ratelimit-remaining-tokens'));
    await eventFor(bg.data.id);
    const after = await client.responses.create({ model: 'fake-model', input: 'x', max_output_tokens: 16 }).withResponse();
    expect(Number(after.response.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(before + 15_000);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const bad = await s.req('POST', '/v1/responses', { key: 'platform', body: { model: 'fake-model', input: 'x', colour: 1 } });
    expect(bad.status).toBe(400);
    const model = await s.req('POST', '/v1/responses', { key: 'platform', body: { model: 'nope', input: 'x' } });
    expect(model.body.error).toMatchObject({ param: 'model', code: 'model_not_found' });
    const temp = await s.req('POST', '/v1/responses', { key: 'platform', body: { model: 'fake-model', input: 'x', temperature: 3 } });
    expect(temp.body.error.param).toBe('temperature');
    expect((await s.req('GET', '/v1/responses/resp_missing', { key: 'platform' })).status).toBe(404);
    expect((await s.req('POST', '/v1/responses', { body: { model: 'fake-model', input: 'x' } })).status).toBe(401);
  });
});

describe('responses on the built-in model provider', () => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin();
  });
  afterAll(async () => s?.close());

  it('answers in the foreground and in the background, with the response.completed event in the outbox', async () => {
    const fg = await s.req('POST', '/v1/responses', { key: 'platform', body: { model: 'gpt-4.1-mini', input: 'Say hello' } });
    expect(fg.status).toBe(200);
    expect(fg.body).toMatchObject({
      status: 'completed',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text' }] }],
    });
    expect(fg.body.usage.total_tokens).toBeGreaterThan(0);
    const bg = await s.req('POST', '/v1/responses', {
      key: 'platform',
      body: { model: 'gpt-4.1-mini', input: 'Say hello', background: true },
    });
    expect(bg.body.status).toBe('queued');
    await s.ctx.jobs.drain();
    expect((await s.req('GET', `/v1/responses/${bg.body.id}`, { key: 'platform' })).body.status).toBe('completed');
    const events = await s.ctx.store.db.selectFrom('events').select(['type', 'payload']).where('type', '=', 'response.completed').execute();
    expect(events.map((e) => JSON.parse(e.payload).data.id)).toContain(bg.body.id);
  });
});
