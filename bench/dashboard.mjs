// The dashboard: time to interactive of the Requests page under a 10,000-row request log (goal < 1 s),
// against the app host page (/apps) loaded in the same browser and run; and the API request rate with the
// live views open against without (goal within 5 %), in alternating rounds.
// Run: npm run build && node bench/dashboard.mjs   (BENCH_SECONDS to change the load duration)
// Caveat: Chromium runs on the same machine as Standin and autocannon, so its rendering competes for the
// same cores; on a shared machine the figures are noisy.
import autocannon from 'autocannon';
import { chromium } from 'playwright-core';
import { cpuMs, load, report, startStandin } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROWS = 10_000;
const RUNS = 5;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const ADMIN = 'sk-admin-bench-dashboard-0000000000000000';
const s = await startStandin({ args: ['--admin-key', ADMIN], env: { STANDIN_REQUEST_LOG_SIZE: String(ROWS) } });
s.keys.admin = ADMIN;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  // Fill the log: 10,000 real API requests.
  await autocannon({ url: `${s.url}/v1/models`, headers: { authorization: `Bearer ${s.keys.platform}` }, connections: 20, amount: ROWS });
  const held = await (
    await fetch(`${s.url}/admin/v1/requests?limit=10000`, { headers: { authorization: `Bearer ${s.keys.admin}` } })
  ).json();

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${s.url}/dashboard`);
  await page.getByLabel('Admin key').fill(s.keys.admin);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();

  // Time to interactive: navigation start to the first row's button answering a click (the detail opens).
  const tti = [];
  const base = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await page.goto(`${s.url}/apps`, { waitUntil: 'load' });
    await page.locator('body *').first().waitFor();
    base.push(performance.now() - t0);
    const t1 = performance.now();
    await page.goto(`${s.url}/dashboard/requests`);
    await page.locator('table.requests tbody tr').first().getByRole('button').click();
    await page.getByRole('complementary', { name: 'Request detail' }).getByText('x-request-id').first().waitFor();
    tti.push(performance.now() - t1);
  }
  const med = (a) => Math.round([...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]);
  const rows = [
    { measure: `app host page /apps (baseline), load`, median_ms: med(base), runs: RUNS },
    { measure: `dashboard Requests, ${held.data.length} rows in the log: first row opened`, median_ms: med(tti), runs: RUNS },
  ];

  // API rate without the live views and with them (Overview, Requests, Webhooks, Rate limits in four tabs),
  // in alternating rounds so drift hits both alike; medians, and the median of each round's ratio. Each phase
  // also reports Standin's CPU time per 1,000 API requests (the server's own cost, apart from Chromium
  // competing for the cores) and how many requests the open views made to Standin.
  const api = async () => {
    const c0 = cpuMs(s.child.pid);
    const r = await load({
      url: `${s.url}/v1/models`,
      headers: { authorization: `Bearer ${s.keys.platform}` },
      connections: 50,
      duration: SECONDS,
    });
    return { ...r, cpuPerK: ((cpuMs(s.child.pid) - c0) / r.total) * 1000 };
  };
  // Standin's CPU over a few seconds with no API load: what the views alone cost the server.
  const idleCpu = async () => {
    const c0 = cpuMs(s.child.pid);
    await new Promise((r) => setTimeout(r, 4000));
    return (cpuMs(s.child.pid) - c0) / 4;
  };
  let polls = 0;
  context.on('request', (r) => void (r.url().includes('/admin/v1/') && polls++));
  // The page that measured the Requests page is a live view too: closed means none open.
  await page.goto('about:blank');
  const closed = [];
  const open = [];
  const pollRates = [];
  const idle = { closed: [], open: [] };
  for (let round = 0; round < ROUNDS; round++) {
    idle.closed.push(await idleCpu());
    closed.push(await api());
    const tabs = [];
    for (const path of ['/dashboard', '/dashboard/requests', '/dashboard/webhooks?project=proj_demo', '/dashboard/rate-limits']) {
      const tab = await context.newPage();
      await tab.goto(`${s.url}${path}`);
      await tab.locator('main h1').waitFor();
      // Headless tabs count as visible: the live views keep polling.
      tabs.push(tab);
    }
    // Let the pages' first loads end: the phase measures the live views, not opening four tabs.
    await new Promise((r) => setTimeout(r, 2000));
    const p0 = polls;
    idle.open.push(await idleCpu());
    pollRates.push((polls - p0) / 4);
    open.push(await api());
    for (const tab of tabs) await tab.close();
  }
  // Unrounded: ratios and rates under one.
  const mid = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
  rows.push(
    {
      measure: 'GET /v1/models req/s, live views closed (median; rounds); Standin CPU ms per 1,000 requests (median)',
      median_ms: '',
      runs: `${med(closed.map((r) => r.rps))} (${closed.map((r) => r.rps).join(', ')}); ${med(closed.map((r) => r.cpuPerK))} ms`,
    },
    {
      measure: 'GET /v1/models req/s, four live views open (median; rounds); Standin CPU ms per 1,000 requests (median)',
      median_ms: '',
      runs: `${med(open.map((r) => r.rps))} (${open.map((r) => r.rps).join(', ')}); ${med(open.map((r) => r.cpuPerK))} ms`,
    },
    {
      measure: "open against closed, median of the rounds' ratios: req/s; CPU per request",
      median_ms: '',
      runs: `${pct(mid(open.map((r, i) => r.rps / closed[i].rps - 1)))}; ${pct(mid(open.map((r, i) => r.cpuPerK / closed[i].cpuPerK - 1)))}`,
    },
    { measure: "the open views' own requests to /admin/v1 per second", median_ms: '', runs: mid(pollRates).toFixed(1) },
    {
      measure: 'Standin CPU ms per second with no API load: views closed; open (medians)',
      median_ms: '',
      runs: `${mid(idle.closed).toFixed(1)}; ${mid(idle.open).toFixed(1)}`,
    },
  );
  report('dashboard', rows, [
    'Time to interactive: from navigation to the first request row opened (its detail shown), median of 5, signed in.',
    `Rates: autocannon, 50 connections, ${SECONDS} s a phase, ${ROUNDS} rounds of closed then open; Chromium shares the machine's cores.`,
  ]);
} finally {
  await browser.close();
  await s.stop();
}
