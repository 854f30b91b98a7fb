// The code_interpreter executor (Pyodide in worker threads), in-process: the first execution (cold: Pyodide's
// full load and its memory snapshot), a new session once the snapshot exists, warm `print(1)` p50/p99, 20
// concurrent executions over 4 sessions, and memory per kernel (RSS delta) — against the same run's bare
// worker-thread round trip (postMessage echo).
// Run: node bench/code-interpreter.mjs   (builds the executor from src with esbuild; no server needed)
import { build } from 'esbuild';
import { Worker } from 'node:worker_threads';
import { report } from './lib.mjs';

const WARM_RUNS = Number(process.env.BENCH_WARM_RUNS ?? 200);
const KERNELS = Number(process.env.BENCH_KERNELS ?? 4);

const out = 'node_modules/.cache/standin-bench/code-interpreter.mjs';
await build({
  entryPoints: ['src/code-interpreter/service.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: out,
  logLevel: 'warning',
});
const { createCodeInterpreter } = await import(`../${out}`);

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const rssMb = () => process.memoryUsage().rss / 1e6;
const rows = [];

// Baseline: a bare worker thread answering postMessage.
{
  const w = new Worker(
    "require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m))",
    { eval: true },
  );
  const ask = (m) => new Promise((resolve) => (w.once('message', resolve), w.postMessage(m)));
  for (let i = 0; i < 50; i++) await ask({ code: 'print(1)' });
  const times = [];
  for (let i = 0; i < WARM_RUNS; i++) {
    const t0 = performance.now();
    await ask({ code: 'print(1)', files: [] });
    times.push(performance.now() - t0);
  }
  await w.terminate();
  rows.push({
    case: 'baseline: bare worker postMessage round trip',
    p50_ms: round(pct(times, 50), 3),
    p99_ms: round(pct(times, 99), 3),
    note: `${WARM_RUNS} round trips`,
  });
}

const ci = createCodeInterpreter(() => Date.now(), console, { pool_size: 0, max_sessions: KERNELS + 1, timeout_ms: 60_000 });
const run = async (session, code) => {
  const t0 = performance.now();
  const r = await ci.execute({ session, code });
  if (r.status !== 'ok') throw new Error(`${session}: ${r.status} ${r.logs}`);
  return { r, ms: performance.now() - t0 };
};

// Cold: the first execution of all, then a new session's first once the snapshot exists.
const rss0 = rssMb();
const cold = await run('cold', 'print(1)');
rows.push({ case: 'cold: first execution (full Pyodide load + snapshot)', p50_ms: round(cold.ms, 0), p99_ms: '', note: 'one run' });
const second = await run('second', 'print(1)');
rows.push({ case: 'new session from the snapshot (pool empty)', p50_ms: round(second.ms, 0), p99_ms: '', note: 'one run' });

// Warm print(1) in one session.
{
  for (let i = 0; i < 20; i++) await run('cold', 'print(1)');
  const times = [];
  for (let i = 0; i < WARM_RUNS; i++) times.push((await run('cold', 'print(1)')).ms);
  rows.push({
    case: 'warm print(1), one session',
    p50_ms: round(pct(times, 50), 2),
    p99_ms: round(pct(times, 99), 2),
    note: `${WARM_RUNS} runs; goal p50 < 50 ms`,
  });
}

// Memory per kernel: start KERNELS - 2 more sessions (KERNELS in all), RSS delta over all of them.
for (let i = 2; i < KERNELS; i++) await run(`k${i}`, 'print(1)');
const perKernel = (rssMb() - rss0) / KERNELS;

// 20 concurrent executions over 4 warm sessions.
{
  const sessions = ['cold', 'second', ...Array.from({ length: Math.max(0, KERNELS - 2) }, (_, i) => `k${i + 2}`)].slice(0, 4);
  const t0 = performance.now();
  const times = await Promise.all(
    Array.from({ length: 20 }, (_, i) => run(sessions[i % sessions.length], `sum(range(${i} * 10000))`).then((x) => x.ms)),
  );
  const wall = performance.now() - t0;
  rows.push({
    case: `20 concurrent executions over ${sessions.length} sessions`,
    p50_ms: round(pct(times, 50), 1),
    p99_ms: round(pct(times, 99), 1),
    note: `all 20 done in ${round(wall, 0)} ms`,
  });
}
rows.push({
  case: 'memory per kernel (RSS delta / kernels)',
  p50_ms: '',
  p99_ms: '',
  note: `${round(perKernel, 0)} MB each over ${KERNELS} kernels`,
});
await ci.close();

report('code-interpreter', rows, [
  'Per-execution times are the wait of `execute()` (queueing behind the same session included). Numbers on a shared machine are noisy.',
]);
