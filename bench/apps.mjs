// App host figures, in Chromium: tool result → the component's first render, and the host page's interactive
// time. Baselines in the same run: a bare iframe of the same component on a plain static server, and a blank page.
// Run after `npm run build`: node bench/apps.mjs [iterations]
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { report, startStandin } from './lib.mjs';

const N = Math.min(Number(process.argv[2] ?? 20), 200);
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

function startTour() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['examples/bridge-tour/server.mjs', '--http', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => {
      const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(String(d));
      if (m) resolve({ url: m[1], stop: () => child.kill('SIGTERM') });
    });
    child.on('exit', (c) => reject(new Error(`the tour exited (${c})`)));
  });
}

/** The baseline component server: the board HTML with a stub bridge holding the same output, no CSP, no host. */
function startStatic() {
  const html = readFileSync('examples/bridge-tour/board.html', 'utf8').replace(/__VENDOR__/g, 'vendor');
  const stub = `<script>window.vendor={toolInput:{},toolOutput:{board:'team',cards:[{id:'c1',title:'Write the spec',column:'done'}]},theme:'light',view:{mode:'inline'}};</script>`;
  const report = `<script>parent.postMessage({ renderedAt: window.__tour.firstDataRenderAt }, '*');</script>`;
  const doc = html.replace('<head>', `<head>${stub}`).replace('</body>', `${report}</body>`);
  const server = createServer((req, res) => {
    if (req.url === '/host') return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><body></body>');
    res.writeHead(200, { 'content-type': 'text/html' }).end(doc);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ origin: `http://127.0.0.1:${server.address().port}`, close: () => server.close() })),
  );
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: q(0.5).toFixed(1), p95: q(0.95).toFixed(1), max: s[s.length - 1].toFixed(1) };
};

const [standin, tour, statics] = await Promise.all([
  startStandin({ args: ['--no-seed', '--widget-port', '0'] }),
  startTour(),
  startStatic(),
]);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ARGS });
try {
  const context = await browser.newContext();
  const page = await context.newPage();

  // 1. Tool result → first render of the component (host: result received; frame: first render with data).
  const resultToRender = [];
  const deep = `${standin.url}/apps?${new URLSearchParams({ server: tour.url, tool: 'show_board', args: '{}' })}`;
  for (let i = 0; i < N + 2; i++) {
    await page.goto(deep);
    const el = await page.waitForSelector('article.turn iframe');
    // The component runs in the inner frame of the sandbox proxy the host page frames.
    const proxy = await el.contentFrame();
    await (await proxy.waitForSelector('iframe', { state: 'attached' })).contentFrame();
    const frame = proxy.childFrames()[0];
    await frame.waitForFunction(() => window.__tour?.firstDataRenderAt);
    const rendered = await frame.evaluate(() => window.__tour.firstDataRenderAt);
    const resultAt = await page.evaluate(() => window.__standinHost.timings.resultAt);
    if (i >= 2) resultToRender.push(rendered - resultAt); // two warm-up rounds
  }

  // Baseline: the same component in a bare cross-site iframe (another *.localhost origin, so the browser starts a
  // renderer for it as it does for a component) on a plain server: no render API, no bridge, no CSP.
  const bare = [];
  await page.goto(`${statics.origin}/host`);
  for (let i = 0; i < N + 2; i++) {
    const t = await page.evaluate(
      async (src) => {
        document.body.textContent = '';
        const start = performance.timeOrigin + performance.now();
        const f = document.createElement('iframe');
        f.src = src + '/c?' + Math.random();
        document.body.append(f);
        const rendered = await new Promise((r) => addEventListener('message', (e) => e.source === f.contentWindow && r(e.data.renderedAt)));
        return rendered - start;
      },
      statics.origin.replace('127.0.0.1', 'baseline.localhost'),
    );
    if (i >= 2) bare.push(t);
  }

  // 2. Host page interactive: navigation start → the page's controls are wired (timings.interactiveAt).
  const interactive = [];
  for (let i = 0; i < N + 2; i++) {
    await page.goto(`${standin.url}/apps`);
    await page.waitForSelector('body[data-interactive="true"]');
    const t = await page.evaluate(() => window.__standinHost.timings.interactiveAt);
    if (i >= 2) interactive.push(t);
  }
  const blank = [];
  for (let i = 0; i < N + 2; i++) {
    await page.goto(`${statics.origin}/host`);
    const t = await page.evaluate(() => performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd);
    if (i >= 2) blank.push(t);
  }

  // 3. Tool call through the host API (page → Standin → MCP server → back), for context.
  await page.goto(`${standin.url}/apps?server=${encodeURIComponent(tour.url)}`);
  await page.waitForSelector('body[data-ready="true"]');
  const calls = await page.evaluate(async (n) => {
    const conn = window.__standinHost.connection.id;
    const out = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await fetch('/apps/api/call', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ connection: conn, name: 'show_board', arguments: {}, caller: 'model' }),
      });
      out.push(performance.now() - t);
    }
    return out;
  }, N * 5);

  const row = (what, xs, target) => ({ measure: what, n: xs.length, ...stats(xs), target });
  report(
    'apps',
    [
      row('tool result → component first render (ms)', resultToRender, '< 300'),
      row('baseline: bare cross-site iframe of the same component → first render (ms)', bare, ''),
      row('host page interactive (ms from navigation start)', interactive, '< 1000'),
      row('baseline: blank page DOMContentLoaded (ms)', blank, ''),
      row('tool call via /apps/api/call, Streamable HTTP (ms)', calls, ''),
    ],
    [`Chromium headless, loopback, ${N} iterations after 2 warm-ups; the component is examples/bridge-tour (board).`],
  );
} finally {
  await browser.close();
  tour.stop();
  statics.close();
  await standin.stop();
}
