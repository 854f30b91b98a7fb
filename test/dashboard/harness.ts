import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../apps/harness.js';

export { launchChromium };

/** Where screenshots go (gitignored); the test run's output. */
export const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'dashboard');

/** The one-time sign-in link the dashboard put in the banner. */
export function bannerLink(banner: string[]): string {
  const line = banner.find((l) => l.includes('/dashboard/sign-in?token='));
  if (!line) throw new Error(`no dashboard link in the banner: ${banner.join('\n')}`);
  return /(http\S+)/.exec(line)![1];
}

/** A browser context (a new one, or `opts.context`) signed in with the admin key through the sign-in form. */
export async function signedIn(
  browser: Browser,
  url: string,
  adminKey: string,
  opts: { width?: number; dark?: boolean; context?: BrowserContext } = {},
) {
  const context =
    opts.context ??
    (await browser.newContext({
      viewport: { width: opts.width ?? 1280, height: 900 },
      colorScheme: opts.dark ? 'dark' : 'light',
    }));
  const page = await context.newPage();
  await page.goto(`${url}/dashboard`);
  await page.getByLabel('Admin key').fill(adminKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
  return { context, page };
}

/** Screenshots of each page at 1280 and 390 px, light and dark, once `ready` says it has loaded. */
export async function screenshots(
  browser: Browser,
  url: string,
  adminKey: string,
  pages: [name: string, path: string, ready: (page: Page) => Promise<void>][],
): Promise<string[]> {
  mkdirSync(SHOTS, { recursive: true });
  const files: string[] = [];
  for (const width of [1280, 390]) {
    for (const dark of [false, true]) {
      const { context, page } = await signedIn(browser, url, adminKey, { width, dark });
      try {
        for (const [name, path, ready] of pages) {
          await page.goto(`${url}${path}`);
          await ready(page);
          const file = join(SHOTS, `${name}-${width}-${dark ? 'dark' : 'light'}.png`);
          // Whole pages, cut at 2400 px (the request log runs to hundreds of rows).
          const height = await page.evaluate(() => document.documentElement.scrollHeight);
          await page.screenshot({ path: file, fullPage: true, clip: { x: 0, y: 0, width, height: Math.min(height, 2400) } });
          files.push(file);
        }
      } finally {
        await context.close();
      }
    }
  }
  return files;
}

export type { Browser, BrowserContext, Page };
