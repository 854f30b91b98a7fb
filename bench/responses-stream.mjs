// Streamed responses on the built-in provider: time to the first text delta and to the end, for a streamed
// response against a streamed chat completion of the same prompt (the baseline, measured in the same run,
// interleaved); then the memory of 1,000 streamed responses open at once.
// Run: npm run build && node bench/responses-stream.mjs   (BENCH_STREAMS=200, BENCH_OPEN=1000; BENCH_STORE=false: responses not stored)
import { readFileSync } from 'node:fs';
import { readTimedStream, report, startStandin } from './lib.mjs';

const N = Number(process.env.BENCH_STREAMS ?? 200);
const OPEN = Number(process.env.BENCH_OPEN ?? 1000);
const MODEL = 'bench-echo';
const ADMIN_KEY = 'sk-admin-bench-responses-000000000000000000';
const PROMPT = 'Please repeat this sentence back to me so that the reply comes in several streamed pieces.';

const standin = await startStandin({ env: { STANDIN_ADMIN_KEY: ADMIN_KEY } });
process.on('uncaughtException', async (err) => {
  console.error(err);
  await standin.stop();
  process.exit(1);
});
const headers = { authorization: `Bearer ${standin.keys.platform}`, 'content-type': 'application/json' };
const post = (path, body, signal) => fetch(`${standin.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal });

// The benchmark measures streams, not the rate limiter; `bench-slow-*` streams stay open (a piece every 5 s).
const cfg = await fetch(`${standin.url}/admin/v1/config`, {
  method: 'POST',
  headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
  body: JSON.stringify({
    rate_limits: { organizations: { org_demo: { tier: 'tier_5' } } },
    models: { 'bench-slow-*': { provider: 'builtin', delay: '5s', chunk_chars: 8 }, '*': { provider: 'builtin', chunk_chars: 16 } },
  }),
});
if (cfg.status !== 200) throw new Error(`could not configure: ${cfg.status} ${await cfg.text()}`);

/** Reads a stream to its end: ms to the first text delta and to the end. */
async function timed(path, body, isDelta, isEnd) {
  const t0 = performance.now();
  const res = await post(path, body);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  const { first, ms, text } = await readTimedStream(res, t0, isDelta);
  return { first, total: ms, ok: isEnd(text) };
}
const chat = () =>
  timed(
    '/v1/chat/completions',
    { model: MODEL, stream: true, messages: [{ role: 'user', content: PROMPT }] },
    (t) => t.includes('"content":"'),
    (t) => t.includes('data: [DONE]'),
  );
const response = () =>
  timed(
    '/v1/responses',
    { model: MODEL, stream: true, input: PROMPT, store: process.env.BENCH_STORE !== 'false' },
    (t) => t.includes('event: response.output_text.delta'),
    (t) => t.includes('event: response.completed'),
  );

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 100) / 100;
};

for (let i = 0; i < 30; i++) {
  await chat();
  await response();
}
const runs = { chat: [], response: [] };
let errors = 0;
for (let i = 0; i < N; i++) {
  // Interleaved, the order flipped every round: neither gets the warmer process.
  const pair =
    i % 2
      ? [
          ['response', response],
          ['chat', chat],
        ]
      : [
          ['chat', chat],
          ['response', response],
        ];
  for (const [name, fn] of pair) {
    const r = await fn();
    if (!r.ok) errors++;
    runs[name].push(r);
  }
}

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${standin.child.pid}/status`, 'utf8'))[1]) / 1024;
const idle = rssMb();
const ac = new AbortController();
const opened = await Promise.all(
  Array.from({ length: OPEN }, async (_, i) => {
    const res = await post('/v1/responses', { model: `bench-slow-${i}`, stream: true, input: PROMPT }, ac.signal);
    const reader = res.body.getReader();
    const { value } = await reader.read();
    return { reader, ok: res.status === 200 && new TextDecoder().decode(value).startsWith('event: response.created') };
  }),
);
await new Promise((r) => setTimeout(r, 500));
const open = rssMb();
const openErrors = opened.filter((o) => !o.ok).length;
ac.abort();
await standin.stop();

const row = (operation, xs, key) => ({
  operation,
  'p50 ms': pct(
    xs.map((x) => x[key]),
    50,
  ),
  'p99 ms': pct(
    xs.map((x) => x[key]),
    99,
  ),
  n: xs.length,
});
report(
  'responses-stream',
  [
    row('chat completion stream: first delta (baseline)', runs.chat, 'first'),
    row('response stream: first output_text.delta', runs.response, 'first'),
    row('chat completion stream: [DONE] (baseline)', runs.chat, 'total'),
    row('response stream: response.completed', runs.response, 'total'),
    {
      operation: `RSS with ${OPEN} response streams open (idle ${idle.toFixed(1)} MB)`,
      'p50 ms': '-',
      'p99 ms': '-',
      n: `${open.toFixed(1)} MB (+${(((open - idle) * 1024) / OPEN).toFixed(1)} KB each)`,
    },
  ],
  [
    `Built-in provider (model ${MODEL}, 16-character pieces), SQLite, one process, rate limits at tier 5; the same prompt, ${N} of each after 30 warm-up pairs, interleaved.`,
    `Open streams: ${OPEN} streamed responses on a model pausing 5 s before each piece, each read to its first frame, RSS of the Standin process 0.5 s later.`,
    ...(errors || openErrors ? [`errors: ${errors} streams, ${openErrors} open streams`] : []),
  ],
);
process.exit(errors || openErrors ? 1 : 0);
