import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadFile } from '../../test/vector-stores/upload.js';
import { dialects, startTestStandin, TEST_KEYS, type TestStandin } from '../../test/helpers.js';
import { resolveModel } from '../ratelimit/catalog.js';
import { triggerEvent } from '../webhooks/trigger.js';

const line = (id: string) =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: id }] },
  });

/** `/v1/batches` in process: happy path with the queue drained by hand, errors, project scoping and the scope, event samples. */
describe.each(dialects())('batches routes (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  const upload = (text: string, purpose = 'batch') => uploadFile(s, 'in.jsonl', text, purpose);
  const create = (body: unknown, key = 'platform') => s.req('POST', '/v1/batches', { key, body });

  it('creates, runs on the queue, lists and retrieves', async () => {
    const file = await upload(`${line('a')}\n${line('b')}\n`);
    const created = await create({ input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      status: 'validating',
      request_counts: { total: 0, completed: 0, failed: 0 },
      errors: null,
      metadata: null,
    });
    await s.ctx.jobs.drain();
    const got = await s.req('GET', `/v1/batches/${created.body.id}`, { key: 'platform' });
    expect(got.body).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 }, error_file_id: null });
    const content = await s.app.inject({
      method: 'GET',
      url: `/v1/files/${got.body.output_file_id}/content`,
      headers: { authorization: `Bearer ${TEST_KEYS.platform}` },
    });
    expect(
      content.body
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).custom_id),
    ).toEqual(['a', 'b']);
    const list = await s.req('GET', '/v1/batches?limit=1', { key: 'platform' });
    expect(list.body).toMatchObject({ object: 'list', first_id: created.body.id, has_more: expect.any(Boolean) });
    expect((await s.req('GET', '/v1/batches?limit=101', { key: 'platform' })).body.error.param).toBe('limit');
  });

  it('adds the tokens of its lines to the monthly spend (rule 7), at the model price, once', async () => {
    const limiter = s.ctx.services.ratelimit;
    const before = await limiter.spend('org_demo');
    const file = await upload([1, 2, 3].map((n) => line(`spend ${'word '.repeat(n * 20)}`)).join('\n'));
    const created = await create({ input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await s.ctx.jobs.drain();
    const batch = (await s.req('GET', `/v1/batches/${created.body.id}`, { key: 'platform' })).body;
    expect(batch).toMatchObject({ status: 'completed', request_counts: { completed: 3 } });
    const { input_tokens, output_tokens } = batch.usage;
    expect(input_tokens).toBeGreaterThan(60);
    expect(output_tokens).toBeGreaterThan(0);
    const price = resolveModel(limiter.config(), 'gpt-4o-mini').entry.price!;
    const cost = (input_tokens * price.input_per_million! + output_tokens * price.output_per_million!) / 1e6;
    expect(cost).toBeGreaterThan(0);
    expect((await limiter.spend('org_demo')) - before).toBeCloseTo(cost, 12);
    // The same bodies sent one by one cost the same.
    const direct = await limiter.spend('org_demo');
    for (const n of [1, 2, 3]) {
      const r = await s.req('POST', '/v1/chat/completions', {
        key: 'platform',
        body: JSON.parse(line(`spend ${'word '.repeat(n * 20)}`)).body,
      });
      expect(r.status).toBe(200);
    }
    expect((await limiter.spend('org_demo')) - direct).toBeCloseTo(cost, 12);
    // A batch that has ended charges nothing more when its job runs again.
    const after = await limiter.spend('org_demo');
    await s.ctx.jobs.drain();
    expect(await limiter.spend('org_demo')).toBe(after);
  });

  it('refuses a new batch with 429 insufficient_quota once the monthly usage limit is reached; the SDK does not retry', async () => {
    const file = await upload(`${line('quota')}\n`);
    const limit = async (usd: number) =>
      expect(
        (
          await s.req('POST', '/admin/v1/config', {
            key: 'admin',
            body: { rate_limits: { organizations: { org_demo: { usage_limit_usd: usd } } } },
          })
        ).status,
      ).toBe(200);
    // The spend so far (other tests' requests and batches, or nothing) is at the limit.
    await limit(await s.ctx.services.ratelimit.spend('org_demo'));
    const statuses: number[] = [];
    const client = new OpenAI({
      apiKey: TEST_KEYS.platform,
      baseURL: `${await s.listen()}/v1`,
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        statuses.push(res.status);
        return res;
      },
    });
    const err: any = await client.batches
      .create({ input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect([err.type, err.code]).toEqual(['insufficient_quota', 'insufficient_quota']);
    expect(statuses).toEqual([429]);
    expect(
      (await s.req('GET', '/v1/batches?limit=100', { key: 'platform' })).body.data.map((b: { input_file_id: string }) => b.input_file_id),
    ).not.toContain(file);
    // Below the limit again: the same request makes the batch.
    await limit(1_000_000);
    const made = await client.batches.create({ input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(made.status).toBe('validating');
    await s.ctx.jobs.drain();
  });

  it('refuses bad bodies with 400 naming the member', async () => {
    const file = await upload(`${line('a')}\n`);
    const ok = { input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' };
    const cases: [unknown, string][] = [
      [{ ...ok, completion_window: '48h' }, 'completion_window'],
      [{ ...ok, endpoint: '/v1/nothing' }, 'endpoint'],
      [{ ...ok, endpoint: '/v1/moderations' }, 'endpoint'],
      [{ ...ok, extra: 1 }, 'extra'],
      [{ ...ok, metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
      [{ ...ok, output_expires_after: { anchor: 'created_at', seconds: 60 } }, 'output_expires_after.seconds'],
      [{ ...ok, input_file_id: await upload(`${line('a')}\n`, 'assistants') }, 'input_file_id'],
    ];
    for (const [body, param] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.param).toBe(param);
    }
    expect((await s.req('POST', '/v1/batches/batch_nope/cancel', { key: 'platform' })).status).toBe(404);
    expect((await s.req('GET', '/v1/batches/batch_nope', { key: 'platform' })).status).toBe(404);
  });

  it('keeps projects apart and needs the batch scope', async () => {
    const file = await upload(`${line('a')}\n`);
    const mine = await create({ input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await s.req('GET', '/v1/batches')).status).toBe(401);
    await s.req('POST', '/admin/v1/projects/proj_demo/api_keys', {
      key: 'admin',
      body: { name: 'read-only', value: 'sk-proj-batches-read-only-0000000000', permissions: { batch: 'read' } },
    });
    expect((await s.req('GET', `/v1/batches/${mine.body.id}`, { key: 'sk-proj-batches-read-only-0000000000' })).status).toBe(200);
    expect(
      (
        await create(
          { input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' },
          'sk-proj-batches-read-only-0000000000',
        )
      ).status,
    ).toBe(403);
    const other = await s.req('POST', '/admin/v1/organizations/org_demo/projects', { key: 'admin', body: { name: 'other-batches' } });
    await s.req('POST', `/admin/v1/projects/${other.body.id}/api_keys`, {
      key: 'admin',
      body: { name: 'k', value: 'sk-proj-other-batches-key-0000000000' },
    });
    const otherKey = 'sk-proj-other-batches-key-0000000000';
    expect((await s.req('GET', `/v1/batches/${mine.body.id}`, { key: otherKey })).status).toBe(404);
    expect((await s.req('POST', `/v1/batches/${mine.body.id}/cancel`, { key: otherKey })).status).toBe(404);
    expect((await s.req('GET', '/v1/batches', { key: otherKey })).body.data).toEqual([]);
    // The other project cannot run a batch of this project's file.
    expect((await create({ input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' }, otherKey)).status).toBe(400);
    await s.ctx.jobs.drain();
  });

  it('gives triggered batch.* events a real batch', async () => {
    for (const status of ['completed', 'failed', 'expired', 'cancelled']) {
      const e = await triggerEvent(s.ctx, 'proj_demo', `batch.${status}`);
      const got = await s.req('GET', `/v1/batches/${(e.data as { id: string }).id}`, { key: 'platform' });
      expect(got.status).toBe(200);
      expect(got.body.status).toBe(status);
    }
  });
});
