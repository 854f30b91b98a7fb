// Ads API throughput and latency against a bare Fastify JSON route measured in the same run, and cold start.
// Run: npm run build && node bench/ads.mjs
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { cpuMs, load, report, startBaseline, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = 50;

const standin = await startStandin();
const auth = { authorization: `Bearer ${standin.keys.ads}`, 'content-type': 'application/json' };
const body = JSON.stringify({
  campaign_id: 'cmp_demo_clicks',
  name: 'Bench ad group',
  status: 'active',
  bidding_config: { billing_event_type: 'click', max_bid_micros: 1000000 },
});

// 20 ad groups in the campaign, so "list 20" returns a full page.
let firstId;
for (let i = 0; i < 20; i++) {
  const r = await fetch(`${standin.url}/ads/v1/ad_groups`, { method: 'POST', headers: auth, body });
  firstId ??= (await r.json()).id;
}

// The baseline serves the very bodies Standin answers with, so the comparison is Standin's work per
// request (authentication, validation, the store) and not the size of the JSON.
const one = await (await fetch(`${standin.url}/ads/v1/ad_groups/${firstId}`, { headers: auth })).json();
const page = await (await fetch(`${standin.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, { headers: auth })).json();
const baseline = await startBaseline({ one, page });
const rows = [];
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const measured = async (pid, target, during) => {
  const stop = during?.();
  const c0 = cpuMs(pid);
  const r = await load({ ...target, connections, duration: DURATION });
  const cpu = ((cpuMs(pid) - c0) * 1000) / r.total;
  await stop?.();
  return { ...r, cpu };
};
// Rounds alternate baseline and Standin, so drift on a shared machine hits both alike; medians are reported.
const run = async (what, base, target, during) => {
  await load({ ...target, connections, duration: 1 }); // warm-up
  const b = [];
  const s = [];
  for (let i = 0; i < ROUNDS; i++) {
    b.push(await measured(baseline.child.pid, base));
    s.push(await measured(standin.child.pid, target, during));
  }
  rows.push({
    operation: what,
    'baseline req/s': median(b.map((r) => r.rps)),
    'standin req/s': median(s.map((r) => r.rps)),
    'share of baseline': `${Math.round(median(s.map((r, i) => r.rps / b[i].rps)) * 100)} %`,
    'standin p50 ms': median(s.map((r) => r.p50)),
    'standin p99 ms': median(s.map((r) => r.p99)),
    'CPU µs/request baseline': Math.round(median(b.map((r) => r.cpu))),
    'CPU µs/request standin': Math.round(median(s.map((r) => r.cpu))),
    errors: s.reduce((n, r) => n + r.errors, 0),
  });
};
await run('retrieve one ad group', { url: `${baseline.url}/one` }, { url: `${standin.url}/ads/v1/ad_groups/${firstId}`, headers: auth });
// Reads are remembered until the database changes (docs/core.md). This row has another process commit to
// the same SQLite file every millisecond (a table of its own), so nearly every read finds the database
// changed and goes to SQLite; the writes' CPU is that process's, not Standin's.
const busy = () => {
  const writer = spawn(
    process.execPath,
    [
      '-e',
      `
    const db = new (require('better-sqlite3'))(${JSON.stringify(join(standin.data, 'standin.db'))});
    db.pragma('busy_timeout = 5000');
    db.exec('create table if not exists bench_ticks (n integer)');
    const tick = db.prepare('insert into bench_ticks (n) values (?)');
    let n = 0;
    setInterval(() => tick.run(n++), 1);
  `,
    ],
    { stdio: 'ignore' },
  );
  return () =>
    new Promise((resolve) => {
      writer.once('exit', resolve);
      writer.kill();
    });
};
await run(
  'retrieve, another process committing every 1 ms',
  { url: `${baseline.url}/one` },
  { url: `${standin.url}/ads/v1/ad_groups/${firstId}`, headers: auth },
  busy,
);
await run(
  'list 20 ad groups',
  { url: `${baseline.url}/page` },
  { url: `${standin.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, headers: auth },
);
await run(
  'create an ad group',
  { url: `${baseline.url}/one`, method: 'POST', headers: { 'content-type': 'application/json' }, body },
  { url: `${standin.url}/ads/v1/ad_groups`, method: 'POST', headers: auth, body },
);
await standin.stop();
await baseline.stop();

// Cold start: process start to the first 200, on a fresh data folder (migrations + seed) and on an existing one.
const cold = [];
for (let i = 0; i < 3; i++) {
  const fresh = await timeToFirst200();
  const again = await timeToFirst200(fresh.data);
  cold.push({ run: i + 1, 'fresh data folder ms': fresh.ms, 'existing data folder ms': again.ms });
}
report('ads', rows, [
  `autocannon, ${connections} connections; ${ROUNDS} rounds of ${DURATION} s, alternating baseline and Standin; medians (share: median of the rounds' ratios). Baseline: a bare Fastify 5 route in its own process answering the same JSON body (POST: echoes the parsed body merged into it). CPU µs/request: the server process's CPU time over the requests it answered.`,
]);
report('cold-start', cold, ['process start → first 200 on /healthz, SQLite.']);

async function timeToFirst200(data) {
  const t0 = performance.now();
  const s = await startStandin(data ? { data } : {});
  for (;;) {
    const r = await fetch(`${s.url}/healthz`).catch(() => null);
    if (r?.status === 200) break;
  }
  const ms = Math.round(performance.now() - t0);
  await s.stop();
  return { ms, data: s.data };
}
