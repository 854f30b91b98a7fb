// Run overhead on the built-in provider: create → completed by polling and by streaming, time to the
// first SSE event, and 200 concurrent runs; against a bare Fastify route measured in the same run.
// Run: npm run build && node bench/runs.mjs   (BENCH_RUNS=200 by default)
import { readTimedStream, report, startBaseline, startStandin } from './lib.mjs';

const N = Number(process.env.BENCH_RUNS ?? 200);
const CONCURRENT = 200;
const MODEL = 'bench-echo';

const ADMIN_KEY = 'sk-admin-bench-runs-0000000000000000000000';
const baseline = await startBaseline();
const standin = await startStandin({ env: { STANDIN_ADMIN_KEY: ADMIN_KEY } });
const stopAll = async () => {
  await standin.stop();
  await baseline.stop();
};
process.on('uncaughtException', async (err) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
const headers = { authorization: `Bearer ${standin.keys.platform}`, 'content-type': 'application/json', 'openai-beta': 'assistants=v2' };
const post = (path, body) => fetch(`${standin.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
const get = (path) => fetch(`${standin.url}${path}`, { headers });

// The demo organization starts on the free tier; the benchmark measures runs, not the rate limiter.
const cfg = await fetch(`${standin.url}/admin/v1/config`, {
  method: 'POST',
  headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
  body: JSON.stringify({ rate_limits: { organizations: { org_demo: { tier: 'tier_5' } } } }),
});
if (cfg.status !== 200) {
  console.error(`could not raise the rate limits: ${cfg.status} ${await cfg.text()}`);
  await stopAll();
  process.exit(1);
}
const assistant = await (await post('/v1/assistants', { model: MODEL, instructions: 'Answer briefly.' })).json();
if (!assistant.id) throw new Error(`could not create the assistant: ${JSON.stringify(assistant)}`);
const runBody = (i, stream = false) => ({
  assistant_id: assistant.id,
  stream,
  thread: { messages: [{ role: 'user', content: `benchmark question number ${i}` }] },
});

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 100) / 100;
};

// Warm up both servers (JIT, connections, the tokenizer).
for (let i = 0; i < 30; i++) {
  await (
    await fetch(`${baseline.url}/item`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' })
  ).text();
  await pollRun(await (await post('/v1/threads/runs', runBody(i))).json());
  await streamRun(i);
}

// Baseline: one POST to a bare Fastify JSON route.
const base = [];
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  await (
    await fetch(`${baseline.url}/item`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' })
  ).text();
  base.push(performance.now() - t0);
}

// Polling: POST /v1/threads/runs, then GET the run until it is terminal (no pause between reads).
const polled = [];
let pollErrors = 0;
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  const run = await (await post('/v1/threads/runs', runBody(i))).json();
  const end = await pollRun(run);
  if (end.status !== 'completed') pollErrors++;
  polled.push(performance.now() - t0);
}

// Streaming: POST with stream:true, read frames until [DONE]; time to the first event and to the end.
const firstEvent = [];
const streamed = [];
let streamErrors = 0;
for (let i = 0; i < N; i++) {
  const r = await streamRun(i);
  firstEvent.push(r.first);
  streamed.push(r.total);
  if (!r.completed) streamErrors++;
}

// 200 runs at once: create them all, then poll each to the end.
const t0 = performance.now();
const started = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => post('/v1/threads/runs', runBody(i)).then((r) => r.json())));
const ends = await Promise.all(
  started.map((run) => (run.id ? pollRun(run, 5) : Promise.resolve({ status: `error: ${JSON.stringify(run).slice(0, 200)}` }))),
);
const wall = performance.now() - t0;
const concurrentErrors = ends.filter((e) => e.status !== 'completed');

await stopAll();

report(
  'runs',
  [
    { operation: 'bare Fastify POST (baseline)', 'p50 ms': pct(base, 50), 'p99 ms': pct(base, 99), runs: N, errors: 0 },
    { operation: 'run create → completed, polling', 'p50 ms': pct(polled, 50), 'p99 ms': pct(polled, 99), runs: N, errors: pollErrors },
    {
      operation: 'run create → completed, streaming',
      'p50 ms': pct(streamed, 50),
      'p99 ms': pct(streamed, 99),
      runs: N,
      errors: streamErrors,
    },
    {
      operation: 'streaming: first SSE event',
      'p50 ms': pct(firstEvent, 50),
      'p99 ms': pct(firstEvent, 99),
      runs: N,
      errors: streamErrors,
    },
    {
      operation: `${CONCURRENT} concurrent runs (wall time)`,
      'p50 ms': '-',
      'p99 ms': Math.round(wall),
      runs: CONCURRENT,
      errors: concurrentErrors.length,
    },
  ],
  [
    `Built-in provider (model ${MODEL}), SQLite, one process, rate limits at tier 5; sequential requests over keep-alive fetch, ${N} runs per row after 30 warm-up runs.`,
    'Polling reads the run again at once after each answer; streaming times the first frame and the final thread.run.completed.',
    'Baseline: a bare Fastify 5 JSON POST route in its own process, measured in the same run.',
    ...(concurrentErrors.length ? [`concurrent failures: ${JSON.stringify(concurrentErrors.slice(0, 3))}`] : []),
  ],
);
process.exit(pollErrors || streamErrors || concurrentErrors.length ? 1 : 0);

async function pollRun(run, pauseMs = 0) {
  for (;;) {
    const r = await (await get(`/v1/threads/${run.thread_id}/runs/${run.id}`)).json();
    if (!['queued', 'in_progress', 'cancelling'].includes(r.status)) return r;
    if (pauseMs) await new Promise((res) => setTimeout(res, pauseMs));
  }
}

async function streamRun(i) {
  const t0 = performance.now();
  const { first, ms, text } = await readTimedStream(await post('/v1/threads/runs', runBody(i, true)), t0);
  return { first, total: ms, completed: text.includes('event: thread.run.completed') };
}
