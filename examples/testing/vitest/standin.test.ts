// The programmatic API in vitest: one Standin for this file, a clean state for every test.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { start, type Standin } from 'standin/testing';

let server: Standin;
let client: OpenAI;

beforeAll(async () => {
  server = await start();
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.keys.platform, maxRetries: 0 });
});
afterAll(() => server?.close());
beforeEach(() => server.reset());

test('the platform API answers the openai SDK', async () => {
  const assistant = await client.beta.assistants.create({ model: 'gpt-4o', name: 'Helper' });
  expect(assistant.id).toMatch(/^asst_/);
});

test('reset empties the state, and the keys keep working', async () => {
  const thread = await client.beta.threads.create();
  await server.reset();
  await expect(client.beta.threads.retrieve(thread.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
});

test('a fault makes the next request fail the way the platform does', async () => {
  await server.fault({ path: '/v1/models', status: 429, count: 1 });
  await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  await expect(client.models.list()).resolves.toBeDefined();
});

test('the clock moves on demand', async () => {
  const before = Math.floor(Date.now() / 1000);
  const clock = await server.advanceClock('72h');
  expect(clock.now).toBeGreaterThanOrEqual(before + 72 * 3600);
});

test('the ads API takes the ads key', async () => {
  const res = await fetch(`${server.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks`, {
    headers: { authorization: `Bearer ${server.keys.ads}` },
  });
  expect(res.status).toBe(200);
});

test('a snapshot holds the state; restore() goes back to it', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'standin-example-')), 'state.jsonl.gz');
  const assistant = await client.beta.assistants.create({ model: 'gpt-4o', name: 'Before' });
  await server.snapshot(file);
  await client.beta.assistants.delete(assistant.id);
  await server.restore(file);
  expect((await client.beta.assistants.retrieve(assistant.id)).name).toBe('Before');
});
