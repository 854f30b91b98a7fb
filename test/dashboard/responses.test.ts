import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { launchChromium, screenshots, signedIn, type Browser } from './harness.js';

// The Responses page against a running Standin with real traffic from the openai SDK: plain, tool-calling,
// reasoning and streamed background responses, and a conversation of two turns. Driven as a user would,
// photographed at 1280 and 390 px, light and dark, under test-output/dashboard/.
describe('dashboard: responses and conversations', () => {
  let s: TestStandin;
  let url: string;
  let browser: Browser;
  let client: OpenAI;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    s = await startTestStandin({ settings: { workers: true } });
    url = await s.listen();
    browser = await launchChromium();
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
    ids.plain = (await client.responses.create({ model: 'gpt-4o-mini', input: 'Name three harbours.', instructions: 'Be brief.' })).id;
    ids.tool = (
      await client.responses.create({
        model: 'gpt-4.1',
        input: 'What is the weather in Oslo?',
        tools: [
          {
            type: 'function',
            name: 'get_weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            strict: false,
          },
        ],
        tool_choice: 'required',
      })
    ).id;
    ids.custom = (
      await client.responses.create({
        model: 'gpt-4.1',
        input: 'SELECT name FROM harbours',
        tools: [{ type: 'custom', name: 'sql', description: 'Runs a query' }],
        tool_choice: { type: 'custom', name: 'sql' },
      })
    ).id;
    ids.reasoning = (
      await client.responses.create({ model: 'o4-mini', input: 'Why is the sea salty?', reasoning: { summary: 'auto' } })
    ).id;
    const conv = await client.conversations.create({
      metadata: { topic: 'boats' },
      items: [{ role: 'user', content: 'We talk about boats.' }],
    });
    ids.conversation = conv.id;
    await client.responses.create({ model: 'gpt-4o-mini', input: 'Which boat is fastest?', conversation: conv.id });
    await client.responses.create({ model: 'gpt-4o-mini', input: 'And the slowest?', conversation: conv.id });
    const stream = await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'Tell a long story about a lighthouse.',
      background: true,
      stream: true,
    });
    for await (const e of stream) if (e.type === 'response.created') ids.streamed = e.response.id;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('lists the responses of the project with status, model and usage; filters by status; opens one with its items and usage', async () => {
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.getByRole('link', { name: 'Responses' }).click();
    await page.getByRole('heading', { name: 'Responses', level: 1 }).waitFor();
    await page.getByLabel('Project').selectOption('proj_demo');
    const list = page.locator('section', { has: page.getByRole('heading', { name: 'Responses', level: 2 }) });
    const row = (id: string) => list.locator('li', { has: page.getByRole('button', { name: id, exact: true }) });
    await row(ids.tool).waitFor();
    await expect(row(ids.tool).innerText()).resolves.toMatch(/completed[\s\S]*gpt-4\.1[\s\S]*\d+ tokens[\s\S]*function_call/);
    await expect(row(ids.reasoning).innerText()).resolves.toMatch(/reasoning, message/);

    await row(ids.tool).getByRole('button', { name: ids.tool, exact: true }).click();
    const output = page.locator('section', { has: page.getByRole('heading', { name: 'Output' }) });
    await output.getByText('function call get_weather', { exact: true }).waitFor();
    await output.locator('code.call', { hasText: /^get_weather\(\{/ }).waitFor();
    const input = page.locator('section', { has: page.getByRole('heading', { name: 'Input items' }) });
    await input.locator('p.part', { hasText: 'What is the weather in Oslo?' }).waitFor();
    await page
      .getByText(/\d+ in · \d+ out · \d+ tokens/)
      .first()
      .waitFor();
    expect(new URL(page.url()).searchParams.get('response')).toBe(ids.tool);

    // A custom tool's call with its free-text input.
    await row(ids.custom).getByRole('button', { name: ids.custom, exact: true }).click();
    await output.getByText('custom tool call sql', { exact: true }).waitFor();
    await output.locator('p.part', { hasText: /^SELECT name FROM harbours$/ }).waitFor();

    // The reasoning item with its summary, and the reasoning tokens in the usage.
    await row(ids.reasoning).getByRole('button', { name: ids.reasoning, exact: true }).click();
    await output.locator('strong', { hasText: /^reasoning$/ }).waitFor();
    await page
      .getByText(/\(\d+ reasoning\)/)
      .first()
      .waitFor();

    // Filtered by status: no queued responses here.
    await page.getByLabel('Status').selectOption('queued');
    await list.getByText('No stored responses with status queued in this project.').waitFor();
    await context.close();
  });

  it("shows a streamed background response's event log, and a conversation's items; the search box lands on both", async () => {
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    await page.getByRole('searchbox', { name: 'Find by id' }).fill(ids.streamed);
    await page.getByRole('searchbox', { name: 'Find by id' }).press('Enter');
    await page.waitForURL(/\/dashboard\/responses\?/);
    const stream = page.locator('section', { has: page.getByRole('heading', { name: 'Stream' }) });
    const event = (type: string) => stream.locator('summary', { hasText: new RegExp(`^\\d+ ${type.replaceAll('.', '\\.')}$`) });
    await event('response.created').waitFor();
    await event('response.output_text.delta').first().waitFor();
    await event('response.completed').waitFor();
    // The events in order, each opening its JSON.
    const seqs = await stream.locator('summary code').allInnerTexts();
    expect(seqs.map(Number)).toEqual(seqs.map((_, i) => i));
    await event('response.completed').click();
    await stream
      .getByText(/"sequence_number": \d+/)
      .last()
      .waitFor();

    await page.getByRole('searchbox', { name: 'Find by id' }).fill(ids.conversation);
    await page.getByRole('searchbox', { name: 'Find by id' }).press('Enter');
    const items = page.locator('section', { has: page.getByRole('heading', { name: 'Conversation items' }) });
    for (const text of ['We talk about boats.', 'Which boat is fastest?', 'And the slowest?'])
      await items.getByText(text, { exact: true }).waitFor();
    expect(await items.getByText('assistant message').count()).toBe(2);
    await page.getByText('topic: boats').waitFor();
    await context.close();
  });

  it('pages a long list a page at a time (Older, Newer)', async () => {
    for (let i = 0; i < 20; i++) await client.responses.create({ model: 'gpt-4o-mini', input: `filler ${i}` });
    const { context, page } = await signedIn(browser, url, s.keys.admin);
    const reads: string[] = [];
    page.on('request', (r) => r.url().includes('/admin/v1/projects/proj_demo/responses?') && reads.push(r.url()));
    await page.goto(`${url}/dashboard/responses?project=proj_demo`);
    const list = page.locator('section', { has: page.getByRole('heading', { name: 'Responses', level: 2 }) });
    await expect.poll(() => list.locator('li').count()).toBe(20);
    expect(await list.getByRole('button', { name: ids.plain, exact: true }).count()).toBe(0);
    await list.getByRole('button', { name: 'Older' }).click();
    await list.getByRole('button', { name: ids.plain, exact: true }).waitFor();
    expect(reads.every((u) => new URL(u).searchParams.get('limit') === '20')).toBe(true);
    await list.getByRole('button', { name: 'Newer' }).click();
    await list.getByRole('button', { name: ids.plain, exact: true }).waitFor({ state: 'detached' });
    await context.close();
  });

  it('the page at 1280 and 390 px, light and dark', async () => {
    const found = (text: string) => async (p: import('playwright-core').Page) => {
      await p.getByText(text).first().waitFor();
    };
    const shots = await screenshots(browser, url, s.keys.admin, [
      ['responses', `/dashboard/responses?project=proj_demo&response=${ids.tool}`, found('function call get_weather')],
      ['responses-stream', `/dashboard/responses?project=proj_demo&response=${ids.streamed}`, found('response.completed')],
      ['responses-reasoning', `/dashboard/responses?project=proj_demo&response=${ids.reasoning}`, found('reasoning)')],
      ['conversation', `/dashboard/responses?project=proj_demo&conversation=${ids.conversation}`, found('And the slowest?')],
    ]);
    expect(shots).toHaveLength(16);
    // Sixteen pictures in one browser: as long as the other pages' screenshot tests allow on a busy machine.
  }, 120_000);
});
