import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { startTestStandin, type TestStandin } from '../helpers.js';

let s: TestStandin | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** A listening Standin whose limits allow one request a minute per model, and an SDK client that does not retry. */
async function start() {
  s = await startTestStandin();
  await applyConfig(s.ctx, s.modules, {
    rate_limits: {
      replace_defaults: true,
      ramp: { enabled: false },
      models: {
        'gpt-4o': { tiers: { tier_1: { rpm: 1, tpm: 100_000 } } },
        'gpt-4o-mini': { tiers: { tier_1: { rpm: 100, tpm: 1_500 } } },
        'text-embedding-3-small': { tiers: { tier_1: { rpm: 1 } } },
      },
    },
  });
  const url = await s.listen();
  return new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
}

/** Chat completions and embeddings go through the rate limiter as responses do. */
describe('rate limits of chat completions and embeddings', () => {
  it('chat: headers on the admitted request, then a 429 with retry-after and the headers', async () => {
    const client = await start();
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const { response } = await client.chat.completions.create({ model: 'gpt-4o', messages }).withResponse();
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages, stream: true }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(err.headers.get('retry-after')).toBeTruthy();
    expect(err.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });

  it('chat: a stream carries the headers; at its end the held tokens are reconciled to those used', async () => {
    const client = await start();
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'a streamed reply' }], max_tokens: 1_000 };
    const { data: stream, response } = await client.chat.completions.create({ ...body, stream: true }).withResponse();
    for await (const _ of stream) void _;
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('1500');
    expect(Number(response.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThanOrEqual(500);
    // 1,000 of 1,500 were held at admission; a second 1,000 fits only once the stream gave back what it did not use.
    const again = await client.chat.completions.create(body);
    expect(again.choices[0].finish_reason).toBe('stop');
  });

  it('embeddings: headers, then a 429', async () => {
    const client = await start();
    const { response } = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }).withResponse();
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('1');
    const err = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.headers.get('retry-after')).toBeTruthy();
  });

  it('a 503 fault on the endpoint: the SDK retries and gets the completion', async () => {
    const client = await start();
    const statuses: number[] = [];
    const retrying = new OpenAI({
      apiKey: s!.keys.platform,
      baseURL: client.baseURL,
      maxRetries: 1,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      },
    });
    const fault = await s!.req('POST', '/admin/v1/faults', {
      key: 'admin',
      body: { path: '/v1/chat/completions', status: 503, code: 'server_is_overloaded', count: 1, retry_after: 0 },
    });
    expect(fault.status).toBe(201);
    const c = await retrying.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(c.choices[0].message.content).toBe('You said: hi');
    expect(statuses).toEqual([503, 200]);
  });
});
