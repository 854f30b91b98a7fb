import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { adminModule } from '../../src/admin/module.js';
import { applyConfig } from '../../src/admin/config-file.js';
import {
  buildWeb,
  componentFrame,
  launchChromium,
  openHost,
  startEcho,
  startHost,
  startTour,
  widgetFrame,
  waitInFrame,
} from './harness.js';

let browser: Browser;
let host: Awaited<ReturnType<typeof startHost>>;
let tour: Awaited<ReturnType<typeof startTour>>;
let allowed: Awaited<ReturnType<typeof startEcho>>;
let blocked: Awaited<ReturnType<typeof startEcho>>;
let context: BrowserContext;

beforeAll(async () => {
  await buildWeb();
  [allowed, blocked] = await Promise.all([startEcho(), startEcho()]);
  [browser, host, tour] = await Promise.all([launchChromium(), startHost(), startTour(['--connect-domain', allowed.origin])]);
  context = await browser.newContext();
  // External links open popups; keep them off the network.
  await context.route(/^https:\/\//, (r) => r.fulfill({ status: 200, body: 'external' }));
});
afterAll(async () => {
  await browser?.close();
  await host?.close();
  await tour?.stop();
  allowed?.server.close();
  blocked?.server.close();
});

async function board(args: Record<string, unknown> = { board: 'team' }): Promise<{ page: Page; frame: Frame }> {
  const page = await context.newPage();
  await openHost(page, host.url, tour.url, 'show_board', args);
  const frame = await widgetFrame(page, 'show_board');
  await waitInFrame(frame, () => (window as any).__tour?.renders > 0);
  return { page, frame };
}
const inFrame = <T>(frame: Frame, fn: string) => frame.evaluate<T>(`(async () => { const api = window.vendor; ${fn} })()`);
const transcript = (page: Page) => page.locator('#transcript').innerText();

describe('globals', () => {
  it('gives the component every global of the spec, with the tool output and widget-only metadata', async () => {
    const { page, frame } = await board();
    const g = await inFrame<any>(
      frame,
      `return JSON.parse(JSON.stringify(Object.fromEntries(['toolInput','toolOutput','toolResponseMetadata','widgetState','theme','displayMode','maxHeight','safeArea','view','userAgent','locale'].map(k => [k, api[k]]))));`,
    );
    expect(g.toolInput).toEqual({ board: 'team' });
    expect(g.toolOutput.board).toBe('team');
    expect(g.toolOutput.cards.length).toBeGreaterThanOrEqual(1);
    const meta = g.toolResponseMetadata;
    expect(meta.status).toBe('success');
    expect(meta.secret).toBe('only the component sees this');
    expect(meta.call_tool_result).toEqual({ structuredContent: g.toolOutput, content: [{ type: 'text', text: expect.any(String) }] });
    expect(meta.mcp_tool_result._meta.secret).toBe('only the component sees this');
    expect(meta['vendor/widgetSessionId']).toMatch(/^ws_/);
    expect(meta.mcp_tool_result._meta['vendor/widgetSessionId']).toBe(meta['vendor/widgetSessionId']);
    expect(g.widgetState).toBeNull();
    expect(['light', 'dark']).toContain(g.theme);
    expect(g.displayMode).toBe('inline');
    expect(g.maxHeight).toBeGreaterThan(0);
    expect(g.safeArea).toEqual({ insets: { top: 0, bottom: 0, left: 0, right: 0 } });
    expect(g.view).toEqual({ mode: 'inline', params: null });
    expect(g.userAgent.device.type).toBe('desktop');
    expect(typeof g.locale).toBe('string');
    // The model sees structuredContent and content, never _meta; the widget description when the component loads.
    const t = await transcript(page);
    expect(t).toContain('Write the spec');
    expect(t).not.toContain('only the component sees this');
    expect(t).toContain('A kanban board');
    // Client metadata reached the server with the call.
    const received = meta.mcp_tool_result._meta.receivedMeta;
    for (const k of ['vendor/locale', 'vendor/userAgent', 'vendor/userLocation', 'vendor/subject', 'vendor/session'])
      expect(received[k], k).toBeDefined();
    expect(received['vendor/userLocation'].timezone).toBeTruthy();
    await page.close();
  });

  it('sends vendor:set_globals with detail.globals when the host theme or locale changes', async () => {
    const { page, frame } = await board();
    await page.selectOption('#theme', 'dark');
    await waitInFrame(frame, () => (window as any).vendor.theme === 'dark');
    await page.fill('#locale', 'fr-FR');
    await page.locator('#locale').dispatchEvent('change');
    await waitInFrame(frame, () => (window as any).vendor.locale === 'fr-FR');
    const events = await frame.evaluate(() => (window as any).__tour.events);
    expect(events).toContainEqual({ theme: 'dark' });
    expect(events).toContainEqual({ locale: 'fr-FR' });
    await page.close();
  });
});

describe('methods', () => {
  it('callTool mirrors a model call, keeps widgetSessionId stable, and follows the visibility rules', async () => {
    const { page, frame } = await board();
    const r = await inFrame<any>(frame, `return await api.callTool('add_card', { title: 'From the component' });`);
    expect(r.structuredContent.cards.map((c: any) => c.title)).toContain('From the component');
    expect(r._meta['vendor/widgetSessionId']).toBe(await inFrame(frame, `return api.toolResponseMetadata['vendor/widgetSessionId'];`));
    // App-only tools are callable by the component, model-only tools are not.
    expect((await inFrame<any>(frame, `return await api.callTool('refresh_board', {});`)).structuredContent.board).toBe('team');
    expect(
      await inFrame<string>(frame, `try { await api.callTool('board_stats', {}); return 'called'; } catch (e) { return e.message; }`),
    ).toMatch(/visibility/);
    expect(await transcript(page)).toContain('Tool call from the component: add_card');
    // The host, acting as the model, cannot call the app-only tool.
    expect(await page.locator('details.tool[data-tool="refresh_board"] button[type="submit"]').isDisabled()).toBe(true);
    const res = await page.evaluate(
      async (conn) =>
        (
          await fetch('/apps/api/call', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ connection: conn, name: 'refresh_board', arguments: {}, caller: 'model' }),
          })
        ).status,
      await page.evaluate(() => (window as any).__standinHost.connection.id),
    );
    expect(res).toBe(403);
    await page.close();
  });

  it('setWidgetState stores at once and the state comes back on re-render, with a new widgetSessionId', async () => {
    const { page, frame } = await board();
    const before = await inFrame<string>(frame, `return api.toolResponseMetadata['vendor/widgetSessionId'];`);
    const now = await inFrame<any>(
      frame,
      `api.setWidgetState({ modelContent: { selected: 'c2' }, privateContent: { scroll: 3 }, imageIds: ['img_1'] }); return api.widgetState;`,
    );
    expect(now.modelContent).toEqual({ selected: 'c2' });
    await page.waitForFunction(() => document.querySelector('#transcript')!.textContent!.includes('Widget state'));
    const t = await transcript(page);
    expect(t).toContain('img_1');
    expect(t).not.toContain('scroll'); // privateContent stays private
    await page.click('article.turn[data-tool="show_board"] button.rerender');
    await page.waitForFunction(
      (old) => Array.from(document.querySelectorAll('iframe')).some((f) => f.dataset.widgetSession !== old),
      before,
    );
    const again = await widgetFrame(page, 'show_board');
    expect(await inFrame<any>(again, `return api.widgetState;`)).toEqual({
      modelContent: { selected: 'c2' },
      privateContent: { scroll: 3 },
      imageIds: ['img_1'],
    });
    expect(await inFrame<string>(again, `return api.toolResponseMetadata['vendor/widgetSessionId'];`)).not.toBe(before);
    await page.close();
  });

  it('sendFollowUpMessage posts into the transcript', async () => {
    const { page, frame } = await board();
    expect(await inFrame(frame, `return await api.sendFollowUpMessage({ prompt: 'Show me the cards in progress' });`)).toEqual({});
    expect(await transcript(page)).toContain('Show me the cards in progress');
    await page.close();
  });

  it('requestDisplayMode switches inline, picture-in-picture and fullscreen, and the component hears it', async () => {
    const { page, frame } = await board();
    const box = page.locator('article.turn[data-tool="show_board"] .frame-box');
    for (const mode of ['fullscreen', 'pip', 'inline']) {
      expect(await inFrame(frame, `return await api.requestDisplayMode({ mode: '${mode}' });`)).toEqual({ mode });
      await expect.poll(() => box.getAttribute('class')).toContain(`mode-${mode}`);
      await waitInFrame(frame, (m) => (window as any).vendor.displayMode === m, mode);
    }
    expect(await inFrame(frame, `return await api.requestDisplayMode({ mode: 'sideways' });`)).toEqual({ mode: 'inline' });
    // Fullscreen covers the window.
    await inFrame(frame, `return await api.requestDisplayMode({ mode: 'fullscreen' });`);
    const rect = await box.boundingBox();
    expect(rect!.width).toBe(page.viewportSize()!.width);
    // setOpenInAppUrl sets what fullscreen's open-in-app link opens.
    expect(await inFrame(frame, `return await api.setOpenInAppUrl({ href: 'https://tour.example/board/team' });`)).toEqual({});
    await expect.poll(() => box.getAttribute('data-open-in-app')).toBe('https://tour.example/board/team');
    const popup = context.waitForEvent('page');
    await box.locator('a.open-in-app').click();
    expect((await popup).url()).toBe('https://tour.example/board/team');
    await page.close();
  });

  it('notifyIntrinsicHeight sizes the inline frame; past maxHeight the frame is shown up to it and scrolls', async () => {
    const { page, frame } = await board();
    await inFrame(frame, `await api.notifyIntrinsicHeight(300);`);
    const iframe = page.locator('article.turn[data-tool="show_board"] iframe');
    await expect.poll(async () => (await iframe.boundingBox())!.height).toBe(300);
    await inFrame(frame, `await api.notifyIntrinsicHeight(5000);`);
    // The frame takes the whole height (nothing is cut off); the box around it shows maxHeight and scrolls.
    await expect.poll(async () => (await iframe.boundingBox())!.height).toBe(5000);
    const cap = await inFrame<number>(frame, `return api.maxHeight;`);
    const box = page.locator('article.turn[data-tool="show_board"] .frame-scroll');
    expect((await box.boundingBox())!.height).toBe(cap);
    expect(await box.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
    await page.close();
  });

  it('requestModal opens a host modal with the template and params; requestClose closes it', async () => {
    const { page, frame } = await board();
    expect(await inFrame(frame, `return await api.requestModal({ params: { cardId: 'c1' } });`)).toEqual({});
    const modalIframe = page.locator('#modal-root .modal iframe');
    await modalIframe.waitFor();
    const modal = await componentFrame((await modalIframe.elementHandle())!);
    await waitInFrame(modal, () => (window as any).vendor?.view?.mode === 'modal');
    expect(await modal.evaluate(() => (window as any).vendor.view)).toEqual({ mode: 'modal', params: { cardId: 'c1' } });
    await modal.evaluate(() => void setTimeout(() => (window as any).vendor.requestClose(), 0));
    await page.locator('#modal-root .modal').waitFor({ state: 'detached' });
    // Another template of the same server works; an unknown one is refused.
    expect(await inFrame(frame, `return await api.requestModal({ template: 'ui://tour/ext-app.html' });`)).toEqual({});
    await page.locator('#modal-root .modal').waitFor();
    await page.click('#modal-root .modal-close');
    expect(
      await inFrame<string>(
        frame,
        `try { await api.requestModal({ template: 'ui://elsewhere/x.html' }); return 'opened'; } catch (e) { return e.message; }`,
      ),
    ).toMatch(/could not be read/);
    await page.close();
  });

  it('requestClose tears the inline component down', async () => {
    const { page, frame } = await board();
    await inFrame(frame, `setTimeout(() => api.requestClose(), 0);`);
    await page.locator('article.turn[data-tool="show_board"] iframe').waitFor({ state: 'detached' });
    expect(await page.locator('article.turn[data-tool="show_board"] .turn-status').innerText()).toContain('closed');
    await page.close();
  });

  it('openExternal appends redirectUrl only for approved redirect targets, unless redirectUrl is false', async () => {
    const { page, frame } = await board();
    const box = page.locator('article.turn[data-tool="show_board"] .frame-box');
    const open = async (args: string) => {
      const popup = context.waitForEvent('page');
      await inFrame(frame, `return await api.openExternal(${args});`);
      const p = await popup;
      const u = p.url();
      await p.close();
      return new URL(u);
    };
    const approved = await open(`{ href: 'https://redirect.example/checkout' }`);
    expect(approved.searchParams.get('redirectUrl')).toContain('/apps?');
    expect(await box.getAttribute('data-last-external')).toBe(approved.toString());
    expect((await open(`{ href: 'https://redirect.example/checkout', redirectUrl: false }`)).searchParams.has('redirectUrl')).toBe(false);
    expect((await open(`{ href: 'https://other.example/page' }`)).searchParams.has('redirectUrl')).toBe(false);
    expect(
      await inFrame<string>(
        frame,
        `try { await api.openExternal({ href: 'javascript:alert(1)' }); return 'opened'; } catch (e) { return e.message; }`,
      ),
    ).toMatch(/http/);
    await page.close();
  });

  it('mirrors the frame navigation into the host (pushState and back)', async () => {
    const { page, frame } = await board();
    expect(await frame.evaluate(() => location.pathname)).toBe('/');
    await frame.click('#navigate');
    const path = page.locator('article.turn[data-tool="show_board"] .nav-path');
    await expect.poll(() => path.innerText()).toBe('/cards/1');
    const back = page.locator('article.turn[data-tool="show_board"] .nav-back');
    expect(await back.isDisabled()).toBe(false);
    await back.click();
    await expect.poll(() => frame.evaluate(() => location.pathname)).toBe('/');
    await expect.poll(() => path.innerText()).toBe('/');
    expect(await frame.locator('#route').innerText()).toBe('route: /');
    await page.close();
  });
});

