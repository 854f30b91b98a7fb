// The seconds after a start: the longest wait of a request while a fresh Standin loads what it loads ahead
// of first use (the tokenizer's ranks, src/core/tokenizer.ts `warmTokenizer`, half a second after it
// listens). From the first 200, GET /livez is asked one request at a time, 5 ms apart, for
// BENCH_AFTER_START_MS (3000): its worst latency bounds the longest task on the server's thread. Against a
// bare Fastify route asked the same way, in the same run; BENCH_AFTER_START_BASELINE_SCRIPT=/path/main.js
// adds an older build. Rounds alternate (BENCH_ROUNDS, 5), each on a fresh data folder.
// Run: npm run build && node bench/after-start.mjs
import { setTimeout as sleep } from 'node:timers/promises';
import { report, startBaseline, startStandin } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WINDOW = Number(process.env.BENCH_AFTER_START_MS ?? 3000);
const OLD = process.env.BENCH_AFTER_START_BASELINE_SCRIPT;

/** Latencies (ms) of GET `url`, one at a time, 5 ms apart, for WINDOW ms. */
async function probe(url) {
  const out = [];
  for (const end = performance.now() + WINDOW; performance.now() < end;) {
    const t = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    out.push(performance.now() - t);
    await sleep(5);
  }
  return out.sort((a, b) => a - b);
}

const runs = { bare: [], ...(OLD && { before: [] }), now: [] };
for (let r = 0; r < ROUNDS; r++) {
  const bare = await startBaseline();
  runs.bare.push(await probe(`${bare.url}/item`));
  await bare.stop();
  for (const [name, main] of [...(OLD ? [['before', OLD]] : []), ['now', 'dist/main.js']]) {
    const s = await startStandin({ main });
    runs[name].push(await probe(`${s.url}/livez`));
    await s.stop();
  }
}

const at = (xs, q) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const cell = (name, pick) => `${median(runs[name].map(pick)).toFixed(1)} (${runs[name].map((xs) => pick(xs).toFixed(1)).join(', ')})`;
const names = Object.keys(runs);
report(
  'after-start',
  [
    {
      measure: `worst latency in the ${WINDOW / 1000} s after the first 200, ms`,
      ...Object.fromEntries(names.map((n) => [n, cell(n, (xs) => xs.at(-1))])),
    },
    { measure: 'p99 latency, ms', ...Object.fromEntries(names.map((n) => [n, cell(n, (xs) => at(xs, 0.99))])) },
    { measure: 'p50 latency, ms', ...Object.fromEntries(names.map((n) => [n, cell(n, (xs) => at(xs, 0.5))])) },
  ],
  [
    `Median of ${ROUNDS} rounds (each round's figure in brackets). bare: a Fastify route in its own process; ${OLD ? `before: ${OLD}; ` : ''}now: dist/main.js, GET /livez, each on a fresh data folder.`,
  ],
);
