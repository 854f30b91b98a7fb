// The cost of the metrics and of the per-request log line on retrieving one ad group: one instance with
// both on (and scraped every second), one with only the metrics, two with both off (the second shows the
// noise between two identical processes), measured in alternate rounds of the same run. Run: npm run build && node bench/metrics.mjs
import { AD_GROUP_BODY, cpuMs, load, report, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const connections = 50;

const OFF = { STANDIN_METRICS: 'false', STANDIN_LOG_REQUESTS: 'false' };
const variants = [
  { name: 'metrics and log lines off', env: OFF },
  // The same as the first in another process: how far apart two identical instances measure (the noise).
  { name: 'off again (a second process: the noise)', env: OFF },
  { name: 'metrics on (scraped every second)', env: { STANDIN_LOG_REQUESTS: 'false' }, scrape: true },
  { name: 'metrics and log lines on (the default)', env: {}, scrape: true },
];

const started = [];
for (const v of variants) {
  const s = await startStandin({ env: { STANDIN_LOG_LEVEL: 'info', ...v.env } });
  // The log lines go to a pipe that is read and dropped, as a log collector would read them.
  s.child.stdout.removeAllListeners('data');
  s.child.stdout.resume();
  const auth = { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' };
  const created = await (await fetch(`${s.url}/ads/v1/ad_groups`, { method: 'POST', headers: auth, body: AD_GROUP_BODY })).json();
  started.push({ ...v, s, target: { url: `${s.url}/ads/v1/ad_groups/${created.id}`, headers: auth } });
}

const scraper = (x) => {
  if (!x.scrape) return () => {};
  const timer = setInterval(
    () => void fetch(`${x.s.url}/admin/v1/metrics`, { headers: { authorization: `Bearer ${x.s.keys.admin}` } }).then((r) => r.text()),
    1000,
  );
  return () => clearInterval(timer);
};

for (const x of started) await load({ ...x.target, connections, duration: 1 }); // warm-up
const results = started.map(() => []);
// Rounds alternate the variants, so drift on a shared machine hits each alike; medians are reported.
for (let i = 0; i < ROUNDS; i++)
  for (const [j, x] of started.entries()) {
    const stop = scraper(x);
    const c0 = cpuMs(x.s.child.pid);
    const r = await load({ ...x.target, connections, duration: DURATION });
    results[j].push({ ...r, cpu: ((cpuMs(x.s.child.pid) - c0) * 1000) / r.total });
    stop();
  }

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = started.map((x, j) => ({
  'retrieve one ad group': x.name,
  'req/s': median(results[j].map((r) => r.rps)),
  'share of off': `${Math.round(median(results[j].map((r, i) => r.rps / results[0][i].rps)) * 100)} %`,
  'p50 ms': median(results[j].map((r) => r.p50)),
  'p99 ms': median(results[j].map((r) => r.p99)),
  'CPU µs/request': Math.round(median(results[j].map((r) => r.cpu))),
  'CPU share of off': `${Math.round(median(results[j].map((r, i) => r.cpu / results[0][i].cpu)) * 100)} %`,
  errors: results[j].reduce((n, r) => n + r.errors, 0),
}));
report('metrics', rows, [`${ROUNDS} alternating rounds of ${DURATION} s, ${connections} connections, SQLite; medians.`]);
for (const x of started) await x.s.stop();
