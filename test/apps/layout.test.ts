// What a person sees of the host: frames sized as MCP Apps hosts size them, approval prompts no component can
// cover, the tools a component provides, and the admin key off loopback. Chromium, against a fixture app built
// like the official MCP Apps examples (test/apps/fixtures/budget-server.mjs) and the bridge tour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { TEST_KEYS } from '../helpers.js';
import {
  buildWeb,
  launchChromium,
  openHost,
  startHost,
  startMcpServer,
  startTour,
  widgetFrame,
  type McpHttpServer,
  waitInFrame,
} from './harness.js';

let browser: Browser;
let host: Awaited<ReturnType<typeof startHost>>;
let budget: McpHttpServer;
let tour: McpHttpServer;
let context: BrowserContext;

beforeAll(async () => {
  await buildWeb();
  [browser, host, budget, tour] = await Promise.all([
    launchChromium(),
    startHost(),
    startMcpServer('test/apps/fixtures/budget-server.mjs'),
    startTour(),
  ]);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
});
afterAll(async () => {
  await browser?.close();
  await host?.close();
  await budget?.stop();
  await tour?.stop();
});

type BudgetState = {
  connected: boolean;
  input: unknown;
  modeRequested: boolean;
  modeAnswer: { mode: string } | null;
  toolCalls: number;
  result: unknown;
  errors: string[];
};
const budgetState = (frame: Frame) => frame.evaluate(() => (window as unknown as { __budget: BudgetState }).__budget);

/** Whether a person can press the element: it is in the viewport and nothing (a frame, a modal) lies on top of it. */
async function onTop(page: Page, target: Locator): Promise<boolean> {
  const box = await target.boundingBox();
  if (!box) return false;
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  const size = page.viewportSize()!;
  if (x < 0 || y < 0 || x > size.width || y > size.height) return false;
  const handle = await target.elementHandle();
  return page.evaluate(([el, px, py]) => el === document.elementFromPoint(px as number, py as number), [handle, x, y] as const);
}

describe('inline frame size (MCP Apps size-changed)', () => {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    it(`shows the whole 600 px component, footer included, at ${viewport.width} px wide`, async () => {
      const page = await context.newPage();
      await page.setViewportSize(viewport);
      await openHost(page, host.url, budget.url, 'show-budget', {});
      const frame = await widgetFrame(page, 'show-budget');
      await waitInFrame(frame, () => (window as unknown as { __budget: BudgetState }).__budget.result !== null);
      const iframe = page.locator('article.turn[data-tool="show-budget"] iframe');
      // The component reports 600 (its document cannot scroll): the frame follows it.
      await expect.poll(async () => (await iframe.boundingBox())!.height).toBe(600);
      const footer = await frame.evaluate(() => {
        const r = document.getElementById('footer')!.getBoundingClientRect();
        return { bottom: r.bottom, viewport: innerHeight, scrolled: document.scrollingElement!.scrollTop };
      });
      expect(footer.scrolled).toBe(0);
      expect(footer.bottom).toBeLessThanOrEqual(footer.viewport);
      // The person reaches it by scrolling the host page, and it works.
      await page.locator('article.turn[data-tool="show-budget"] .frame-scroll').scrollIntoViewIfNeeded();
      await iframe.evaluate((el) => el.scrollIntoView({ block: 'end' }));
      const save = frame.locator('#save');
      await save.click();
      await expect.poll(() => frame.locator('#saved').innerText()).toBe('saved');
      await page.close();
    });
  }

  it('measures a window.vendor component that reports nothing, even with its page pinned to the frame', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, budget.url, 'show-budget-classic', {});
    await widgetFrame(page, 'show-budget-classic');
    const iframe = page.locator('article.turn[data-tool="show-budget-classic"] iframe');
    await expect.poll(async () => (await iframe.boundingBox())!.height).toBe(600);
    await page.close();
  });

  it('tells the component the room it has: containerDimensions.maxHeight and the window.vendor maxHeight agree', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, tour.url, 'ext_app_demo', {});
    const frame = await widgetFrame(page, 'ext_app_demo');
    await waitInFrame(frame, () => (window as unknown as { __extApp: { connected: boolean } }).__extApp?.connected);
    const ctx = await frame.evaluate(
      () =>
        (window as unknown as { __extApp: { context: { containerDimensions: { maxHeight: number } } } }).__extApp.context
          .containerDimensions,
    );
    expect(ctx.maxHeight).toBeGreaterThanOrEqual(600);
    expect(await frame.evaluate(() => (window as unknown as { vendor: { maxHeight: number } }).vendor.maxHeight)).toBe(ctx.maxHeight);
    await page.close();
  });
});

