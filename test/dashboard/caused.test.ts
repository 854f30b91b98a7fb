import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { startReceiver } from '../webhooks/receiver.js';
import { launchChromium, signedIn, type Browser } from './harness.js';

// What a request caused: a background response finished later by a job, its event and the event's
// delivery to a local receiver, found from the request (GET /admin/v1/events?object_id=) and shown in
// the request's detail on the Requests page, linked to the Webhooks page's delivery.
describe.each(dialects())('requests → what they caused (%s)', (dialect) => {
  let s: TestStandin;
  let url: string;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let client: OpenAI;
  let browser: Browser;
  let endpointId: string;

  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    url = await s.listen();
    rx = await startReceiver();
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
    const ep = await s.req('POST', '/admin/v1/projects/proj_demo/webhook_endpoints', {
      key: 'admin',
      body: { name: 'caused', url: rx.url, event_types: ['response.completed', 'batch.completed'] },
    });
    expect(ep.status, JSON.stringify(ep.body)).toBe(201);
    endpointId = ep.body.id;
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await rx?.close();
    await s?.close();
  });

  it('a background response: its request finds the later event and its delivery', async () => {
    const r = await client.responses.create({ model: 'gpt-4o-mini', input: 'caused', background: true });
    expect(r.status).toBe('queued');
    let events: any[] = [];
    await expect
      .poll(
        async () => {
          events = (await s.req('GET', `/admin/v1/events?object_id=${r.id}`, { key: 'admin' })).body.data;
          return events.find((e) => e.event.type === 'response.completed')?.deliveries[0]?.status;
        },
        { timeout: 15_000 },
      )
      .toBe('succeeded');
    const done = events.find((e) => e.event.type === 'response.completed');
    expect(done).toMatchObject({ object: 'object_event', project_id: 'proj_demo', event: { data: { id: r.id } } });
    expect(done.deliveries[0]).toMatchObject({ endpoint_id: endpointId, event_type: 'response.completed', attempt_count: 1 });
    // The receiver got that very event.
    expect(rx.received.some((x) => JSON.parse(x.body).id === done.event.id)).toBe(true);
    // Other objects have none of it; several ids at once; bad input is a 400.
    expect((await s.req('GET', '/admin/v1/events?object_id=resp_nothing000000', { key: 'admin' })).body.data).toEqual([]);
    const both = await s.req('GET', `/admin/v1/events?object_id=resp_nothing000000&object_id=${r.id}`, { key: 'admin' });
    expect(both.body.data.map((e: any) => e.event.id)).toContain(done.event.id);
    expect((await s.req('GET', '/admin/v1/events', { key: 'admin' })).status).toBe(400);
    expect((await s.req('GET', `/admin/v1/events?object_id=${r.id}&limit=0`, { key: 'admin' })).status).toBe(400);
    expect((await s.req('GET', `/admin/v1/events?object_id=${r.id}`, { key: 'platform' })).status).toBe(401);

    // The request's detail shows the event and the delivery, linked to the Webhooks page.
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.goto(`${url}/dashboard/requests?path=%2Fv1%2Fresponses`);
    await page.locator('table.requests tbody tr').first().getByRole('button').click();
    const detail = page.getByRole('complementary', { name: 'Request detail' });
    const caused = detail.getByRole('list', { name: 'Events' });
    await caused.getByText('response.completed').waitFor();
    await caused.getByText('succeeded').waitFor();
    await caused.getByRole('link', { name: done.deliveries[0].id }).click();
    await page.getByRole('heading', { name: 'Deliveries of caused' }).waitFor();
    await page.getByRole('list', { name: 'Attempts' }).waitFor();
    await context.close();
  });

  it('a batch: its create request finds batch.completed, made later by the batch job', async () => {
    const file = await client.files.create({
      file: new File(
        [
          JSON.stringify({
            custom_id: 'a',
            method: 'POST',
            url: '/v1/chat/completions',
            body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
          }) + '\n',
        ],
        'in.jsonl',
      ),
      purpose: 'batch',
    });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await expect
      .poll(
        async () => {
          const data = (await s.req('GET', `/admin/v1/events?object_id=${batch.id}`, { key: 'admin' })).body.data;
          return data.find((e: any) => e.event.type === 'batch.completed')?.deliveries[0]?.status;
        },
        { timeout: 30_000 },
      )
      .toBe('succeeded');
    // The request that made it names the batch: the detail asks for exactly that id.
    const logged = (await s.req('GET', '/admin/v1/requests?path=/v1/batches&status=200', { key: 'admin' })).body.data[0];
    const detail = (await s.req('GET', `/admin/v1/requests/${logged.id}`, { key: 'admin' })).body;
    expect(detail.response.body.id).toBe(batch.id);
  }, 60_000);

  it('a run: the detail links the run to the Runs page', async () => {
    const run = await client.beta.threads.createAndRun({
      assistant_id: 'asst_demo',
      thread: { messages: [{ role: 'user', content: 'caused run' }] },
    });
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.goto(`${url}/dashboard/requests?path=%2Fv1%2Fthreads%2Fruns`);
    await page.locator('table.requests tbody tr').first().getByRole('button').click();
    const detail = page.getByRole('complementary', { name: 'Request detail' });
    const link = detail.getByRole('link', { name: run.id });
    expect(await link.getAttribute('href')).toBe(`/dashboard/runs?project=proj_demo&thread=${run.thread_id}&run=${run.id}`);
    // Its steps are on the Runs page, where the link leads.
    await link.click();
    await page.getByRole('list', { name: 'Steps' }).getByText('Message').first().waitFor();
    await context.close();
  });
});