describe('approval gating', () => {
  it('keeps toolInput null until Approve, then delivers tool-input and the result', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, tour.url, 'delete_card', { id: 'c2' });
    const frame = await widgetFrame(page, 'delete_card');
    await waitInFrame(frame, () => (window as any).__tour?.renders > 0);
    expect(await inFrame(frame, `return api.toolInput;`)).toBeNull();
    expect(await inFrame(frame, `return api.toolOutput;`)).toBeNull();
    expect(await frame.evaluate(() => (window as any).__tour.notifications)).toEqual([]);
    const approve = page.getByRole('button', { name: 'Approve' });
    await approve.waitFor();
    // Not called yet: the server still has the card.
    const other = await context.newPage();
    await openHost(other, host.url, tour.url, 'show_board', {});
    const otherFrame = await widgetFrame(other, 'show_board');
    expect(await inFrame<any>(otherFrame, `return api.toolOutput.cards.map(c => c.id);`)).toContain('c2');
    await other.close();
    await approve.click();
    await waitInFrame(frame, () => (window as any).vendor.toolOutput !== null);
    expect(await inFrame(frame, `return api.toolInput;`)).toEqual({ id: 'c2' });
    expect(await inFrame<any>(frame, `return api.toolOutput.cards.map(c => c.id);`)).not.toContain('c2');
    const events = await frame.evaluate(() => (window as any).__tour.events);
    expect(events[0]).toEqual({ toolInput: { id: 'c2' } });
    // The notification of the spec arrives too, then the result.
    await waitInFrame(frame, () => (window as any).__tour.notifications.length >= 2);
    const notes = await frame.evaluate(() => (window as any).__tour.notifications);
    expect(notes.map((n: any) => n.method)).toEqual(['ui/notifications/tool-input', 'ui/notifications/tool-result']);
    expect(notes[0].params).toEqual({ arguments: { id: 'c2' } });
    await page.close();
  });

  it('Deny leaves the tool uncalled', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, tour.url, 'delete_card', { id: 'c1' });
    await page.getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => page.locator('article.turn[data-tool="delete_card"] .turn-status').innerText()).toContain('Denied');
    await page.close();
  });

  it('asks before a destructive call made by the component', async () => {
    const { page, frame } = await board();
    const pending = inFrame<any>(frame, `return await api.callTool('delete_card', { id: 'nope' });`);
    await page.getByRole('button', { name: 'Approve' }).click();
    expect((await pending).content[0].text).toBe('Deleted nope');
    await page.close();
  });
});