describe('approval prompts stay visible and usable in every display mode', () => {
  it('a gated component that awaits fullscreen at start-up is answered at once (declined: inline); Approve calls the tool', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, budget.url, 'commit-budget', { note: 'q3' });
    const frame = await widgetFrame(page, 'commit-budget');
    // The component awaits requestDisplayMode during start-up: the answer comes while the prompt is pending,
    // declined with the current mode, so the component is ready before the user decides.
    await expect.poll(async () => (await budgetState(frame)).modeAnswer).toEqual({ mode: 'inline' });
    const approve = page.getByRole('button', { name: 'Approve' });
    await approve.waitFor();
    const box = page.locator('article.turn[data-tool="commit-budget"] .frame-box');
    expect(await box.getAttribute('data-mode')).toBe('inline');
    expect((await budgetState(frame)).result).toBeNull();
    expect(await onTop(page, approve)).toBe(true);
    await approve.click();
    // The tool call proceeds: the component gets the input and the result.
    await expect.poll(async () => (await budgetState(frame)).result).not.toBeNull();
    expect((await budgetState(frame)).input).toEqual({ note: 'q3' });
    // With nothing pending, the same request is granted.
    expect(
      await frame.evaluate(() =>
        (window as unknown as { __budgetApp: { requestDisplayMode(a: object): Promise<unknown> } }).__budgetApp.requestDisplayMode({
          mode: 'fullscreen',
        }),
      ),
    ).toEqual({ mode: 'fullscreen' });
    await expect.poll(() => box.getAttribute('data-mode')).toBe('fullscreen');
    await page.close();
  });

  it('the prompt floats above a frame the user made fullscreen or picture-in-picture, and above a modal', async () => {
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await openHost(page, host.url, tour.url, 'delete_card', { id: 'c9' });
    const frame = await widgetFrame(page, 'delete_card');
    const approve = page.getByRole('button', { name: 'Approve' });
    await approve.waitFor();
    const turn = page.locator('article.turn[data-tool="delete_card"]');
    for (const mode of ['fullscreen', 'pip']) {
      await turn.locator(`.turn-controls button[data-mode="${mode}"]`).click();
      await expect.poll(() => turn.locator('.frame-box').getAttribute('data-mode')).toBe(mode);
      await expect.poll(() => onTop(page, approve)).toBe(true);
      await turn.locator('.frame-box button.exit-mode').click();
      await expect.poll(() => turn.locator('.frame-box').getAttribute('data-mode')).toBe('inline');
    }
    // The component's own requests are answered at once: declined while the prompt is pending (a fullscreen frame
    // or a modal would cover it), granted once the user decided.
    type Vendor = {
      vendor: {
        requestModal(a: object): Promise<unknown>;
        requestDisplayMode(a: object): Promise<unknown>;
        callTool(name: string, args: object): Promise<{ structuredContent: { board: string } }>;
        sendFollowUpMessage(a: object): Promise<unknown>;
      };
    };
    const modal = await frame.evaluate(() =>
      (window as unknown as Vendor).vendor.requestModal({ params: { cardId: 'c1' } }).then(
        () => 'opened',
        (e: Error) => e.message,
      ),
    );
    expect(modal).toMatch(/declined/);
    expect(await frame.evaluate(() => (window as unknown as Vendor).vendor.requestDisplayMode({ mode: 'fullscreen' }))).toEqual({
      mode: 'inline',
    });
    expect(await onTop(page, approve)).toBe(true);
    expect(await page.locator('#modal-root .modal').count()).toBe(0);
    expect(await turn.locator('.frame-box').getAttribute('data-mode')).toBe('inline');
    // Every other request is answered as usual while the prompt is pending.
    expect(await frame.evaluate(() => (window as unknown as Vendor).vendor.sendFollowUpMessage({ prompt: 'while pending' }))).toEqual({});
    expect(
      await frame.evaluate(async () => (await (window as unknown as Vendor).vendor.callTool('refresh_board', {})).structuredContent.board),
    ).toBeTruthy();
    await approve.click();
    expect(await frame.evaluate(() => (window as unknown as Vendor).vendor.requestDisplayMode({ mode: 'fullscreen' }))).toEqual({
      mode: 'fullscreen',
    });
    expect(await frame.evaluate(() => (window as unknown as Vendor).vendor.requestModal({ params: { cardId: 'c1' } }))).toEqual({});
    await page.close();
  });

  it('a component already fullscreen that calls a destructive tool cannot hide the prompt', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, tour.url, 'show_board', {});
    const frame = await widgetFrame(page, 'show_board');
    await waitInFrame(frame, () => ((window as unknown as { __tour?: { renders: number } }).__tour?.renders ?? 0) > 0);
    const vendor = (fn: string) => frame.evaluate(`(async () => { const api = window.vendor; ${fn} })()`);
    expect(await vendor(`return await api.requestDisplayMode({ mode: 'fullscreen' });`)).toEqual({ mode: 'fullscreen' });
    const pending = vendor(`return (await api.callTool('delete_card', { id: 'c-none' })).content[0].text;`);
    const approve = page.getByRole('button', { name: 'Approve' });
    await approve.waitFor();
    await expect.poll(() => onTop(page, approve)).toBe(true);
    await approve.click();
    expect(await pending).toBe('Deleted c-none');
    await page.close();
  });
});

