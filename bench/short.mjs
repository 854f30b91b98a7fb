// The short form of the request-path benches, for CI (test/bench/short.test.ts runs it): ads retrieve, list
// and create against a bare Fastify route answering the same bodies to the same requests, runs create → completed polling and
// streaming, the first streamed event, and a cold start against a bare Fastify start, all in one run. It
// prints its figures beside the ones committed in bench/expected.json (the table of docs/operations.md,
// "Where a request's time goes") and names every figure more than MARGIN worse. A report, never a failure:
// timing on a shared CI machine is not a test. CPU figures are each process's own (/proc), the steadier.
// Run: npm run build && node bench/short.mjs   (BENCH_SHORT_SECONDS=1, BENCH_SHORT_ROUNDS=2, BENCH_SHORT_RUNS=40,
// BENCH_SHORT_WARMUP=1.5, BENCH_SHORT_ONLY=ads,runs,start)
import { readFileSync } from 'node:fs';
import { bareAdsTargets, builtinRuns, cpuMs, cpuPerRequest, load, seedAdsTargets, startBaseline, startStandin } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_SHORT_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_SHORT_ROUNDS ?? 2);
const RUNS = Number(process.env.BENCH_SHORT_RUNS ?? 40);
/**
 * Seconds of load each side gets before an operation is measured: the figures are of code V8 has optimized,
 * as a server's are after its first seconds (with less, the optimizing compiler's work on Standin's larger
 * request path is counted per request: a tenth of its CPU in the first seconds, a hundredth after).
 */
const WARMUP = Number(process.env.BENCH_SHORT_WARMUP ?? 1.5);
/** The areas to measure (BENCH_SHORT_ONLY=ads,runs,start; all by default), to look again at one. */
const ONLY = new Set((process.env.BENCH_SHORT_ONLY ?? 'ads,runs,start').split(','));
/** How much worse than the committed figure a figure may be before the report names it. */
export const MARGIN = 0.25;
const connections = 20;
const ADMIN_KEY = 'sk-admin-bench-short-00000000000000000000000';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Ads: CPU µs a request in Standin and in the bare route, the ratio, and the share of the bare route's req/s. */
async function ads(s) {
  const { targets, bodies } = await seedAdsTargets(s);
  const b = await startBaseline(bodies);
  const bare = bareAdsTargets(b.url, targets);
  const measured = (pid, target) => cpuPerRequest(pid, target, { connections, duration: SECONDS });
  const out = {};
  try {
    for (const op of Object.keys(targets)) {
      await load({ ...bare[op], connections, duration: WARMUP });
      await load({ ...targets[op], connections, duration: WARMUP });
      const m = { bare: [], standin: [] };
      // Which goes first alternates: what a measure leaves running (a collection after its load) falls on the next.
      for (let i = 0; i < ROUNDS; i++) {
        const bareFirst = i % 2 === 0;
        if (bareFirst) m.bare.push(await measured(b.child.pid, bare[op]));
        m.standin.push(await measured(s.child.pid, targets[op]));
        if (!bareFirst) m.bare.push(await measured(b.child.pid, bare[op]));
      }
      out[op] = {
        'CPU µs/request': round(median(m.standin.map((r) => r.cpu)), 1),
        'bare CPU µs/request': round(median(m.bare.map((r) => r.cpu)), 1),
        'CPU / bare': round(median(m.standin.map((r, i) => r.cpu / m.bare[i].cpu))),
        'share of bare req/s': round(median(m.standin.map((r, i) => r.rps / m.bare[i].rps))),
        errors: m.standin.reduce((n, r) => n + r.errors, 0),
      };
    }
  } finally {
    await b.stop();
  }
  return out;
}

