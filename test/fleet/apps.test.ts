import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWeb, launchChromium, openHost, startTour, widgetFrame, waitInFrame } from '../apps/harness.js';
import { ensureBuilt, freePort } from '../process.js';
import { startInstances } from './instances.js';
import { startBalancer, type Balancer, type Made } from './proxy.js';

/**
 * The app host without sticky sessions: two real instances on one PostgreSQL database behind a balancer
 * that alternates every request between them, and sends each request for a component document or an
 * uploaded file to the instance that did not make it. A host page in Chromium runs a tool, renders its
 * component, calls tools from it, uploads a file and downloads it.
 */
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;

describe.runIf(databaseUrl)('the app host on two instances behind a balancer', () => {
  let fleet: Awaited<ReturnType<typeof startInstances>>;
  let main: Balancer;
  let widgets: Balancer;
  let browser: Browser;
  let tour: Awaited<ReturnType<typeof startTour>>;
  const made: Made = new Map();
  const mainBackends: string[] = [];
  const widgetBackends: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    await buildWeb();
    [main, widgets] = await Promise.all([startBalancer(mainBackends, made), startBalancer(widgetBackends, made)]);
    const widgetPorts = [await freePort(), await freePort()];
    fleet = await startInstances('fleet_apps', {
      env: (i) => ({
        STANDIN_WIDGET_PORT: String(widgetPorts[i]),
        STANDIN_PUBLIC_URL: main.url,
        STANDIN_WIDGET_PUBLIC_URL: widgets.url,
      }),
    });
    for (const [i, inst] of fleet.instances.entries()) {
      mainBackends.push(inst.base);
      widgetBackends.push(`http://127.0.0.1:${widgetPorts[i]}`);
    }
    [browser, tour] = await Promise.all([launchChromium(), startTour()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await tour?.stop();
    await fleet?.close();
    await main?.close();
    await widgets?.close();
  });

  const inFrame = <T>(frame: Frame, fn: string) => frame.evaluate<T>(`(async () => { const api = window.vendor; ${fn} })()`);
  /** Which instances served requests of `path` on a balancer. */
  const servedBy = (b: Balancer, test: (path: string) => boolean) => new Set(b.log.filter(([p]) => test(p)).map(([, i]) => i));

  it('serves one host session from both instances: connect, run, render, call from the component, upload, download', async () => {
    const page: Page = await browser.newPage();
    await openHost(page, main.url, tour.url, 'show_board', { board: 'team' });
    const frame = await widgetFrame(page, 'show_board');
    await waitInFrame(frame, () => (window as any).__tour?.renders > 0);

    // An upload made through one instance, its download URL signed by the other and fetched from either.
    await frame.setInputFiles('#file', { name: 'fleet.txt', mimeType: 'text/plain', buffer: Buffer.from('hello fleet') });
    await waitInFrame(frame, () => (window as any).__tour.results.upload);
    const up = await frame.evaluate(() => (window as any).__tour.results.upload);
    expect(up.fileId).toMatch(/^file_/);
    const dl = await inFrame<any>(
      frame,
      `const { downloadUrl } = await api.getFileDownloadUrl({ fileId: '${up.fileId}' }); return { downloadUrl, text: await (await fetch(downloadUrl)).text() };`,
    );
    expect(dl.text).toBe('hello fleet');
    expect(dl.downloadUrl.startsWith(main.url)).toBe(true);

    // A tool call from the component, through whichever instance is next.
    const added = await inFrame<any>(frame, `return await api.callTool('add_card', { title: 'Across instances' });`);
    expect(added.structuredContent.cards.map((c: any) => c.title)).toContain('Across instances');
    const again = await inFrame<any>(frame, `return await api.callTool('refresh_board', {});`);
    expect(again.structuredContent.board).toBe('team');

    // Both instances served API requests of this one page, and neither served only its own documents and files.
    expect(servedBy(main, (p) => p.startsWith('POST /apps/api/'))).toEqual(new Set([0, 1]));
    // The sandbox proxy page of a document and the frame page it writes the document into.
    const docId = (p: string) => /^GET \/_standin\/sandbox\/([a-f0-9]+)/.exec(p)?.[1];
    const docs = widgets.log.filter(([p]) => docId(p));
    expect(docs.length).toBeGreaterThan(0);
    for (const [p, served] of docs) expect(served).not.toBe(made.get(docId(p)!));
    const download = main.log.find(([p]) => p === `GET /apps/files/${up.fileId}`);
    expect(download?.[1]).not.toBe(made.get(up.fileId));
    await page.close();
  }, 90_000);
});
