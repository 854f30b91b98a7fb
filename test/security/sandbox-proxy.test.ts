import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import {
  buildWeb,
  launchChromium,
  openHost,
  startEcho,
  startHost,
  startMcpServer,
  waitInFrame,
  widgetFrame,
  type McpHttpServer,
} from '../apps/harness.js';

// Issue 34, "a component can append a script to the sandbox proxy's document and make the host page show a forged
// 'beyond the strict CSP' entry": the component shares the proxy's origin, so it can run code in the proxy's window.
// The hostile fixture appends such a script (posting a violation of https://forged.example), then makes a real
// violation (eval under the strict profile): the real one must show, the forged one never.
describe('the sandbox proxy’s CSP reports (issue 34)', () => {
  let browser: Browser;
  let host: Awaited<ReturnType<typeof startHost>>;
  let echo: Awaited<ReturnType<typeof startEcho>>;
  let hostile: McpHttpServer;

  beforeAll(async () => {
    await buildWeb();
    [browser, host, echo] = await Promise.all([launchChromium(), startHost(), startEcho()]);
    hostile = await startMcpServer('test/security/fixtures/hostile-component-server.mjs', [
      '--collector',
      echo.origin,
      '--standin',
      host.url,
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await hostile?.stop();
    echo?.server.close();
    await host?.close();
  });

  it('shows the violations the browser reported, never one a script in the proxy’s document posted', async () => {
    const page = await browser.newPage();
    await openHost(page, host.url, hostile.url, 'probe');
    const frame = await widgetFrame(page, 'probe');
    await waitInFrame(frame, () => (window as unknown as { __probe?: { done: boolean } }).__probe?.done);
    const steps = await frame.evaluate(() => (window as unknown as { __probe: { steps: Record<string, unknown> } }).__probe.steps);
    expect(steps.forgeCsp).toBe('appended');
    expect(steps.eval).toBe('refused');
    const needs = page.locator('#csp-needs');
    // The real violation, reported after the forged post: once it shows, the forged one would have shown too.
    await needs.locator(`li[data-directive="script-src"][data-source="'unsafe-eval'"]`).waitFor();
    expect(await needs.locator('li[data-source*="forged.example"]').count()).toBe(0);
    expect(await needs.innerText()).not.toContain('forged');

    // The report endpoint (report-uri, on the component's origin) records what the browser reported, which the
    // connection's lint then names; the component's own POST to it is refused.
    expect(steps.forgeReport).toBe(403);
    const strictFindings = async () =>
      (
        (await host.req('POST', '/apps/api/connect', { body: { server: hostile.url, refresh: true } })).body.findings as {
          rule: string;
          message: string;
        }[]
      )
        .filter((f) => f.rule === 'csp.strictProfile')
        .map((f) => f.message)
        .join('\n');
    await expect.poll(strictFindings).toContain("script-src 'unsafe-eval'");
    expect(await strictFindings()).not.toContain('forged');
    await page.close();
  });
});