/** Runs on the built-in model: create → completed p50, polling and streaming; first streamed event p50; CPU a run. */
async function runs(s) {
  const { polled, streamed } = await builtinRuns(s, ADMIN_KEY);
  // Warmed as the ads are, for WARMUP seconds: after 10 runs V8 was still compiling the run path, and the
  // figures were of that (bench/runs-ab.mjs, after 1,000 runs, measured the first event 0.6–0.9 ms sooner).
  for (let i = 0, end = performance.now() + WARMUP * 1000; performance.now() < end; i++) (await polled(i), await streamed(i));
  const measure = async (fn) => {
    const c0 = cpuMs(s.child.pid);
    const xs = [];
    for (let i = 0; i < RUNS; i++) xs.push(await fn(i));
    return { xs, cpu: ((cpuMs(s.child.pid) - c0) * 1000) / RUNS };
  };
  const p = await measure(polled);
  const st = await measure(streamed);
  return {
    'polling p50 ms': round(median(p.xs.map((r) => r.ms))),
    'polling CPU µs/run': Math.round(p.cpu),
    'streaming p50 ms': round(median(st.xs.map((r) => r.ms))),
    'streaming CPU µs/run': Math.round(st.cpu),
    'first event p50 ms': round(median(st.xs.map((r) => r.first))),
    errors: [...p.xs, ...st.xs].filter((r) => !r.ok).length,
  };
}

/** CPU ms of a process from its spawn to its first 200 (Standin fresh folder, bare Fastify). */
async function coldStart() {
  const cpuOf = (pid) => cpuMs(pid);
  const standin = [];
  const bare = [];
  for (let i = 0; i < ROUNDS; i++) {
    const b = await startBaseline();
    await (await fetch(`${b.url}/item`)).text();
    bare.push(cpuOf(b.child.pid));
    await b.stop();
    const s = await startStandin();
    await (await fetch(`${s.url}/healthz`)).text();
    standin.push(cpuOf(s.child.pid));
    await s.stop();
  }
  return {
    'standin CPU ms': Math.round(median(standin)),
    'bare CPU ms': Math.round(median(bare)),
    'CPU / bare': round(median(standin.map((x, i) => x / bare[i]))),
  };
}

/** Figures where a larger number is worse; every other (shares) is worse when smaller. */
const higherIsWorse = (name) => !name.startsWith('share');

/** Every figure more than MARGIN worse than the committed one: `area.figure: now (committed)`. */
export function slips(now, expected, margin = MARGIN) {
  const out = [];
  for (const [area, figures] of Object.entries(expected))
    for (const [name, committed] of Object.entries(figures)) {
      const value = now[area]?.[name];
      if (typeof value !== 'number' || typeof committed !== 'number') continue;
      const worse = higherIsWorse(name) ? value > committed * (1 + margin) : value < committed * (1 - margin);
      if (worse) out.push(`${area}: ${name} ${value} (committed ${committed})`);
    }
  return out;
}

export async function shortBench() {
  const s = await startStandin({ env: { STANDIN_ADMIN_KEY: ADMIN_KEY } });
  const now = {};
  try {
    if (ONLY.has('ads')) Object.assign(now, Object.fromEntries(Object.entries(await ads(s)).map(([op, f]) => [`ads ${op}`, f])));
    if (ONLY.has('runs')) now.runs = await runs(s);
  } finally {
    await s.stop();
  }
  if (ONLY.has('start')) now['cold start'] = await coldStart();
  return now;
}

if (process.argv[1]?.endsWith('short.mjs')) {
  const expected = JSON.parse(readFileSync(new URL('./expected.json', import.meta.url), 'utf8')).figures;
  const now = await shortBench();
  console.log('\n### short bench (report only; committed figures in bench/expected.json and docs/operations.md)\n');
  console.log('| area | figure | now | committed |');
  console.log('| --- | --- | --- | --- |');
  for (const [area, figures] of Object.entries(now))
    for (const [name, value] of Object.entries(figures)) console.log(`| ${area} | ${name} | ${value} | ${expected[area]?.[name] ?? '-'} |`);
  const slipped = slips(now, expected);
  console.log(
    slipped.length
      ? `\nMore than ${MARGIN * 100} % worse than committed (a busy machine does this too; look again on a quiet one):\n${slipped.map((x) => `- ${x}`).join('\n')}`
      : `\nNo figure is more than ${MARGIN * 100} % worse than committed.`,
  );
}
