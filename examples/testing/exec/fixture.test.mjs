// Run under `standin exec --import FILE -- node --test exec/fixture.test.mjs`, FILE made by make-fixture.mjs:
// the tests start from that world, with this run's keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';

const client = new OpenAI({ maxRetries: 0 });
const byName = async (name) => (await client.beta.assistants.list({ limit: 100 })).data.find((a) => a.name === name);

test("the fixture's assistant is there, and this run's OPENAI_API_KEY reaches it", async () => {
  const assistant = await byName('Support bot');
  assert.equal(assistant?.metadata.fixture, 'support');
});

test('a reset goes back to the fixture, not to an empty world', async () => {
  await client.beta.assistants.create({ model: 'gpt-4o', name: 'Made by this test' });
  const res = await fetch(`${process.env.STANDIN_URL}/admin/v1/reset`, {
    method: 'POST',
    headers: { authorization: `Bearer ${process.env.STANDIN_ADMIN_KEY}` },
  });
  assert.equal(res.status, 200);
  assert.equal(await byName('Made by this test'), undefined);
  assert.ok(await byName('Support bot'));
});
