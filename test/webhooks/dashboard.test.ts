import { chromium, type Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { startReceiver } from './receiver.js';

describe('dashboard: project settings › webhooks', () => {
  let s: TestStandin;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let browser: Browser;
  let url: string;
  beforeAll(async () => {
    s = await startTestStandin({ settings: { workers: true } });
    rx = await startReceiver((n) => (n === 1 ? { status: 500, body: 'first try fails' } : { status: 200, body: 'ok' }));
    url = await s.listen();
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await rx?.close();
    await s?.close();
  });

  it('creates an endpoint (secret shown once), sends a test event, shows attempts, rotates', async () => {
    const page = await browser.newPage();
    const res = await page.goto(`${url}/dashboard/projects/proj_demo/webhooks`);
    expect(res!.headers()['content-security-policy']).toContain("default-src 'none'");
    await page.fill('#key', s.keys.admin);
    await page.click('#save-key');
    await page.getByText('No endpoints yet.').waitFor();
    await page.fill('input[name=name]', 'From the dashboard');
    await page.fill('input[name=url]', rx.url);
    await page.check('input[value="batch.completed"]');
    expect(await page.locator('input[value="live.call.incoming"]').count()).toBe(0);
    await page.click('#create button[type=submit]');
    const secret = await page.locator('#secret-value').textContent();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.selectOption('#test-type', 'realtime.call.incoming');
    await page.click('#send-test');
    await page.locator('#deliveries tr', { hasText: 'realtime.call.incoming' }).waitFor();
    expect(rx.received).toHaveLength(1);
    expect(new Webhook(secret!).verify(rx.received[0].body, rx.received[0].headers as Record<string, string>)).toMatchObject({
      type: 'realtime.call.incoming',
    });
    await page.getByRole('button', { name: 'Attempts' }).click();
    await page.locator('#attempts td', { hasText: 'first try fails' }).waitFor();
    expect(await page.locator('#attempts').textContent()).toContain('500');
    await page.getByRole('button', { name: 'Resend' }).click();
    await page.locator('#deliveries tr').nth(1).waitFor();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.locator('#secret-value').filter({ hasNotText: secret! }).waitFor();
    // The list re-renders after the rotation answer: wait for it rather than read it at once.
    await page.locator('#endpoints', { hasText: 'old secret signs until' }).waitFor();
    expect(await page.locator('#msg').textContent()).toBe('');
  });

  it('shows the API error for a wrong admin key', async () => {
    const page = await browser.newPage();
    await page.goto(`${url}/dashboard/projects/proj_demo/webhooks`);
    await page.fill('#key', 'sk-admin-wrong-key-000000000000000000');
    await page.click('#save-key');
    await page.locator('#msg', { hasText: 'admin key' }).waitFor();
  });
});
