import { readFileSync } from 'node:fs';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { launchChromium, screenshots, signedIn, type Browser } from './harness.js';

// The "Files & batches" page against a running Standin with real traffic from the openai SDK: files
// uploaded, a vector store ingesting a good and an unsupported file, a batch of chat lines running to
// completion on the built-in model. Photographed at 1280 and 390 px, light and dark.
describe('dashboard: files, vector stores, batches', () => {
  let s: TestStandin;
  let url: string;
  let browser: Browser;
  let client: OpenAI;

  beforeAll(async () => {
    s = await startTestStandin({ settings: { workers: true } });
    url = await s.listen();
    browser = await launchChromium();
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  let storeId = '';

  it('shows a batch running to 100 %, a vector store with a failed file and its error, the files; polling stops when all is final', async () => {
    const notes = await client.files.create({
      file: await toFile(Buffer.from('Notes about the harbour and its boats.'), 'notes.txt'),
      purpose: 'assistants',
    });
    const photo = await client.files.create({
      file: await toFile(Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'photo.png'),
      purpose: 'assistants',
    });
    const store = await client.vectorStores.create({ name: 'Harbour docs', file_ids: [notes.id, photo.id] });
    storeId = store.id;
    const lines = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({
        custom_id: `line-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        // One line the endpoint refuses: it fails and goes to the error file.
        body: { model: 'gpt-4o-mini', messages: i === 7 ? 'not a list' : [{ role: 'user', content: `Say ${i}` }] },
      }),
    );
    const input = await client.files.create({ file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'lines.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    const { context, page } = await signedIn(browser, url, s.keys.admin);
    const reads: string[] = [];
    page.on('request', (r) => r.url().includes('/admin/v1/projects/proj_demo/batches') && reads.push(r.url()));
    await page.getByRole('link', { name: 'Files & batches' }).click();
    await page.getByRole('heading', { name: 'Files & batches' }).waitFor();
    await page.getByLabel('Project').selectOption('proj_demo');

    // The batch: progress reaches 100 %, completed, its counts and its three files.
    const batchItem = page.locator('li', { has: page.getByText(batch.id, { exact: true }) });
    const bar = batchItem.getByRole('progressbar', { name: `Progress of ${batch.id}` });
    await expect.poll(() => bar.getAttribute('aria-valuenow'), { timeout: 60_000 }).toBe('100');
    await batchItem.locator('.badge', { hasText: 'completed' }).waitFor();
    await batchItem.getByText('40 of 40 requests').waitFor();
    await batchItem.getByText('39 completed').waitFor();
    await batchItem.getByText('1 failed').waitFor();
    await batchItem.getByRole('link', { name: 'lines.jsonl' }).waitFor();
    const done = await client.batches.retrieve(batch.id);
    expect(done.status).toBe('completed');
    // The output and error links download what the SDK reads (clicked, as a person does: the page fetches with its
    // session's headers).
    const clicked = async (link: ReturnType<typeof page.locator>) => {
      const [file] = await Promise.all([page.waitForEvent('download'), link.click()]);
      return readFileSync((await file.path())!, 'utf8');
    };
    const output = batchItem.locator(`a[href$="/files/${done.output_file_id}/content"]`);
    expect(await clicked(output)).toBe(await (await client.files.content(done.output_file_id!)).text());
    expect(await clicked(batchItem.locator(`a[href$="/files/${done.error_file_id}/content"]`))).toContain('line-7');

    // The vector store: counts in words beside the bar, and the failed file's error in the drill-down (by keyboard).
    const storeItem = page.locator('li', { has: page.getByText(store.id, { exact: true }) });
    await storeItem.getByText('1 completed · 1 failed of 2').waitFor({ timeout: 60_000 });
    await storeItem.locator('.badge', { hasText: 'completed' }).waitFor();
    const show = storeItem.getByRole('button', { name: 'Show files of Harbour docs' });
    await show.focus();
    await page.keyboard.press('Enter');
    expect(await storeItem.getByRole('button', { name: 'Hide files of Harbour docs' }).getAttribute('aria-expanded')).toBe('true');
    const failedRow = storeItem.locator('tr', { hasText: photo.id });
    await failedRow.locator('.badge', { hasText: 'failed' }).waitFor();
    await failedRow.getByText(/unsupported_file: /).waitFor();
    await storeItem.locator('tr', { hasText: notes.id }).getByText('notes.txt').waitFor();

    // The files, the batch's output among them.
    const files = page.locator('section', { has: page.getByRole('heading', { name: 'Files', exact: true }) });
    await files.getByRole('link', { name: 'notes.txt' }).waitFor();
    await files.locator('tr', { hasText: done.output_file_id! }).getByText('batch_output').waitFor();

    // Nothing is in progress: the page says so and stops reading.
    await page.getByRole('status').filter({ hasText: 'nothing in progress' }).waitFor();
    const before = reads.length;
    await page.waitForTimeout(5000);
    expect(reads.length).toBe(before);
    await context.close();
  }, 120_000);

  it('a batch created while the page is open appears after Refresh and is followed live to the end', async () => {
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.goto(`${url}/dashboard/files?project=proj_demo`);
    await page.getByRole('status').filter({ hasText: 'nothing in progress' }).waitFor();
    const input = await client.files.create({
      file: await toFile(
        Buffer.from(
          `${JSON.stringify({ custom_id: 'only', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } })}\n`,
        ),
        'one.jsonl',
      ),
      purpose: 'batch',
    });
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await page.getByRole('button', { name: 'Refresh' }).click();
    const bar = page.getByRole('progressbar', { name: `Progress of ${batch.id}` });
    await expect.poll(() => bar.getAttribute('aria-valuenow'), { timeout: 60_000 }).toBe('100');
    await page.getByRole('status').filter({ hasText: 'nothing in progress' }).waitFor();
    await context.close();
  }, 120_000);

  it("the app host shares the dashboard's header and its theme, one click away", async () => {
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    // Dark, chosen with the dashboard's theme button (auto → dark).
    await page.getByRole('button', { name: /^Theme: auto/ }).click();
    await page.getByRole('link', { name: 'App host ↗' }).click();
    await page.getByText('Standin app host').waitFor();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await page.getByLabel('Theme').inputValue()).toBe('dark');
    const nav = page.getByRole('navigation', { name: 'Pages' });
    expect(await nav.getByRole('link', { name: 'App host' }).getAttribute('aria-current')).toBe('page');
    // The page background is the dashboard's dark one.
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(17, 19, 24)');
    await nav.getByRole('link', { name: 'Files & batches' }).click();
    await page.getByRole('heading', { name: 'Files & batches' }).waitFor();
    await context.close();
  });

  it('the page at 1280 and 390 px, light and dark', async () => {
    const shots = await screenshots(browser, url, s.keys.admin, [
      [
        'files',
        `/dashboard/files?project=proj_demo&vector_store=${storeId}`,
        async (p) => {
          await p.getByText(/unsupported_file: /).waitFor();
          await p.getByRole('status').filter({ hasText: 'nothing in progress' }).waitFor();
        },
      ],
      ['app-host', '/apps', (p) => p.getByText('Connect to a server to list its tools.').waitFor()],
    ]);
    expect(shots).toHaveLength(8);
  }, 120_000);
});
