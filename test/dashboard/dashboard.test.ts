import OpenAI from 'openai';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { startReceiver } from '../webhooks/receiver.js';
import { uploadFile } from '../vector-stores/upload.js';
import { join } from 'node:path';
import { bannerLink, launchChromium, screenshots, signedIn, SHOTS, type Browser } from './harness.js';

// The dashboard against a running Standin with real traffic: the openai SDK, webhooks to a local
// receiver, a 429 burst. Every page is driven as a user would, and photographed at 1280 and 390 px,
// light and dark, under test-output/dashboard/.
describe('dashboard', () => {
  let s: TestStandin;
  let url: string;
  let browser: Browser;
  let client: OpenAI;
  let rx: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    s = await startTestStandin({ settings: { workers: true } });
    url = await s.listen();
    rx = await startReceiver((n) => (n === 1 ? { status: 500, body: 'first try fails' } : { status: 200, body: 'ok' }));
    browser = await launchChromium();
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await rx?.close();
    await s?.close();
  });

  it('signs in once with the banner link; the link is spent; the admin key signs in too', async () => {
    const link = bannerLink(s.ctx.banner);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    // The session's binding came in the fragment; the page keeps it and takes it out of the address bar.
    expect(page.url()).toBe(`${url}/dashboard`);
    expect(await page.evaluate(() => localStorage.getItem('standin.dashboard.binding'))).toMatch(/^[\w-]{43}$/);
    const cookie = (await context.cookies()).find((c) => c.name === `standin_session_${new URL(url).port}`)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    // The page cannot read the cookie.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await context.close();

    const again = await browser.newPage();
    await again.goto(link);
    await again.getByText('That sign-in link has been used or has expired').waitFor();
    await again.getByLabel('Admin key').fill('sk-admin-wrong-key-000000000000000000');
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again.getByRole('alert').filter({ hasText: 'not the admin key' }).waitFor();
    await again.getByLabel('Admin key').fill(s.keys.admin);
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again.getByRole('heading', { name: 'Overview' }).waitFor();
    // Signing out ends the session: the control plane answers 401 to the same browser.
    await again.getByRole('button', { name: 'Sign out' }).click();
    await again.getByLabel('Admin key').waitFor();
    expect(await again.evaluate(async () => (await fetch('/admin/v1/clock')).status)).toBe(401);
    expect(await again.evaluate(() => localStorage.getItem('standin.dashboard.binding'))).toBeNull();
    await again.close();
  });

  it('two Standins on one host keep their own sessions in one browser', async () => {
    const other = await startTestStandin();
    try {
      const otherUrl = await other.listen();
      const context = await browser.newContext();
      const { page: first } = await signedIn(browser, url, s.keys.admin, { context });
      await signedIn(browser, otherUrl, other.keys.admin, { context });
      // Each instance's cookie under its own port's name: signing in to the second left the first one's.
      expect((await context.cookies()).map((c) => c.name).sort()).toEqual(
        [`standin_session_${new URL(url).port}`, `standin_session_${new URL(otherUrl).port}`].sort(),
      );
      await first.reload();
      await first.getByRole('navigation', { name: 'Pages' }).waitFor();
      const signedInHere = await first.evaluate(async () => {
        const binding = localStorage.getItem('standin.dashboard.binding') ?? '';
        return (await (await fetch('/dashboard/session', { headers: { 'x-standin-dashboard': binding } })).json()).signed_in;
      });
      expect(signedInHere).toBe(true);
      await context.close();
    } finally {
      await other.close();
    }
  });

  it('overview: organizations, keys with last use, the clock advances, a fault is added and removed', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page
      .getByRole('heading', { name: /Project/ })
      .first()
      .waitFor();
    const keyRow = page.locator('tr', { hasText: 'test' }).filter({ hasText: 'sk-proj' });
    await keyRow.getByRole('link', { name: /ago|in / }).waitFor();
    await page.getByText('Ad account').first().waitFor();

    const before = s.ctx.clock.nowSeconds();
    await page.getByLabel('Advance by').fill('2h');
    await page.getByRole('button', { name: 'Advance' }).click();
    await page.getByText(/7200 s ahead|720\d s ahead/).waitFor();
    expect(s.ctx.clock.nowSeconds() - before).toBeGreaterThanOrEqual(7200);

    const faults = page.locator('section', { has: page.getByRole('heading', { name: 'Faults' }) });
    await faults.getByLabel('Path').fill('/v1/embeddings');
    await faults.getByLabel('Count').fill('2');
    await faults.getByRole('button', { name: 'Add fault' }).click();
    await faults.getByRole('button', { name: 'Remove fault on /v1/embeddings' }).click();
    await faults.getByText('No active faults.').waitFor();
    expect((await s.req('GET', '/admin/v1/faults', { key: 'admin' })).body.data).toHaveLength(0);
    await context.close();
  });

  it('requests: live rows, a 429 burst filtered, a request opened with its rate-limit headers and redacted secrets', async () => {
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.goto(`${url}/dashboard/requests`);
    await page.getByRole('heading', { name: 'Requests' }).waitFor();
    // New traffic appears without a reload.
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'live row' }] });
    await s.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/chat/completions', status: 429, count: 3 } });
    const refused = [];
    for (let i = 0; i < 3; i++) {
      refused.push(
        await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'burst' }] }).catch((e) => e),
      );
    }
    expect(refused.every((e) => e instanceof OpenAI.RateLimitError)).toBe(true);
    await page.getByLabel('Status').fill('429');
    await expect.poll(() => page.locator('table.requests tbody tr').count(), { timeout: 10_000 }).toBe(3);
    await page.getByLabel('Status').fill('');
    await page.getByLabel('Path').fill('/v1/chat');
    const ok = page.locator('table.requests tbody tr').filter({ hasText: '200' }).first();
    await ok.getByRole('button').click();
    const detail = page.getByRole('complementary', { name: 'Request detail' });
    await detail.getByText('x-ratelimit-limit-requests').first().waitFor();
    expect(await detail.textContent()).toContain('[redacted]');
    expect(await detail.textContent()).not.toContain(s.keys.platform);
    await detail
      .getByText(/chatcmpl-/)
      .first()
      .waitFor();
    // Filter by key: the admin's own calls are not the platform key's.
    await page.getByLabel('Path').fill('');
    await page.getByLabel('Key').fill('admin');
    await expect
      .poll(async () => {
        const rows = await page.locator('table.requests tbody tr').allTextContents();
        return rows.length > 0 && rows.every((t) => t.includes('/admin/v1/'));
      })
      .toBe(true);
    await context.close();
  });

  it('webhooks: create an endpoint (secret shown once), a test event delivered, the attempts timeline, resend, rotation', async () => {
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    // The old settings page redirects into the app.
    await page.goto(`${url}/dashboard/projects/proj_demo/webhooks`);
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    expect(page.url()).toContain('/dashboard/webhooks?project=proj_demo');
    await page.getByText('No endpoints yet.').waitFor();
    await page.getByLabel('Name').fill('From the dashboard');
    await page.getByLabel('URL').fill(rx.url);
    await page.getByLabel('batch.completed').check();
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = (await page.getByTestId('secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Deliveries of From the dashboard' }).click();
    await page.getByLabel('Test event').selectOption('batch.completed');
    await page.getByRole('button', { name: 'Send test event' }).click();
    const delivery = page.locator('li.delivery', { hasText: 'batch.completed' });
    await delivery.waitFor();
    // The row names the event it carries (the webhook-id a receiver logs), copyable.
    const eventId = (await s.req('GET', '/admin/v1/projects/proj_demo/webhook_endpoints', { key: 'admin' })).body.data[0].id;
    const first = (await s.req('GET', `/admin/v1/projects/proj_demo/webhook_endpoints/${eventId}/deliveries`, { key: 'admin' })).body
      .data[0];
    await delivery.getByText(first.event_id, { exact: true }).waitFor();
    await delivery.getByRole('button', { name: `Copy ${first.event_id}` }).waitFor();
    await expect.poll(() => rx.received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    expect(new Webhook(secret).verify(rx.received[0].body, rx.received[0].headers as Record<string, string>)).toMatchObject({
      type: 'batch.completed',
    });
    await delivery.getByRole('button', { name: 'Attempts' }).click();
    await delivery.getByText('first try fails').waitFor();
    await delivery.getByText('next retry').waitFor();
    await delivery.getByRole('button', { name: 'Resend' }).click();
    await expect.poll(() => page.locator('li.delivery').count(), { timeout: 10_000 }).toBe(2);
    await expect.poll(() => rx.received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    await page.getByRole('button', { name: 'Rotate the secret of From the dashboard' }).click();
    await page.getByTestId('secret').filter({ hasNotText: secret }).waitFor();
    await page.getByText('old secret signs until').waitFor();
    await context.close();
  });

  it('runs: threads → runs → steps, and a replay of the stream', async () => {
    // A streamed run through the SDK, so the run has a stream to replay.
    const stream = await client.beta.threads.createAndRun({
      assistant_id: 'asst_demo',
      thread: { messages: [{ role: 'user', content: 'Say hello from the dashboard test' }] },
      stream: true,
    });
    let threadId = '';
    let runId = '';
    let status = '';
    for await (const ev of stream) {
      if (ev.event === 'thread.run.created') ({ thread_id: threadId, id: runId } = ev.data);
      if (ev.event.startsWith('thread.run.')) status = (ev.data as { status: string }).status;
    }
    expect(status).toBe('completed');
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.goto(`${url}/dashboard/runs?project=proj_demo`);
    // The run is listed, newest first with its status and model, before any thread is chosen.
    const recent = page.locator('section', { has: page.getByRole('heading', { name: 'Recent runs' }) });
    const row = recent.locator('li', { has: page.getByRole('button', { name: runId, exact: true }) });
    await row.getByText('completed').waitFor();
    await row.getByText(/^gpt-/).waitFor();
    await row.getByRole('button', { name: runId, exact: true }).click();
    const steps = page.getByRole('list', { name: 'Steps' });
    await steps.getByText('Message').first().waitFor();
    await steps.getByText('completed').first().waitFor();
    const streamCard = page.locator('section', { has: page.getByRole('heading', { name: 'Stream' }) });
    await streamCard.getByText('thread.run.created').waitFor();
    await streamCard.getByRole('button', { name: 'Replay' }).click();
    await streamCard.getByText('thread.run.completed').waitFor();
    await streamCard.getByText('thread.message.delta').first().waitFor();
    // Choosing a thread narrows the list to its runs, and back.
    await page.getByRole('button', { name: threadId, exact: true }).click();
    await page.getByRole('heading', { name: 'Runs of the thread' }).waitFor();
    await page.getByRole('button', { name: 'All runs of the project' }).click();
    await page.getByRole('heading', { name: 'Recent runs' }).waitFor();
    await context.close();
  });

  it('finds anything by its id from the header of every page; ids copy in one click', async () => {
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
    const find = async (id: string) => {
      await page.getByRole('searchbox', { name: 'Find by id' }).fill(id);
      await page.getByRole('button', { name: 'Open', exact: true }).click();
    };
    // A run id from someone's logs: the Runs page with its steps.
    const run = (await s.req('GET', '/admin/v1/projects/proj_demo/runs?limit=1', { key: 'admin' })).body.data[0];
    await page.goto(`${url}/dashboard/rate-limits`);
    await find(run.id);
    await page.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
    await page.getByRole('list', { name: 'Steps' }).getByText('Message').first().waitFor();
    expect(new URL(page.url()).searchParams.get('run')).toBe(run.id);
    // The webhook-id a receiver got: the event, its deliveries, and on to a delivery's attempts.
    const eventId = rx.received[0].headers['webhook-id'] as string;
    await find(eventId);
    const event = page.locator('section', { has: page.getByRole('heading', { name: 'Event', exact: true }) });
    await event.getByText('batch.completed').first().waitFor();
    await event.getByRole('button', { name: 'Open delivery' }).first().click();
    await page.locator('li.delivery.sel').getByText(eventId).first().waitFor();
    // A request id: the request opened.
    const logged = (await s.req('GET', '/admin/v1/requests?path=%2Fv1%2Fchat&status=200&limit=1', { key: 'admin' })).body.data[0];
    await find(logged.id);
    await page.getByRole('complementary', { name: 'Request detail' }).getByText(logged.id).first().waitFor();
    // An id that is none: a clear message, and the page stays.
    await find('not-an-id');
    await page.getByRole('alert').filter({ hasText: 'is not an id Standin issues' }).waitFor();
    await find('run_0000000000nothinghere000');
    await page.getByRole('alert').filter({ hasText: "No run found with id 'run_0000000000nothinghere000'" }).waitFor();
    // One click copies an id.
    await page.getByRole('button', { name: `Copy ${logged.id}` }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(logged.id);
    await context.close();
  });

  it('rate limits: the chart of the last minutes with the 429s marked', async () => {
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.goto(`${url}/dashboard/rate-limits`);
    // The faults refused the burst at the edge, before the body (and its model) was read: the endpoint names it.
    const burst = page.locator('section', { has: page.getByRole('heading', { name: '/v1/chat/completions' }) });
    await burst.getByText('3 × 429').waitFor();
    await burst.locator('canvas').waitFor();
    const model = page.locator('section', { has: page.getByRole('heading', { name: 'gpt-4o-mini' }) });
    await model
      .getByText(/of \d+ per minute/)
      .first()
      .waitFor();
    await model.locator('canvas').waitFor();
    // The use is shown beside its limit.
    await model.getByRole('meter', { name: 'Requests used of the limit' }).waitFor();
    await context.close();
  });

  it('identity: providers, roots and the exchange audit with refusal reasons', async () => {
    // A refused exchange: an assertion from no known issuer.
    const res = await fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        // No identity_provider_id: refused before any organization is known, with the reason recorded.
        subject_token: 'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL25vd2hlcmUuZXhhbXBsZSJ9.c2ln',
      }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.goto(`${url}/dashboard/identity`);
    await page.getByRole('heading', { name: 'Identity', exact: true }).waitFor();
    const refusal = page.locator('tr', { has: page.locator('.badge', { hasText: 'refused' }) }).first();
    await refusal.getByText('missing_parameter').first().waitFor();
    await context.close();
  });

  it('every page at 1280 and 390 px, light and dark', async () => {
    // Something on the Files page: a file, a vector store of it, and a batch.
    const file = await uploadFile(
      s,
      'requests.jsonl',
      `${JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } })}\n`,
      'batch',
    );
    await s.req('POST', '/v1/vector_stores', { key: 'platform', body: { name: 'Manuals' } });
    await s.req('POST', '/v1/batches', {
      key: 'platform',
      body: { input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' },
    });
    const eventId = rx.received[0].headers['webhook-id'] as string;
    const shots = await screenshots(browser, url, s.keys.admin, [
      ['overview', '/dashboard', (p) => p.getByText('Ad account').first().waitFor()],
      ['requests', '/dashboard/requests', (p) => p.locator('table.requests tbody tr').first().waitFor()],
      [
        'request-detail',
        '/dashboard/requests?path=%2Fv1%2Fchat&status=200',
        async (p) => {
          await p.locator('table.requests tbody tr').first().getByRole('button').click();
          await p.getByText('x-ratelimit-limit-requests').first().waitFor();
        },
      ],
      [
        'webhooks',
        '/dashboard/webhooks?project=proj_demo',
        async (p) => {
          await p.getByRole('button', { name: 'Deliveries of From the dashboard' }).click();
          await p.locator('li.delivery').first().getByRole('button', { name: 'Attempts' }).click();
          await p.locator('ol.timeline li').first().waitFor();
        },
      ],
      [
        'event',
        `/dashboard/webhooks?project=proj_demo&event=${eventId}`,
        (p) => p.getByRole('list', { name: 'Deliveries of the event' }).waitFor(),
      ],
      [
        'runs',
        '/dashboard/runs?project=proj_demo',
        async (p) => {
          await p
            .locator('section', { has: p.getByRole('heading', { name: 'Recent runs' }) })
            .locator('li button.link')
            .first()
            .click();
          await p.getByText('thread.run.created').waitFor();
        },
      ],
      ['files', `/dashboard/files?project=proj_demo&file=${file}`, (p) => p.locator('tr.sel').waitFor()],
      ['rate-limits', '/dashboard/rate-limits', (p) => p.locator('canvas').first().waitFor()],
      ['identity', '/dashboard/identity', (p) => p.getByRole('heading', { name: 'Token exchanges' }).first().waitFor()],
      [
        'find-unknown',
        '/dashboard/overview',
        async (p) => {
          await p.getByRole('searchbox', { name: 'Find by id' }).fill('whdel_0000000000nothinghere00');
          await p.getByRole('button', { name: 'Open', exact: true }).click();
          await p.getByRole('alert').filter({ hasText: 'No webhook delivery found' }).waitFor();
        },
      ],
    ]);
    expect(shots).toHaveLength(10 * 4);
    const signIn = await browser.newPage({ viewport: { width: 390, height: 800 } });
    await signIn.goto(`${url}/dashboard`);
    await signIn.getByLabel('Admin key').waitFor();
    await signIn.screenshot({ path: join(SHOTS, 'sign-in-390-light.png') });
    await signIn.close();
  }, 300_000);
});
