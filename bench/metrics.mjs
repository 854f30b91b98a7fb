// The cost of the metrics and of the per-request log line on the ads bench's operations (retrieve one ad
// group, list 20, create), measured two ways.
//
// Standin's own CPU, from a CPU profile: an instance with both on (lines to a file) is profiled under each
// operation's load; the time spent in the request observer (`observeResponse`: the metrics' counting and
// the line) and in writing the line batches (`writeLogBatch`) is set against the instance's CPU a request
// in the same run. A scrape's CPU is measured alone and counted once a second. This is the figure that
// holds on a noisy machine: both sides come from one process at one time.
//
// End to end, throughput against instances with both off: another set with both off (the noise), one with
// the metrics only, one with both on writing to a file nothing reads, and one with both on read by a
// collector process (as deployed: the reader's CPU shares the machine), the metrics scraped every second.
// Each variant runs in BENCH_PROCESSES processes of its own (two identical processes can measure apart for
// as long as they live); rounds take every process once, in a new random order each round; a variant's
// share of off is the ratio of the means over the rounds, with a 95 % bootstrap interval over the rounds.
// The interval does not hold the difference between processes: the noise row says how far that goes.
// Run: npm run build && node bench/metrics.mjs
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AD_GROUP_BODY, cpuMs, load, report, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 3);
const PROFILE_SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 8);
const SCRAPES = 200;
const connections = 50;

const OFF = { STANDIN_METRICS: 'false', STANDIN_LOG_REQUESTS: 'false' };
const variants = [
  { name: 'metrics and log lines off', env: OFF },
  // The same as the first in other processes: how far apart identical instances measure (the noise).
  { name: 'off again (other processes: the noise)', env: OFF },
  { name: 'metrics on (scraped every second)', env: { STANDIN_LOG_REQUESTS: 'false' }, scrape: true },
  { name: 'both on, lines to a file (Standin’s own cost)', env: {}, scrape: true, output: 'file' },
  { name: 'both on, lines read by a collector (the default)', env: {}, scrape: true },
];

