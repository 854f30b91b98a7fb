import OpenAI from 'openai';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { startReceiver } from '../webhooks/receiver.js';
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
    const cookie = (await context.cookies()).find((c) => c.name === 'standin_session')!;
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
    await again.close();
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
    await page.getByRole('button', { name: threadId }).click();
    await page.getByRole('button', { name: runId }).click();
    const steps = page.getByRole('list', { name: 'Steps' });
    await steps.getByText('Message').first().waitFor();
    await steps.getByText('completed').first().waitFor();
    const streamCard = page.locator('section', { has: page.getByRole('heading', { name: 'Stream' }) });
    await streamCard.getByText('thread.run.created').waitFor();
    await streamCard.getByRole('button', { name: 'Replay' }).click();
    await streamCard.getByText('thread.run.completed').waitFor();
    await streamCard.getByText('thread.message.delta').first().waitFor();
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
        'runs',
        '/dashboard/runs?project=proj_demo',
        async (p) => {
          await p
            .locator('section', { has: p.getByRole('heading', { name: 'Threads' }) })
            .getByRole('button')
            .first()
            .click();
          await p
            .locator('section', { has: p.getByRole('heading', { name: 'Runs', exact: true }) })
            .getByRole('button')
            .first()
            .click();
          await p.getByText('thread.run.created').waitFor();
        },
      ],
      ['rate-limits', '/dashboard/rate-limits', (p) => p.locator('canvas').first().waitFor()],
      ['identity', '/dashboard/identity', (p) => p.getByRole('heading', { name: 'Token exchanges' }).first().waitFor()],
    ]);
    expect(shots).toHaveLength(7 * 4);
    const signIn = await browser.newPage({ viewport: { width: 390, height: 800 } });
    await signIn.goto(`${url}/dashboard`);
    await signIn.getByLabel('Admin key').waitFor();
    await signIn.screenshot({ path: join(SHOTS, 'sign-in-390-light.png') });
    await signIn.close();
  }, 300_000);
});
