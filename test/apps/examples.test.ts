// The MCP Apps project's own example servers (npm, @modelcontextprotocol/server-*), run over stdio and rendered in
// Chromium through the host page: each renders and works, under the CSP profile it needs. Those that need the
// internet (map, wiki-explorer, video-resource) are not here. The three.js and PDF examples need what only the
// lenient profile allows; under the strict one they break, and the page and the lint say which directives.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Frame, Page } from 'playwright-core';
import { buildWeb, launchChromium, openHost, startHost, widgetFrame } from './harness.js';
import { tinyPdf } from './examples/tiny-pdf.js';

/** The command that runs an example server over stdio. */
function example(pkg: string, ...args: string[]): string {
  const dir = new URL(`../../node_modules/@modelcontextprotocol/${pkg}/`, import.meta.url).pathname;
  const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { bin: string | Record<string, string> };
  const bin = typeof meta.bin === 'string' ? meta.bin : Object.values(meta.bin)[0];
  return [process.execPath, join(dir, bin), '--stdio', ...args].join(' ');
}

let browser: Browser;
let host: Awaited<ReturnType<typeof startHost>>;
let pdfDir: string;

beforeAll(async () => {
  await buildWeb();
  browser = await launchChromium();
  host = await startHost();
  pdfDir = mkdtempSync(join(tmpdir(), 'standin-pdf-'));
  writeFileSync(join(pdfDir, 'hello.pdf'), tinyPdf('Hello Standin'));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await host?.close();
  if (pdfDir) rmSync(pdfDir, { recursive: true, force: true });
});

/** Renders a tool of an example under a CSP profile chosen with the page's control; resolves with the component. */
async function render(command: string, tool: string, args: unknown, profile: 'strict' | 'lenient' = 'strict') {
  host.ctx.services.apps.allowCommand(command);
  const page = await browser.newPage();
  await page.goto(`${host.url}/apps`);
  await page.selectOption('#csp-profile', profile);
  await openHost(page, host.url, command, tool, args);
  const frame = await widgetFrame(page, tool);
  // Initialized: the MCP Apps handshake went through the proxy both ways.
  await page.waitForFunction(() => [...(window as any).__standinHost.instances].some((w: any) => w.initialized));
  return { page, frame };
}

const text = (frame: Frame) => frame.evaluate(() => document.body.innerText);
const transcript = (page: Page) => page.locator('#transcript-entries').innerText();
/** The page's report of what a template's components needed beyond the strict CSP. */
const needs = (page: Page, uri: string) =>
  page
    .locator(`#csp-needs li[data-uri="${uri}"] li`)
    .evaluateAll((els) =>
      els.map((e) => `${(e as HTMLElement).dataset.directive} ${(e as HTMLElement).dataset.source} ${(e as HTMLElement).dataset.blocked}`),
    );

describe('the basic examples (one per framework) render, call their tool and send messages under the strict CSP', () => {
  for (const pkg of ['vanillajs', 'vue', 'react', 'preact', 'solid', 'svelte']) {
    it(`server-basic-${pkg}`, async () => {
      const { page, frame } = await render(example(`server-basic-${pkg}`), 'get-time', {});
      await expect.poll(() => text(frame), { timeout: 20_000 }).toMatch(/Server Time:\s*\d{4}-\d\d-\d\dT[\d:.]+Z/);
      expect(await text(frame)).not.toContain('ERROR');
      // The parent the framework sees is the sandbox proxy, on the component's own origin (Vue reads it).
      expect(await frame.evaluate(() => window.parent.location.origin === location.origin && window.parent !== window.top)).toBe(true);
      await frame.getByRole('button', { name: 'Get Server Time' }).click();
      await expect.poll(() => transcript(page), { timeout: 20_000 }).toContain('Tool call from the component: get-time');
      await frame.getByRole('button', { name: 'Send Message' }).click();
      await expect.poll(() => transcript(page), { timeout: 20_000 }).toContain('This is message text.');
      // Its SDK probes for eval with an empty function, which the strict CSP refuses: a probe, not a need.
      expect(await page.locator('#csp-needs').isHidden()).toBe(true);
      await page.close();
    }, 90_000);
  }
});

