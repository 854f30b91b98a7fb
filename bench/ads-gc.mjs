// What V8's collector costs an ads request: each build and the bare Fastify route run with --trace-gc-nvp, and
// per operation (after WARMUP s of load) the young-generation collections' pause on the main thread (µs a
// request), the bytes they promote to the old generation (a request), and the full collections begun (per
// 10,000 requests), over SECONDS s of load at 20 connections. Counts and bytes move little with the machine's
// load, unlike CPU time: a request path that keeps objects a second or two shows here first (docs/operations.md,
// "What the request log costs the collector").
// Run: npm run build && node bench/ads-gc.mjs [old build's dist/main.js] [dist/main.js]   (BENCH_GC_SECONDS=4,
// BENCH_GC_WARMUP=3, BENCH_GC_OPS=retrieve,list,create; BENCH_GC_NODE_FLAGS='--min-semi-space-size=16' and
// BENCH_GC_SERVE_FLAGS='--request-log-size 1' give the Standin processes, not the bare route, Node's flags and options)
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareAdsTargets, load, report, seedAdsTargets, startBaseline } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_GC_SECONDS ?? 4);
const WARMUP = Number(process.env.BENCH_GC_WARMUP ?? 3);
const OPS = (process.env.BENCH_GC_OPS ?? 'retrieve,list,create').split(',');
/** Node's flags and `serve`'s options for the Standin processes (not the bare route), each split on spaces. */
const NODE_FLAGS = (process.env.BENCH_GC_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const SERVE_FLAGS = (process.env.BENCH_GC_SERVE_FLAGS ?? '').split(' ').filter(Boolean);
const mains = process.argv.length > 2 ? process.argv.slice(2) : ['dist/main.js'];
const connections = 20;

/** Sums the collections a process's --trace-gc-nvp lines report, as they come. */
function gcTotals(stdout) {
  const totals = { scavengeMs: 0, promoted: 0, full: 0 };
  let rest = '';
  stdout.on('data', (d) => {
    const lines = (rest + d).split('\n');
    rest = lines.pop();
    for (const line of lines)
      for (const g of line.matchAll(/pause=([\d.]+) mutator=[\d.]+ gc=(\w+)(?:.*?promoted=(\d+))?/g)) {
        if (g[2] === 's') {
          totals.scavengeMs += Number(g[1]);
          totals.promoted += Number(g[3] ?? 0);
        } else if (g[2] === 'ms' || g[2] === 'mc') totals.full++;
      }
  });
  return totals;
}

/** A Standin build traced, its stdout read here (the banner for its URL and keys, then the trace). */
function startTraced(main) {
  const child = spawn(
    process.execPath,
    ['--trace-gc-nvp', ...NODE_FLAGS, main, 'serve', '--port', '0', '--data', mkdtempSync(join(tmpdir(), 'standin-gc-')), ...SERVE_FLAGS],
    {
      env: { ...process.env, STANDIN_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const gc = gcTotals(child.stdout);
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const url = /listening on (http:\/\/[^\s"]+)/.exec(out)?.[1];
      const ads = /ads API key[^:]*:\s*([^\s"]+)/.exec(out)?.[1];
      if (!url || !ads || !out.includes('docs:')) return;
      child.stdout.off('data', onData);
      resolve({ url, keys: { ads }, gc, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) });
    };
    child.stdout.on('data', onData);
    child.on('exit', (code) => reject(new Error(`standin exited with ${code}`)));
  });
}

/** Loads `target` and answers the collections' cost a request over that load. */
async function measure(gc, target) {
  await load({ ...target, connections, duration: WARMUP });
  const before = { ...gc };
  const r = await load({ ...target, connections, duration: SECONDS });
  return {
    scavenge: ((gc.scavengeMs - before.scavengeMs) * 1000) / r.total,
    promoted: (gc.promoted - before.promoted) / r.total,
    full: ((gc.full - before.full) * 10_000) / r.total,
  };
}

const builds = [];
for (const main of mains) {
  const s = await startTraced(main);
  builds.push({ main, s, ...(await seedAdsTargets(s)) });
}
const bare = await startBaseline(builds[0].bodies, ['--trace-gc-nvp']);
const bareGc = gcTotals(bare.child.stdout);
const bareTargets = bareAdsTargets(bare.url, builds[0].targets);
const rows = [];
const cells = (m) => [m.scavenge.toFixed(2), Math.round(m.promoted), m.full.toFixed(1)];
try {
  for (const op of OPS) {
    rows.push([op, 'bare Fastify route', ...cells(await measure(bareGc, bareTargets[op]))]);
    for (const b of builds) rows.push([op, b.main, ...cells(await measure(b.s.gc, b.targets[op]))]);
  }
} finally {
  await bare.stop();
  for (const b of builds) await b.s.stop();
}
report(
  'ads-gc',
  rows.map(([op, process, scavenge, promoted, full]) => ({
    operation: op,
    process,
    'young collections, µs a request': scavenge,
    'promoted, bytes a request': promoted,
    'full collections begun, per 10,000 requests': full,
  })),
  [`autocannon, ${connections} connections, ${WARMUP} s of load then ${SECONDS} s measured, each process its own --trace-gc-nvp.`],
);
