// Run under `standin exec -- node --test exec/env.test.mjs`: everything comes from the environment.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';

test('the openai SDK finds Standin through OPENAI_BASE_URL and OPENAI_API_KEY', async () => {
  const client = new OpenAI({ maxRetries: 0 });
  assert.equal(client.baseURL, process.env.OPENAI_BASE_URL);
  const thread = await client.beta.threads.create();
  assert.match(thread.id, /^thread_/);
});

test('the ads API: STANDIN_ADS_URL and STANDIN_ADS_KEY', async () => {
  const res = await fetch(`${process.env.STANDIN_ADS_URL}/ad_groups?campaign_id=cmp_demo_clicks`, {
    headers: { authorization: `Bearer ${process.env.STANDIN_ADS_KEY}` },
  });
  assert.equal(res.status, 200);
});

test('the control plane: STANDIN_URL and STANDIN_ADMIN_KEY', async () => {
  const res = await fetch(`${process.env.STANDIN_URL}/admin/v1/clock`, {
    headers: { authorization: `Bearer ${process.env.STANDIN_ADMIN_KEY}` },
  });
  assert.equal((await res.json()).object, 'clock');
});
