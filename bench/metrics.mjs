// The cost of the metrics and of the per-request log line on the ads bench's operations (retrieve one ad
// group, list 20, create): instances with both off (two: the second shows the noise between identical
// processes), one with the metrics only, one with both on writing to a file nothing reads (Standin's own
// cost), and one with both on read by a collector process (as deployed: the reader's CPU shares the
// machine), the metrics scraped every second; measured in alternate rounds of the same run.
// Run: npm run build && node bench/metrics.mjs
import { AD_GROUP_BODY, cpuMs, load, report, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = 50;

const OFF = { STANDIN_METRICS: 'false', STANDIN_LOG_REQUESTS: 'false' };
const variants = [
  { name: 'metrics and log lines off', env: OFF },
  // The same as the first in another process: how far apart two identical instances measure (the noise).
  { name: 'off again (a second process: the noise)', env: OFF },
  { name: 'metrics on (scraped every second)', env: { STANDIN_LOG_REQUESTS: 'false' }, scrape: true },
  { name: 'both on, lines to a file (Standin’s own cost)', env: {}, scrape: true, output: 'file' },
  { name: 'both on, lines read by a collector (the default)', env: {}, scrape: true },
];

const started = [];
for (const v of variants) {
  const s = await startStandin({ env: { STANDIN_LOG_LEVEL: 'info', ...v.env }, output: v.output });
  const headers = { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' };
  let id;
  for (let i = 0; i < 20; i++)
    id ??= (await (await fetch(`${s.url}/ads/v1/ad_groups`, { method: 'POST', headers, body: AD_GROUP_BODY })).json()).id;
  const operations = {
    'retrieve one ad group': { url: `${s.url}/ads/v1/ad_groups/${id}`, headers },
    'list 20 ad groups': { url: `${s.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, headers },
    'create an ad group': { url: `${s.url}/ads/v1/ad_groups`, method: 'POST', headers, body: AD_GROUP_BODY },
  };
  started.push({ ...v, s, operations });
}

const scraper = (x) => {
  if (!x.scrape) return () => {};
  const timer = setInterval(
    () => void fetch(`${x.s.url}/admin/v1/metrics`, { headers: { authorization: `Bearer ${x.s.keys.admin}` } }).then((r) => r.text()),
    1000,
  );
  return () => clearInterval(timer);
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
for (const operation of Object.keys(started[0].operations)) {
  for (const x of started) await load({ ...x.operations[operation], connections, duration: 1 }); // warm-up
  const results = started.map(() => []);
  // Rounds alternate the variants, so drift on a shared machine hits each alike; medians are reported.
  for (let i = 0; i < ROUNDS; i++)
    for (const [j, x] of started.entries()) {
      const stop = scraper(x);
      const c0 = cpuMs(x.s.child.pid);
      const r = await load({ ...x.operations[operation], connections, duration: DURATION });
      results[j].push({ ...r, cpu: ((cpuMs(x.s.child.pid) - c0) * 1000) / r.total });
      stop();
    }
  for (const [j, x] of started.entries())
    rows.push({
      operation,
      variant: x.name,
      'req/s': median(results[j].map((r) => r.rps)),
      'share of off': `${Math.round(median(results[j].map((r, i) => r.rps / results[0][i].rps)) * 100)} %`,
      'p50 ms': median(results[j].map((r) => r.p50)),
      'p99 ms': median(results[j].map((r) => r.p99)),
      'CPU µs/request': Math.round(median(results[j].map((r) => r.cpu))),
      'CPU share of off': `${Math.round(median(results[j].map((r, i) => r.cpu / results[0][i].cpu)) * 100)} %`,
      errors: results[j].reduce((n, r) => n + r.errors, 0),
    });
}
report('metrics', rows, [
  `${ROUNDS} alternating rounds of ${DURATION} s for each operation, ${connections} connections, SQLite; medians.`,
  'CPU: the instance’s own (user and system) over the requests it answered; a collector’s is its own process’s.',
]);
for (const x of started) await x.s.stop();
