import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapAvailable } from '../../src/code-interpreter/bwrap.js';
import { executeInContainer } from '../../src/containers/service.js';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { launchChromium, screenshots, signedIn, type Browser } from './harness.js';

// The "Containers" page against a running Standin: containers made with the openai SDK (one left to
// expire on the Standin clock), their files uploaded, copied, and (where bwrap runs here) written by code.
// Photographed at 1280 and 390 px, light and dark.
describe('dashboard: containers and their files', () => {
  let s: TestStandin;
  let url: string;
  let browser: Browser;
  let client: OpenAI;
  let containerId = '';

  beforeAll(async () => {
    s = await startTestStandin();
    url = await s.listen();
    browser = await launchChromium();
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
    const old = await client.containers.create({ name: 'Yesterday', expires_after: { anchor: 'last_active_at', minutes: 1 } });
    await client.containers.files.create(old.id, { file: await toFile(Buffer.from('old'), 'old.txt') });
    await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '2m' } });
    const doc = await client.files.create({
      file: await toFile(Buffer.from('city,temp\nOslo,4\nLima,19\n'), 'temps.csv'),
      purpose: 'user_data',
    });
    const c = await client.containers.create({ name: 'Weather analysis', file_ids: [doc.id], memory_limit: '4g' });
    containerId = c.id;
    await client.containers.files.create(c.id, { file: await toFile(Buffer.alloc(20_000, 7), 'model-weights.bin') });
    if (bwrapAvailable()) {
      await s.req('POST', '/admin/v1/config', { key: 'admin', body: { code_interpreter: { executor: 'bwrap', pool_size: 0 } } });
      const r = await executeInContainer(s.ctx, 'proj_demo', c.id, 'open("/mnt/data/summary.txt", "w").write("mean 11.5")');
      expect(r.files).toHaveLength(1);
    }
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('lists the containers with their status, and one container’s files as downloads', async () => {
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Containers' }).click();
    await page.getByRole('heading', { name: 'Containers', level: 1 }).waitFor();
    await page.getByLabel('Project').selectOption('proj_demo');
    const item = page.locator('li', { has: page.getByText(containerId, { exact: true }) });
    await item.getByText('running').waitFor();
    await page.locator('li', { hasText: 'Yesterday' }).getByText('expired', { exact: true }).waitFor();
    await item.getByRole('button', { name: 'Show files of Weather analysis' }).click();
    const files = item.getByRole('table');
    await files.getByRole('link', { name: '/mnt/data/temps.csv' }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), files.getByRole('link', { name: '/mnt/data/temps.csv' }).click()]);
    expect(download.suggestedFilename()).toBe('temps.csv');
    expect((await download.createReadStream().then(async (s) => (await s.toArray()).join(''))).toString()).toContain('Lima,19');
    if (bwrapAvailable())
      await files
        .getByRole('row', { name: /summary\.txt/ })
        .getByText('written by code')
        .waitFor();
    // The search box finds a container by its id and opens it.
    await page.goto(`${url}/dashboard/containers`);
    const found = await s.req('GET', `/admin/v1/dashboard/lookup?id=${containerId}`, { key: 'admin' });
    expect(found.body).toMatchObject({ kind: 'container', url: `/dashboard/containers?project=proj_demo&container=${containerId}` });
    await context.close();
  }, 60_000);

  it('the page at 1280 and 390 px, light and dark', async () => {
    const shots = await screenshots(browser, url, s.keys.admin, [
      [
        'containers',
        `/dashboard/containers?project=proj_demo&container=${containerId}`,
        (p) => p.getByRole('link', { name: '/mnt/data/model-weights.bin' }).waitFor(),
      ],
    ]);
    expect(shots).toHaveLength(4);
  }, 120_000);
});
