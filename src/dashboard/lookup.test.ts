import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { uploadFile } from '../../test/vector-stores/upload.js';

const beta = { 'openai-beta': 'assistants=v2' };

/** `GET /admin/v1/dashboard/lookup?id=`: any id Standin issues → the dashboard page that shows it. */
describe.each(dialects())('dashboard id lookup (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    await s.listen();
  });
  afterAll(() => s?.close());

  const lookup = (id: string) => s.req('GET', `/admin/v1/dashboard/lookup?id=${encodeURIComponent(id)}`, { key: 'admin' });
  const page = async (id: string) => {
    const r = await lookup(id);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ object: 'dashboard.lookup', id });
    return r.body as { kind: string; project_id: string | null; url: string };
  };
  const until = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 25));
  };

  it('opens the page of a request, a run, its thread, message and step', async () => {
    const made = await s.req('POST', '/v1/threads/runs', {
      key: 'platform',
      headers: beta,
      body: { assistant_id: 'asst_demo', thread: { messages: [{ role: 'user', content: 'hello' }] } },
    });
    const { id: runId, thread_id: threadId } = made.body;
    await until(
      async () =>
        (await s.req('GET', `/v1/threads/${threadId}/runs/${runId}`, { key: 'platform', headers: beta })).body.status === 'completed',
    );
    const runs = `/dashboard/runs?project=proj_demo&thread=${threadId}`;
    expect(await page(` ${made.headers['x-request-id']} `.trim())).toEqual({
      object: 'dashboard.lookup',
      id: made.headers['x-request-id'],
      kind: 'request',
      project_id: 'proj_demo',
      url: `/dashboard/requests/${made.headers['x-request-id']}`,
    });
    expect(await page(runId)).toMatchObject({ kind: 'run', project_id: 'proj_demo', url: `${runs}&run=${runId}` });
    expect(await page(threadId)).toMatchObject({ kind: 'thread', url: runs });
    const messages = (await s.req('GET', `/v1/threads/${threadId}/messages`, { key: 'platform', headers: beta })).body.data;
    const user = messages.find((m: { role: string }) => m.role === 'user');
    const answer = messages.find((m: { role: string }) => m.role === 'assistant');
    expect(await page(user.id)).toMatchObject({ kind: 'message', url: runs });
    expect(await page(answer.id)).toMatchObject({ kind: 'message', url: `${runs}&run=${runId}` });
    const steps = (await s.req('GET', `/v1/threads/${threadId}/runs/${runId}/steps`, { key: 'platform', headers: beta })).body.data;
    expect(await page(steps[0].id)).toMatchObject({ kind: 'run_step', url: `${runs}&run=${runId}` });
  });

  it("opens an event (a receiver's webhook-id), its delivery and endpoint; GET /admin/v1/events/{id} answers the event", async () => {
    const base = '/admin/v1/projects/proj_demo/webhook_endpoints';
    const ep = await s.req('POST', base, {
      key: 'admin',
      body: { name: 'lookup', url: 'http://127.0.0.1:9/hook', event_types: ['batch.completed'] },
    });
    expect(ep.status, JSON.stringify(ep.body)).toBe(201);
    const sent = await s.req('POST', `${base}/${ep.body.id}/test`, { key: 'admin', body: { type: 'batch.completed' } });
    expect(sent.status, JSON.stringify(sent.body)).toBeLessThan(300);
    const delivery = (await s.req('GET', `${base}/${ep.body.id}/deliveries`, { key: 'admin' })).body.data[0];
    expect(await page(delivery.event_id)).toMatchObject({
      kind: 'event',
      project_id: 'proj_demo',
      url: `/dashboard/webhooks?project=proj_demo&event=${delivery.event_id}`,
    });
    expect(await page(delivery.id)).toMatchObject({
      kind: 'webhook_delivery',
      url: `/dashboard/webhooks?project=proj_demo&endpoint=${ep.body.id}&delivery=${delivery.id}`,
    });
    expect(await page(ep.body.id)).toMatchObject({
      kind: 'webhook_endpoint',
      url: `/dashboard/webhooks?project=proj_demo&endpoint=${ep.body.id}`,
    });
    const event = await s.req('GET', `/admin/v1/events/${delivery.event_id}`, { key: 'admin' });
    expect(event.body).toMatchObject({
      object: 'object_event',
      project_id: 'proj_demo',
      event: { id: delivery.event_id, type: 'batch.completed' },
    });
    expect(event.body.deliveries.map((d: { id: string }) => d.id)).toEqual([delivery.id]);
    expect((await s.req('GET', '/admin/v1/events/evt_nope00000000', { key: 'admin' })).status).toBe(404);
  });

  it('opens a file, a vector store, a batch, an API key and a token exchange', async () => {
    const file = await uploadFile(s, 'in.jsonl', '{}\n', 'batch');
    expect(file).toMatch(/^file-/);
    expect(await page(file)).toMatchObject({
      kind: 'file',
      project_id: 'proj_demo',
      url: `/dashboard/files?project=proj_demo&file=${file}`,
    });
    const vs = await s.req('POST', '/v1/vector_stores', { key: 'platform', headers: beta, body: { name: 'lookup' } });
    expect(await page(vs.body.id)).toMatchObject({
      kind: 'vector_store',
      url: `/dashboard/files?project=proj_demo&vector_store=${vs.body.id}`,
    });
    const batch = await s.req('POST', '/v1/batches', {
      key: 'platform',
      body: { input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' },
    });
    expect(await page(batch.body.id)).toMatchObject({ kind: 'batch', url: `/dashboard/files?project=proj_demo&batch=${batch.body.id}` });
    const key = (await s.req('GET', '/admin/v1/projects/proj_demo/api_keys', { key: 'admin' })).body.data[0];
    expect(await page(key.id)).toMatchObject({ kind: 'api_key', project_id: 'proj_demo', url: `/dashboard/overview?key=${key.id}` });
    const refused = await s.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=x.y.z',
    });
    expect(refused.statusCode).toBe(400);
    await until(async () => (await s.req('GET', '/admin/v1/workload_identity/exchanges', { key: 'admin' })).body.data.length > 0);
    const exchange = (await s.req('GET', '/admin/v1/workload_identity/exchanges', { key: 'admin' })).body.data[0];
    expect(await page(exchange.id)).toMatchObject({
      kind: 'token_exchange',
      project_id: null,
      url: `/dashboard/identity?exchange=${exchange.id}`,
    });
  });

  it('opens a conversation and a stored response on the Responses page; another id of their kind is not found', async () => {
    const c = await s.req('POST', '/v1/conversations', { key: 'platform', body: {} });
    expect(await page(c.body.id)).toEqual({
      object: 'dashboard.lookup',
      id: c.body.id,
      kind: 'conversation',
      project_id: 'proj_demo',
      url: `/dashboard/responses?project=proj_demo&conversation=${c.body.id}`,
    });
    expect((await lookup('conv_0000000000nothinghere000')).body.error.message).toMatch(/^No conversation found/);
    const r = await s.req('POST', '/v1/responses', { key: 'platform', body: { model: 'gpt-4o-mini', input: 'hello' } });
    expect(await page(r.body.id)).toMatchObject({
      kind: 'response',
      project_id: 'proj_demo',
      url: `/dashboard/responses?project=proj_demo&response=${r.body.id}`,
    });
    // A response created with store: false is nowhere to be found.
    const unstored = await s.req('POST', '/v1/responses', { key: 'platform', body: { model: 'gpt-4o-mini', input: 'hi', store: false } });
    expect((await lookup(unstored.body.id)).body.error.message).toMatch(/^No response found/);
  });

  it('says why an id has no page: not an id, not found, a batch line; 400 for a bad query, 401 without the admin key', async () => {
    const notAnId = await lookup('hello world');
    expect(notAnId.status).toBe(404);
    expect(notAnId.body.error).toMatchObject({ code: 'unknown_prefix', param: 'id', type: 'not_found_error' });
    expect(notAnId.body.error.message).toContain('evt_');
    const gone = await lookup('run_0000000000nothinghere000');
    expect(gone.body.error).toMatchObject({ code: 'not_found' });
    expect(gone.body.error.message).toMatch(/^No run found with id 'run_0000000000nothinghere000'\./);
    expect((await lookup('req_0000000000000000ffffffff')).body.error.message).toContain('newest');
    expect((await lookup('batch_req_0000000000abc')).body.error).toMatchObject({ code: 'no_page' });
    expect((await lookup('x'.repeat(201))).status).toBe(400);
    expect((await s.req('GET', '/admin/v1/dashboard/lookup', { key: 'admin' })).status).toBe(400);
    expect((await s.req('GET', '/admin/v1/dashboard/lookup?id=run_x', { key: 'platform' })).status).toBe(401);
  });
});