/** A started instance's three operations (on an ad group it creates). */
async function operationsOf(s) {
  const headers = { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' };
  let id;
  for (let i = 0; i < 20; i++)
    id ??= (await (await fetch(`${s.url}/ads/v1/ad_groups`, { method: 'POST', headers, body: AD_GROUP_BODY })).json()).id;
  return {
    'retrieve one ad group': { url: `${s.url}/ads/v1/ad_groups/${id}`, headers },
    'list 20 ad groups': { url: `${s.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, headers },
    'create an ad group': { url: `${s.url}/ads/v1/ad_groups`, method: 'POST', headers, body: AD_GROUP_BODY },
  };
}
const scrape = (s) => fetch(`${s.url}/admin/v1/metrics`, { headers: { authorization: `Bearer ${s.keys.admin}` } }).then((r) => r.text());

/**
 * From a CPU profile, from the first request observed on: the µs busy (all but idle), in the observer, in
 * its metrics part (`observe`) and in writing log batches.
 */
function profiledMicros(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map(profile.nodes.flatMap((n) => (n.children ?? []).map((c) => [c, n])));
  // What a sample counts for: the named frames on its stack, innermost first.
  const counts = (id) => {
    const names = [];
    for (let n = byId.get(id); n; n = parent.get(n.id)) names.push(n.callFrame.functionName);
    const observer = names.indexOf('observeResponse');
    return {
      idle: names[0] === '(idle)',
      observer: observer >= 0,
      metrics: observer >= 0 && names.slice(0, observer).includes('observe'),
      batch: names.includes('writeLogBatch'),
    };
  };
  const memo = new Map();
  const found = { busy: 0, observer: 0, metrics: 0, batch: 0 };
  let started = false;
  profile.samples.forEach((id, i) => {
    if (!memo.has(id)) memo.set(id, counts(id));
    const c = memo.get(id);
    started ||= c.observer;
    if (!started || c.idle) return;
    const dt = profile.timeDeltas[i];
    found.busy += dt;
    if (c.observer) found.observer += dt;
    if (c.metrics) found.metrics += dt;
    if (c.batch) found.batch += dt;
  });
  return found;
}

const pct = (x) => `${(x * 100).toFixed(1)} %`;
const own = [];
for (const operation of ['retrieve one ad group', 'list 20 ad groups', 'create an ad group']) {
  const dir = mkdtempSync(join(tmpdir(), 'standin-profile-'));
  const s = await startStandin({
    env: { STANDIN_LOG_LEVEL: 'info', BENCH_NODE_ARGS: `--cpu-prof --cpu-prof-interval=200 --cpu-prof-dir=${dir}` },
    output: 'file',
  });
  const op = (await operationsOf(s))[operation];
  const warm = await load({ ...op, connections, duration: 1 });
  const r = await load({ ...op, connections, duration: PROFILE_SECONDS });
  await s.stop();
  const found = profiledMicros(join(dir, readdirSync(dir)[0]));
  rmSync(dir, { recursive: true, force: true });
  // A scrape's CPU, in an instance of its own (not profiled) that has served the operation for a second.
  const t = await startStandin({ env: { STANDIN_LOG_LEVEL: 'info' }, output: 'file' });
  await load({ ...(await operationsOf(t))[operation], connections, duration: 1 });
  const c0 = cpuMs(t.child.pid);
  for (let i = 0; i < SCRAPES; i++) await scrape(t);
  const scrapeMs = (cpuMs(t.child.pid) - c0) / SCRAPES;
  await t.stop();
  // The requests the profile counts from: the setup's 20 creates, the warm-up's and the load's.
  const requests = 20 + warm.total + r.total;
  const busy = found.busy / requests;
  const counting = found.metrics / requests;
  const line = (found.observer - found.metrics + found.batch) / requests;
  // A scrape a second, over the requests of a second.
  const scraping = (scrapeMs * 1000) / r.rps;
  own.push({
    operation,
    'req/s (profiled)': Math.round(r.rps),
    'busy µs/request': busy.toFixed(1),
    'metrics: counting, µs': counting.toFixed(2),
    'metrics: a scrape, ms': scrapeMs.toFixed(2),
    'metrics share': pct((counting + scraping) / busy),
    'log line, µs': line.toFixed(2),
    'log line share': pct(line / busy),
    'both share': pct((counting + scraping + line) / busy),
  });
}
report('metrics-own', own, [
  `Profiled at 200 µs for ${PROFILE_SECONDS} s of each operation, ${connections} connections, SQLite; lines to a file.`,
  'Busy: the profile’s time not idle, from the first request on, over the requests. Share: of that; a scrape a second (its CPU measured in an instance not profiled) is counted over the requests of that second.',
]);

const instances = [];
for (const [variant, v] of variants.entries())
  for (let p = 0; p < PROCESSES; p++) {
    const s = await startStandin({ env: { STANDIN_LOG_LEVEL: 'info', ...v.env }, output: v.output });
    instances.push({ ...v, variant, s, operations: await operationsOf(s) });
  }

const scraper = (x) => {
  if (!x.scrape) return () => {};
  const timer = setInterval(() => void scrape(x.s), 1000);
  return () => clearInterval(timer);
};

const shuffled = (xs) => {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** The ratio of the means of a and b (paired by round), and its 95 % bootstrap interval over the rounds. */
const ratio = (a, b) => {
  const draws = [];
  for (let n = 0; n < 4000; n++) {
    const pick = a.map(() => Math.floor(Math.random() * a.length));
    draws.push(mean(pick.map((i) => a[i])) / mean(pick.map((i) => b[i])));
  }
  draws.sort((x, y) => x - y);
  const pct = (x) => Math.round(x * 100);
  return `${pct(mean(a) / mean(b))} % (${pct(draws[Math.floor(draws.length * 0.025)])}–${pct(draws[Math.floor(draws.length * 0.975)])})`;
};

const rows = [];
for (const operation of Object.keys(instances[0].operations)) {
  for (const x of instances) await load({ ...x.operations[operation], connections, duration: 1 }); // warm-up
  // rounds[variant][round]: the mean over the variant's processes of req/s, and of CPU µs a request.
  const rps = variants.map(() => []);
  const cpu = variants.map(() => []);
  const latencies = variants.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const slices = variants.map(() => []);
    for (const x of shuffled(instances)) {
      const stop = scraper(x);
      const c0 = cpuMs(x.s.child.pid);
      const r = await load({ ...x.operations[operation], connections, duration: DURATION });
      slices[x.variant].push({ rps: r.rps, cpu: ((cpuMs(x.s.child.pid) - c0) * 1000) / r.total });
      latencies[x.variant].push(r);
      stop();
    }
    for (const [j, s] of slices.entries()) {
      rps[j].push(mean(s.map((r) => r.rps)));
      cpu[j].push(mean(s.map((r) => r.cpu)));
    }
  }
  for (const [j, v] of variants.entries())
    rows.push({
      operation,
      variant: v.name,
      'req/s': Math.round(mean(rps[j])),
      'share of off (95 % interval)': ratio(rps[j], rps[0]),
      'p50 ms': median(latencies[j].map((r) => r.p50)),
      'p99 ms': median(latencies[j].map((r) => r.p99)),
      'CPU µs/request': Math.round(mean(cpu[j])),
      'CPU share of off (95 % interval)': ratio(cpu[j], cpu[0]),
      errors: latencies[j].reduce((n, r) => n + r.errors, 0),
    });
}
report('metrics', rows, [
  `${ROUNDS} rounds of ${DURATION} s for each operation and process, ${PROCESSES} processes a variant, ${connections} connections, SQLite.`,
  'Share of off: the ratio of the means over the rounds, with a 95 % bootstrap interval over the rounds.',
  'CPU: the instance’s own (user and system) over the requests it answered; a collector’s is its own process’s.',
]);
for (const x of instances) await x.s.stop();
