// Runs on the built-in model, two builds (or more) in one run: create → completed p50 streamed and polled,
// the first streamed event's p50, and the CPU of a run (the server's own, /proc), as bench/short.mjs
// measures them, but after a long warm-up (WARM runs each: V8 has optimized what turns hot) and in rounds
// that alternate between the builds (each round starts one further along the list), so the machine's
// drift falls on every build alike; medians of the rounds.
// Run: npm run build && node bench/runs-ab.mjs <old dist/main.js> dist/main.js
//   (BENCH_RUNS_AB_WARM=1000, BENCH_RUNS_AB_ROUNDS=8, BENCH_RUNS_AB_PER=150)
import { builtinRuns, cpuMs, report, startStandin } from './lib.mjs';

const mains = process.argv.slice(2);
if (!mains.length) throw new Error('usage: node bench/runs-ab.mjs <dist/main.js> [<another build dist/main.js> …]');
const WARM = Number(process.env.BENCH_RUNS_AB_WARM ?? 1000);
const ROUNDS = Number(process.env.BENCH_RUNS_AB_ROUNDS ?? 8);
const PER = Number(process.env.BENCH_RUNS_AB_PER ?? 150);
const ADMIN_KEY = 'sk-admin-bench-runs-ab-00000000000000000000';
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** A started build with its two kinds of run; a run that does not complete stops the bench. */
async function instance(main) {
  const s = await startStandin({ main, env: { STANDIN_ADMIN_KEY: ADMIN_KEY } });
  const runs = await builtinRuns(s, ADMIN_KEY);
  const completed = (kind) => async (i) => {
    const r = await runs[kind](i);
    if (!r.ok) throw new Error(`a ${kind} run of ${main} did not complete`);
    return r;
  };
  return { main, s, kinds: { streamed: completed('streamed'), polled: completed('polled') }, rounds: { streamed: [], polled: [] } };
}

const builds = [];
try {
  for (const main of mains) builds.push(await instance(main));
  for (const b of builds) for (let i = 0; i < WARM; i++) await (i % 2 ? b.kinds.polled(i) : b.kinds.streamed(i));
  for (let r = 0; r < ROUNDS; r++)
    for (let j = 0; j < builds.length; j++) {
      const b = builds[(r + j) % builds.length];
      for (const kind of ['streamed', 'polled']) {
        const c0 = cpuMs(b.s.child.pid);
        const xs = [];
        for (let i = 0; i < PER; i++) xs.push(await b.kinds[kind](i));
        const cpu = ((cpuMs(b.s.child.pid) - c0) * 1000) / PER;
        b.rounds[kind].push({ cpu, ms: median(xs.map((x) => x.ms)), first: kind === 'streamed' ? median(xs.map((x) => x.first)) : null });
      }
    }
  report(
    'runs-ab',
    builds.map((b) => ({
      build: b.main,
      'streaming p50 ms': median(b.rounds.streamed.map((x) => x.ms)).toFixed(2),
      'first event p50 ms': median(b.rounds.streamed.map((x) => x.first)).toFixed(2),
      'streaming CPU µs/run': Math.round(median(b.rounds.streamed.map((x) => x.cpu))),
      'polling p50 ms': median(b.rounds.polled.map((x) => x.ms)).toFixed(2),
      'polling CPU µs/run': Math.round(median(b.rounds.polled.map((x) => x.cpu))),
    })),
    [
      `${WARM} runs of each build first, then ${ROUNDS} rounds of ${PER} streamed and ${PER} polled runs, alternating; medians of the rounds.`,
    ],
  );
} finally {
  for (const b of builds) await b.s.stop();
}
