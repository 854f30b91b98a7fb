// The programmatic API under node:test (no test framework to install).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { start } from 'standin/testing';

let standin;
let client;

before(async () => {
  standin = await start();
  client = new OpenAI({ baseURL: `${standin.url}/v1`, apiKey: standin.keys.platform, maxRetries: 0 });
});
after(() => standin?.close());

test('threads live until a reset', async () => {
  const thread = await client.beta.threads.create({ metadata: { case: 'node-test' } });
  assert.equal((await client.beta.threads.retrieve(thread.id)).metadata.case, 'node-test');
  await standin.reset();
  await assert.rejects(client.beta.threads.retrieve(thread.id), OpenAI.NotFoundError);
});

test('a 503 fault, then the request succeeds', async () => {
  const fault = await standin.fault({ path: '/v1/models', status: 503 });
  assert.equal(fault.remaining, 1);
  await assert.rejects(client.models.list(), (err) => err instanceof OpenAI.APIError && err.status === 503);
  const models = await client.models.list();
  assert.ok(models.data.length > 0);
});

test('the control plane: the request log', async () => {
  await client.models.list();
  const log = await standin.admin('GET', '/requests?path=/v1/models&limit=1');
  assert.equal(log.data[0].path, '/v1/models');
});