describe('the other examples that need no internet render under the strict CSP', () => {
  const cases: [string, string, unknown, RegExp | string][] = [
    ['server-budget-allocator', 'get-budget-data', {}, 'Budget Allocator'],
    ['server-cohort-heatmap', 'get-cohort-data', {}, 'Cohort Retention Analysis'],
    ['server-customer-segmentation', 'get-customer-data', {}, 'Customer Segmentation'],
    ['server-scenario-modeler', 'get-scenario-data', {}, 'SaaS Scenario Modeler'],
    ['server-transcript', 'transcribe', {}, 'Your speech will appear here'],
    ['server-sheet-music', 'play-sheet-music', { abcNotation: 'X:1\nT:Scale\nM:4/4\nL:1/4\nK:C\nC D E F | G A B c |' }, 'Scale'],
  ];
  for (const [pkg, tool, args, shows] of cases)
    it(
      pkg,
      async () => {
        const { page, frame } = await render(example(pkg), tool, args);
        await expect.poll(() => text(frame), { timeout: 20_000 }).toContain(shows);
        await page.close();
      },
      90_000,
    );

  it('server-system-monitor polls its own tool from the component', async () => {
    const { page, frame } = await render(example('server-system-monitor'), 'get-system-info', {});
    await expect.poll(() => text(frame), { timeout: 20_000 }).toMatch(/CPU USAGE[\s\S]*MEMORY/);
    await expect.poll(() => transcript(page), { timeout: 20_000 }).toContain('Tool call from the component: poll-system-stats');
    await page.close();
  }, 90_000);

  it('server-shadertoy draws into its canvas', async () => {
    const shader = 'void mainImage(out vec4 fragColor, in vec2 fragCoord) { fragColor = vec4(fragCoord / iResolution.xy, 0.5, 1.0); }';
    const { page, frame } = await render(example('server-shadertoy'), 'render-shadertoy', { fragmentShader: shader });
    await frame.locator('canvas').first().waitFor();
    expect(await text(frame)).not.toMatch(/error|invalid/i);
    await page.close();
  }, 90_000);
});

describe('three.js and the PDF viewer need the lenient profile; the page says what the strict one refuses', () => {
  const THREE = 'ui://threejs/mcp-app.html';
  const PDF = 'ui://pdf-viewer/mcp-app.html';

  it('three.js breaks under the strict profile on unsafe-eval, and the page names it', async () => {
    const { page, frame } = await render(example('server-threejs'), 'show_threejs_scene', {});
    await expect.poll(() => text(frame), { timeout: 20_000 }).toContain("'unsafe-eval' is not an allowed source");
    await expect.poll(() => needs(page, THREE)).toContain("script-src 'unsafe-eval' true");
    await page.close();
  }, 90_000);

  it('three.js renders under the lenient profile, reported as working here and refused by a strict host', async () => {
    const { page, frame } = await render(example('server-threejs'), 'show_threejs_scene', {}, 'lenient');
    await frame.locator('canvas').first().waitFor();
    await expect.poll(() => needs(page, THREE)).toContain("script-src 'unsafe-eval' false");
    expect(await text(frame)).not.toContain('Error');
    await page.close();
  }, 90_000);

  it('the PDF viewer shows a local PDF under the lenient profile; its blob: worker is reported, and linted', async () => {
    const file = join(pdfDir, 'hello.pdf');
    const command = example('server-pdf', file);
    const { page, frame } = await render(command, 'display_pdf', { url: file }, 'lenient');
    await expect.poll(() => text(frame), { timeout: 30_000 }).toMatch(/of 1/);
    await frame.locator('canvas').first().waitFor();
    await expect.poll(() => needs(page, PDF), { timeout: 20_000 }).toContain('worker-src blob: false');
    // The widget listener recorded the reports (report-uri): the connection's lint findings say it too.
    const findings = async () => {
      const r = await host.req('POST', '/apps/api/connect', { body: { server: command, refresh: true } });
      return (r.body as { findings: { rule: string; path: string; message: string }[] }).findings.filter(
        (f) => f.rule === 'csp.strictProfile',
      );
    };
    await expect
      .poll(async () => (await findings()).map((f) => f.path), { timeout: 20_000 })
      .toContain(`$.resources["${PDF}"]._meta.ui.csp`);
    expect((await findings()).find((f) => f.message.includes('worker-src'))?.message).toMatch(/works in hosts with a lenient policy/);
    await page.close();
  }, 120_000);
});