describe('files', () => {
  it('uploadFile, selectFiles and getFileDownloadUrl', async () => {
    const { page, frame } = await board();
    await frame.setInputFiles('#file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello files') });
    await waitInFrame(frame, () => (window as any).__tour.results.upload);
    const up = await frame.evaluate(() => (window as any).__tour.results.upload);
    expect(up.fileId).toMatch(/^file_/);
    const dl = await inFrame<any>(
      frame,
      `const { downloadUrl } = await api.getFileDownloadUrl({ fileId: '${up.fileId}' }); return { downloadUrl, text: await (await fetch(downloadUrl)).text() };`,
    );
    expect(dl.text).toBe('hello files');
    expect(dl.downloadUrl).toContain('expires=');
    // A tampered URL is refused.
    expect(await page.evaluate(async (u) => (await fetch(u.replace(/sig=[^&]+/, 'sig=bad'))).status, dl.downloadUrl)).toBe(404);
    const picked = inFrame<any>(frame, `return await api.selectFiles();`);
    await page.locator('.modal.picker').waitFor();
    await page.getByRole('checkbox', { name: 'notes.txt' }).first().check();
    await page.click('.modal.picker button.select');
    expect(await picked).toContainEqual({ fileId: up.fileId, fileName: 'notes.txt', mimeType: 'text/plain' });
    await page.close();
  });

  it('passes file inputs (fileParams) as the spec file objects', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, tour.url);
    const tool = page.locator('details.tool[data-tool="describe_file"]');
    await tool.locator('summary').first().click();
    await tool
      .locator('input[type="file"][name="file"]')
      .setInputFiles({ name: 'photo.txt', mimeType: 'text/plain', buffer: Buffer.from('12345') });
    await tool.locator('textarea').fill('{}');
    await tool.locator('button[type="submit"]').click();
    await expect.poll(() => transcript(page)).toContain('"size": 5');
    const t = await transcript(page);
    expect(t).toContain('"file_name": "photo.txt"');
    expect(t).toContain('"mime_type": "text/plain"');
    await page.close();
  });
});

