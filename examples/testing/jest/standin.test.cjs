// The programmatic API under jest, as jest runs a project without transforms: CommonJS, `require`.
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { OpenAI } = require('openai');
const { start } = require('standin/testing');

let server;
let client;

beforeAll(async () => {
  server = await start();
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.keys.platform, maxRetries: 0 });
});
afterAll(() => server?.close());
beforeEach(() => server.reset());

test('the platform API answers the openai SDK, and reset empties it', async () => {
  const thread = await client.beta.threads.create({ metadata: { case: 'jest' } });
  expect((await client.beta.threads.retrieve(thread.id)).metadata.case).toBe('jest');
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

test('a snapshot holds the state; restore() goes back to it', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'standin-jest-')), 'state.jsonl.gz');
  const assistant = await client.beta.assistants.create({ model: 'gpt-4o', name: 'Before' });
  await server.snapshot(file);
  await client.beta.assistants.delete(assistant.id);
  await server.restore(file);
  expect((await client.beta.assistants.retrieve(assistant.id)).name).toBe('Before');
});
