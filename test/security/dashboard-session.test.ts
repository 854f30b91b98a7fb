import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { buildWeb, launchChromium, openHost, startMcpServer, waitInFrame, widgetFrame, type McpHttpServer } from '../apps/harness.js';
import { signedIn } from '../dashboard/harness.js';
import type { Browser, BrowserContext } from 'playwright-core';

// Issue 34, "the dashboard session is an ambient credential": cookies go to every port of a host, so a browser signed
// in to the dashboard sends its session cookie to any other local server, an app component's origin included. These
// tests sign a real Chromium in, let a page on another loopback port and an app component try everything they can,
// and replay whatever reached the other port against Standin from Node.

/** A server on another loopback port: records every request (with its headers) and serves the attack page. */
async function startCollector(standin: () => string) {
  const hits: { path: string; headers: IncomingHttpHeaders }[] = [];
  const waiters: { path: string; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push({ path, headers: req.headers });
    for (const w of waiters.filter((w) => w.path === path)) w.resolve();
    if (path === '/attack') return res.writeHead(200, { 'content-type': 'text/html' }).end(attackPage(standin()));
    res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    server,
    /** Resolves once `path` was requested. */
    reached: (path: string) =>
      hits.some((h) => h.path === path) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ path, resolve })),
  };
}

/** What a page on another port tries: a read by <img>, a write by fetch (simple and with a preflight), a form POST. */
const attackPage = (S: string) => `<!doctype html><title>another port</title>
<img id="img" src="${S}/admin/v1/projects/proj_demo/api_keys?from=other-port-img">
<iframe name="sink"></iframe>
<form id="form" method="post" target="sink" enctype="text/plain" action="${S}/admin/v1/projects/proj_demo/api_keys?from=other-port-form">
<input name='{"name":"form","x":"' value='"}'></form>
<script>
const S = ${JSON.stringify(S)};
const loaded = (el) => new Promise((r) => { el.onload = el.onerror = r; });
const keys = S + '/admin/v1/projects/proj_demo/api_keys';
(async () => {
  const img = document.getElementById('img');
  if (!img.complete) await loaded(img);
  await fetch(keys + '?from=other-port-fetch', { method: 'POST', credentials: 'include', mode: 'no-cors',
    headers: { 'content-type': 'text/plain' }, body: '{"name":"fetch"}' }).catch(() => {});
  await fetch(keys + '?from=other-port-cors', { method: 'POST', credentials: 'include',
    headers: { 'content-type': 'application/json', 'x-standin-csrf': '1' }, body: '{"name":"cors"}' }).catch(() => {});
  const sink = loaded(document.querySelector('iframe'));
  document.getElementById('form').submit();
  await sink;
  await fetch('/done');
})();
</script>`;

describe('the dashboard session on a shared host (issue 34)', () => {
  let s: TestStandin;
  let url: string;
  let browser: Browser;
  let context: BrowserContext;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let hostile: McpHttpServer;

  beforeAll(async () => {
    await buildWeb();
    collector = await startCollector(() => url);
    s = await startTestStandin({ settings: { vendor: 'vendor', widgetPort: 0 } });
    url = await s.listen();
    [browser, hostile] = await Promise.all([
      launchChromium(),
      startMcpServer('test/security/fixtures/hostile-component-server.mjs', ['--collector', collector.origin, '--standin', url]),
    ]);
    ({ context } = await signedIn(browser, url, s.keys.admin));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await hostile?.stop();
    collector?.server.close();
    await s?.close();
  });

  const keyNames = async () =>
    ((await s.req('GET', '/admin/v1/projects/proj_demo/api_keys', { key: 'admin' })).body.data as { name: string }[]).map((k) => k.name);
  /** Standin's answers to the requests whose query names `from` (the request log, read with the admin key). */
  const answered = async (from: string) =>
    ((await s.req('GET', '/admin/v1/requests?limit=500', { key: 'admin' })).body.data as { method: string; path: string; status: number }[])
      .filter((r) => r.path.includes(`from=${from}`) && r.method !== 'OPTIONS')
      .map((r) => `${r.method} ${r.path.split('?from=')[1]} ${r.status}`);

  /** Replays, from Node, every set of headers the collector received since `since`: none may mint a key. */
  async function replayAll(since: number) {
    const received = collector.hits.slice(since);
    // The browser did send the session cookie to the other port: cookies are not scoped to a port.
    expect(received.some((h) => String(h.headers.cookie).includes(`standin_session_${new URL(url).port}=`))).toBe(true);
    for (const { headers } of received) {
      const { host: _h, connection: _c, 'content-length': _l, 'content-type': _t, ...replayed } = headers;
      const res = await fetch(`${url}/admin/v1/projects/proj_demo/api_keys`, {
        method: 'POST',
        headers: { ...(replayed as Record<string, string>), 'content-type': 'application/json', 'x-standin-csrf': '1' },
        body: JSON.stringify({ name: 'replayed' }),
      });
      expect(res.status, `replayed headers of ${headers['sec-fetch-dest']} ${JSON.stringify(replayed)}`).toBe(401);
    }
  }

  it('a page on another loopback port can neither read nor write with it, and nothing it receives signs in', async () => {
    const since = collector.hits.length;
    const page = await context.newPage();
    await page.goto(`${collector.origin}/attack`);
    await collector.reached('/done');
    await replayAll(since);
    expect((await answered('other-port')).sort()).toEqual([
      'GET other-port-img 401',
      'POST other-port-fetch 401',
      'POST other-port-form 401',
    ]);
    expect(await keyNames()).not.toContain('replayed');
    await page.close();
  });

  it('an app component cannot read, send or use it from its sandboxed origin, nor through a file on Standin’s origin', async () => {
    const since = collector.hits.length;
    const page = await context.newPage();
    await openHost(page, url, hostile.url, 'probe');
    const frame = await widgetFrame(page, 'probe');
    await waitInFrame(frame, () => (window as unknown as { __probe?: { done: boolean } }).__probe?.done);
    const steps = await frame.evaluate(() => (window as unknown as { __probe: { steps: Record<string, unknown> } }).__probe.steps);
    expect(steps.cookie).not.toContain('standin_session');
    expect(steps.hostStorage).toBe('threw SecurityError');
    expect(steps.mintCors).toBe('threw TypeError');
    await replayAll(since);
    expect((await answered('component')).sort()).toEqual(['GET component-img 401', 'POST component-fetch 401']);

    // The component's file, behind the signed URL on Standin's own origin, opened as a page (a link it shows): it must
    // not run there, where it would read the page's binding and send it with the cookie.
    expect(steps.file).toMatch(new RegExp(`^${url}/apps/files/`));
    const opened = await context.newPage();
    await opened.goto(steps.file as string);
    expect(await opened.title()).toBe('evil');
    expect(await keyNames()).not.toContain('from-file');
    await opened.close();
    expect(await keyNames()).toEqual(expect.not.arrayContaining(['component', 'cors', 'replayed']));
    await page.close();
  });
});