describe('security', () => {
  it('enforces the CSP: a declared connect domain is reachable, an undeclared one is blocked', async () => {
    const { page, frame } = await board();
    expect(await inFrame(frame, `return await (await fetch('${allowed.origin}/ok')).text();`)).toBe('echo');
    const r = await inFrame<string>(
      frame,
      `
      const violation = new Promise((resolve) => document.addEventListener('securitypolicyviolation', (e) => resolve(e.violatedDirective), { once: true }));
      try { await fetch('${blocked.origin}/leak'); return 'fetched'; } catch { return 'blocked:' + (await violation); }`,
    );
    expect(r).toBe('blocked:connect-src');
    expect(blocked.hits).toEqual([]);
    expect(allowed.hits).toContain('/ok');
    await page.close();
  });

  it('sandboxes the component on a separate origin: it cannot reach the host page', async () => {
    const { page, frame } = await board();
    const hostOrigin = new URL(host.url).origin;
    const f = await frame.evaluate(() => location.origin);
    expect(f).not.toBe(hostOrigin);
    expect(f).toMatch(/^http:\/\/tour-example\.localhost:\d+$/); // ui.domain gives the app its own origin
    const attempts = await frame.evaluate(() => {
      const tryIt = (fn: () => unknown) => {
        try {
          fn();
          return 'reached';
        } catch (e) {
          return (e as Error).name;
        }
      };
      return {
        // The parent is the MCP Apps sandbox proxy, on the component's own origin; the host page is above it.
        proxy: window.parent.location.origin === location.origin && window.parent !== window.top,
        document: tryIt(() => window.top!.document.body.innerHTML),
        top: tryIt(() => window.top!.location.href),
        storage: tryIt(() => (window.top as any).localStorage.getItem('standin.subject')),
      };
    });
    expect(attempts).toEqual({ proxy: true, document: 'SecurityError', top: 'SecurityError', storage: 'SecurityError' });
    // Top navigation is not in the sandbox.
    const sandbox = await page.locator('article.turn[data-tool="show_board"] iframe').getAttribute('sandbox');
    expect(sandbox).not.toContain('allow-top-navigation');
    expect(sandbox).toContain('allow-scripts');
    // Messages from another window claiming to be the bridge are ignored.
    await page.evaluate(() =>
      window.postMessage(
        { jsonrpc: '2.0', id: 98, method: 'ui/message', params: { role: 'user', content: { type: 'text', text: 'spoofed' } } },
        '*',
      ),
    );
    await frame.evaluate(() =>
      window.parent.postMessage(
        { jsonrpc: '2.0', id: 99, method: 'ui/message', params: { role: 'user', content: { type: 'text', text: 'from the frame' } } },
        '*',
      ),
    );
    await expect.poll(() => transcript(page)).toContain('from the frame'); // from the real frame: accepted
    expect(await transcript(page)).not.toContain('spoofed'); // posted earlier by another window: ignored
    await page.close();
  });

  it('shows the sign-in challenge of mcp/www_authenticate', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, tour.url, 'whoami', {});
    const c = page.locator('article.turn[data-tool="whoami"] .challenge');
    await c.waitFor();
    expect(await c.innerText()).toContain('resource_metadata="https://tour.example/.well-known/oauth-protected-resource"');
    await page.close();
  });

  it('lists lint findings of the server on the page', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, tour.url);
    // The tour declares a local connect domain (the test's echo server): a submission would refuse it.
    expect(await page.locator('#status').innerText()).toMatch(/9 tool\(s\), 2 lint error\(s\)/);
    const finding = page.locator('details.tool[data-tool="show_board"] li[data-rule="csp.local"]').first();
    expect(await finding.textContent()).toContain('is a local address');
    await page.close();
  });
});