describe('tools a component provides (MCP Apps app-provided tools)', () => {
  it('lists them beside the transcript and lets the model call them', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, budget.url, 'show-budget', {});
    const frame = await widgetFrame(page, 'show-budget');
    const tool = page.locator('#app-tools details.app-tool[data-tool="get-allocations"]');
    await tool.waitFor();
    expect(await tool.innerText()).toContain('show-budget component');
    await tool.locator('summary').first().click();
    await tool.getByRole('button', { name: 'Call get-allocations' }).click();
    const transcript = page.locator('#transcript');
    await expect.poll(() => transcript.innerText()).toContain('"people": 50');
    expect(await transcript.innerText()).toContain('Tool call: get-allocations (tool of the show-budget component)');
    expect((await budgetState(frame)).toolCalls).toBe(1);
    // They go with the component.
    await page.click('article.turn[data-tool="show-budget"] button.rerender');
    await expect.poll(async () => (await budgetState(await widgetFrame(page, 'show-budget'))).connected).toBe(true);
    await expect.poll(() => page.locator('#app-tools details.app-tool').count()).toBe(1);
    await page.close();
  });
});

describe('off loopback', () => {
  it('the page asks for the admin key, keeps it in the tab and sends it', async () => {
    const exposed = await startHost('vendor', { host: '0.0.0.0', outboundAllow: '127.0.0.1' });
    exposed.ctx.auth.setAdminKey(TEST_KEYS.admin);
    try {
      const page = await context.newPage();
      const q = new URLSearchParams({ server: budget.url, tool: 'show-budget', args: '{}' });
      await page.goto(`${exposed.url}/apps?${q}`);
      const key = page.locator('#admin-key');
      await key.waitFor();
      await key.fill('sk-admin-wrong-key-000000000000000000000');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.locator('#status').innerText()).toContain('admin key');
      await key.fill(TEST_KEYS.admin);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const frame = await widgetFrame(page, 'show-budget');
      await waitInFrame(frame, () => (window as unknown as { __budget: BudgetState }).__budget.result !== null);
      expect(await page.evaluate(() => sessionStorage.getItem('standin.adminKey'))).toBe(TEST_KEYS.admin);
      await page.close();
    } finally {
      await exposed.close();
    }
  });
});
