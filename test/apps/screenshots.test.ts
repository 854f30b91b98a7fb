// Screenshots of the host at 1280 and 390 px, light and dark: a component rendered, and a pending approval.
// They go to test-output/apps (gitignored) for a person to look at; the test checks what a person would see
// wrong in them: a page wider than the window, or an approval prompt that cannot be pressed.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { buildWeb, launchChromium, openHost, startHost, startTour, widgetFrame, waitInFrame } from './harness.js';

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'apps');
let browser: Browser;
let host: Awaited<ReturnType<typeof startHost>>;
let tour: Awaited<ReturnType<typeof startTour>>;

beforeAll(async () => {
  await buildWeb();
  mkdirSync(SHOTS, { recursive: true });
  [browser, host, tour] = await Promise.all([launchChromium(), startHost(), startTour()]);
});
afterAll(async () => {
  await browser?.close();
  await host?.close();
  await tour?.stop();
});

describe('host screenshots', () => {
  for (const width of [1280, 390])
    for (const scheme of ['light', 'dark'] as const)
      it(`at ${width} px, ${scheme}: a component, and a pending approval`, async () => {
        const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme });
        try {
          const page = await context.newPage();
          await openHost(page, host.url, tour.url, 'show_board', { board: 'team' });
          const frame = await widgetFrame(page, 'show_board');
          await waitInFrame(frame, () => ((window as unknown as { __tour?: { renders: number } }).__tour?.renders ?? 0) > 0);
          expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(scheme);
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
          // The whole page: the window grown to it first, so the component's frame paints at its final size.
          await page.setViewportSize({ width, height: Math.min(await page.evaluate(() => document.documentElement.scrollHeight), 2400) });
          await page.evaluate(() => scrollTo(0, 0));
          await frame.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
          await page.screenshot({ path: join(SHOTS, `host-${width}-${scheme}.png`) });
          await page.setViewportSize({ width, height: 900 });

          await openHost(page, host.url, tour.url, 'delete_card', { id: 'c1' });
          await widgetFrame(page, 'delete_card');
          const approve = page.getByRole('button', { name: 'Approve' });
          await approve.waitFor();
          await approve.scrollIntoViewIfNeeded();
          const box = (await approve.boundingBox())!;
          const handle = await approve.elementHandle();
          const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
          expect(
            await page.evaluate(([el, px, py]) => el === document.elementFromPoint(px as number, py as number), [handle, x, y] as const),
          ).toBe(true);
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
          await page.screenshot({ path: join(SHOTS, `host-approval-${width}-${scheme}.png`) });
          // The user makes the frame fullscreen: the prompt floats above it, in the dock.
          await page.click('article.turn[data-tool="delete_card"] .turn-controls button[data-mode="fullscreen"]');
          await page.locator('#approval-dock .approval').waitFor();
          await page.screenshot({ path: join(SHOTS, `host-approval-fullscreen-${width}-${scheme}.png`) });
        } finally {
          await context.close();
        }
      });
});