describe('MCP Apps standard (ext-apps App class)', () => {
  it('initializes, receives tool input, result and host context, and uses the host', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, tour.url, 'ext_app_demo', { greeting: 'bonjour' });
    const frame = await widgetFrame(page, 'ext_app_demo');
    await waitInFrame(frame, () => (window as any).__extApp?.connected && (window as any).__extApp.result);
    const s = await frame.evaluate(() => {
      const x = (window as any).__extApp;
      return {
        input: x.input,
        result: x.result.structuredContent,
        session: x.result._meta?.['vendor/widgetSessionId'],
        context: x.context,
        errors: x.errors,
      };
    });
    expect(s.errors).toEqual([]);
    expect(s.input).toEqual({ greeting: 'bonjour' });
    expect(s.result).toEqual({ echo: 'bonjour' });
    expect(s.session).toMatch(/^ws_/);
    expect(s.context.displayMode).toBe('inline');
    expect(s.context.toolInfo.tool.name).toBe('ext_app_demo');
    // The tool the component provides is listed beside the transcript.
    await page.locator('#app-tools details.app-tool[data-tool="current_greeting"]').waitFor();
    // Display modes: only those the app declared (inline, fullscreen).
    expect(await frame.evaluate(() => (window as any).__extApp.app.requestDisplayMode({ mode: 'fullscreen' }))).toEqual({
      mode: 'fullscreen',
    });
    expect(await frame.evaluate(() => (window as any).__extApp.app.requestDisplayMode({ mode: 'pip' }))).toEqual({ mode: 'fullscreen' });
    await waitInFrame(frame, () => (window as any).__extApp.context.displayMode === 'fullscreen');
    // host-context-changed on a theme switch.
    const theme = (await page.locator('#theme').inputValue()) === 'dark' ? 'light' : 'dark';
    await page.selectOption('#theme', theme);
    await waitInFrame(frame, (t) => (window as any).__extApp.context.theme === t, theme);
    // tools/call with the visibility rules, resources/read, ui/message, ui/update-model-context, ui/open-link.
    const calls = await frame.evaluate(async () => {
      const app = (window as any).__extApp.app;
      const ok = await app.callServerTool({ name: 'show_board', arguments: {} });
      let refused = '';
      try {
        await app.callServerTool({ name: 'board_stats', arguments: {} });
      } catch (e) {
        refused = (e as Error).message;
      }
      const res = await app.readServerResource({ uri: 'ui://tour/board.html' });
      await app.sendMessage({ role: 'user', content: [{ type: 'text', text: 'hello from ext-apps' }] });
      await app.updateModelContext({ structuredContent: { picked: 'c1' } });
      const link = await app.openLink({ url: 'https://tour.example/docs' });
      await app.sendLog({ level: 'info', data: 'log line from ext-apps' });
      const download = await app.downloadFile({
        contents: [{ type: 'resource', resource: { uri: 'file:///report.txt', mimeType: 'text/plain', text: 'report body' } }],
      });
      return { board: ok.structuredContent.board, refused, mime: res.contents[0].mimeType, link, download };
    });
    expect(calls.board).toBe('team');
    expect(calls.refused).toMatch(/visibility/);
    expect(calls.mime).toBe('text/html+skybridge');
    expect(calls.link).toEqual({});
    expect(calls.download).toEqual({});
    await expect.poll(() => transcript(page)).toContain('log line from ext-apps');
    expect(await transcript(page)).toContain('file:///report.txt');
    const t = await transcript(page);
    expect(t).toContain('hello from ext-apps');
    expect(t).toContain('"picked": "c1"');
    // Teardown: the app answers ui/resource-teardown before the frame goes.
    await page.click('article.turn[data-tool="ext_app_demo"] .frame-box button.exit-mode');
    await waitInFrame(frame, () => (window as any).__extApp.context.displayMode === 'inline');
    await page.click('article.turn[data-tool="ext_app_demo"] button.rerender');
    await page.waitForFunction(() => (window as any).__standinHost.teardowns.length > 0);
    const td = await page.evaluate(() => (window as any).__standinHost.teardowns[0]);
    expect(td.response.result).toEqual({});
    await page.close();
  });

  it('sends tool-input only after Approve to a standard app, and tool-cancelled on Deny', async () => {
    const page = await context.newPage();
    await openHost(page, host.url, tour.url, 'reset_greeting', { greeting: 'x' });
    const frame = await widgetFrame(page, 'reset_greeting');
    await waitInFrame(frame, () => (window as any).__extApp?.connected);
    await page.getByRole('button', { name: 'Approve' }).waitFor();
    expect(await frame.evaluate(() => (window as any).__extApp.input)).toBeNull();
    await page.getByRole('button', { name: 'Approve' }).click();
    await waitInFrame(frame, () => (window as any).__extApp.result);
    expect(await frame.evaluate(() => (window as any).__extApp.input)).toEqual({ greeting: 'x' });
    expect(await frame.evaluate(() => (window as any).__extApp.result.structuredContent)).toEqual({ echo: 'reset' });

    const denied = await context.newPage();
    await openHost(denied, host.url, tour.url, 'reset_greeting', { greeting: 'y' });
    const f2 = await widgetFrame(denied, 'reset_greeting');
    await waitInFrame(f2, () => (window as any).__extApp?.connected);
    await denied.getByRole('button', { name: 'Deny' }).click();
    await waitInFrame(f2, () => (window as any).__extApp.cancelled);
    expect(await f2.evaluate(() => (window as any).__extApp.input)).toBeNull();
    await page.close();
    await denied.close();
  });
});

describe('vendor setting', () => {
  // By the flag, or by a config applied to a running host (the server connection, visibility and template
  // lookups follow the page's vendor).
  it.each(['flag', 'config'])('with vendor openai (%s), components find window.openai and openai:set_globals', async (by) => {
    const h2 = await startHost(by === 'flag' ? 'openai' : 'vendor');
    if (by === 'config') await applyConfig(h2.ctx, [adminModule], { vendor: 'openai' });
    const t2 = await startTour([], 'openai');
    try {
      const page = await context.newPage();
      await openHost(page, h2.url, t2.url, 'show_board', {});
      const frame = await widgetFrame(page, 'show_board');
      await waitInFrame(frame, () => (window as any).__tour?.renders > 0);
      expect(await frame.evaluate(() => typeof (window as any).openai.callTool)).toBe('function');
      expect(await frame.evaluate(() => (window as any).openai.toolResponseMetadata['openai/widgetSessionId'])).toMatch(/^ws_/);
      await page.selectOption('#theme', 'dark');
      await page.selectOption('#theme', 'light');
      await waitInFrame(frame, () => (window as any).__tour.events.length >= 2);
      expect(await frame.evaluate(() => (window as any).__tour.events.slice(-1)[0])).toEqual({ theme: 'light' });
      const received = await frame.evaluate(() => (window as any).openai.toolResponseMetadata.mcp_tool_result._meta.receivedMeta);
      expect(received['openai/locale']).toBeTruthy();
      await page.close();
    } finally {
      await h2.close();
      await t2.stop();
    }
  });
});
