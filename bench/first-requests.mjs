// The first request of each route on a fresh Standin: how long the server's thread is held while it makes
// what a route makes on first use (its request validator: src/core/validation.ts; the pre-tokenizer's
// classes: src/core/pretokens.ts). Each request is sent once, then again; meanwhile GET /livez is asked
// one request at a time, 2 ms apart, and its worst latency bounds the longest task on the server's thread.
// Against a bare Fastify route's first and second POST, in the same run; BENCH_FIRST_BASELINE_SCRIPT=
// /path/main.js adds an older build. Rounds alternate (BENCH_ROUNDS, 3), each on a fresh data folder.
// Run: npm run build && node bench/first-requests.mjs
import { setTimeout as sleep } from 'node:timers/promises';
import { platformPost, report, startBaseline, startStandin } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const OLD = process.env.BENCH_FIRST_BASELINE_SCRIPT;

/** Sends `send()` while /livez is asked: the worst /livez latency meanwhile, ms. */
async function heldWhile(base, send) {
  let worst = 0;
  let on = true;
  const probe = (async () => {
    while (on) {
      const t = performance.now();
      await (await fetch(`${base}/livez`)).arrayBuffer();
      worst = Math.max(worst, performance.now() - t);
      await sleep(2);
    }
  })();
  await sleep(20);
  worst = 0;
  await send();
  await sleep(20);
  on = false;
  await probe;
  return worst;
}

/** The requests, in order: each a name and how to send it (given the store made by the first). */
function requests(s) {
  const { post } = platformPost(s);
  let store;
  return [
    ['POST /v1/vector_stores', async () => (store ??= await post('/v1/vector_stores', { name: 'first' }))],
    ['POST /v1/vector_stores/{id}/search', () => post(`/v1/vector_stores/${store.id}/search`, { query: 'how do I rotate a key' })],
    ['POST /v1/responses', () => post('/v1/responses', { model: 'gpt-4o-mini', input: 'Say hello.' })],
    [
      'POST /v1/chat/completions',
      () => post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }] }),
    ],
    ['POST /v1/assistants', () => post('/v1/assistants', { model: 'gpt-4o-mini', name: 'first' })],
  ];
}

const runs = {};
const note = (name, request, first, second) => {
  runs[name] ??= {};
  (runs[name][request] ??= { first: [], second: [] }).first.push(first);
  runs[name][request].second.push(second);
};
for (let r = 0; r < ROUNDS; r++) {
  const bare = await startBaseline();
  const item = () => fetch(`${bare.url}/item`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":1}' });
  note('bare', 'POST /item (no schema)', await heldWhile(bare.url, item), await heldWhile(bare.url, item));
  await bare.stop();
  for (const [name, main] of [...(OLD ? [['before', OLD]] : []), ['now', 'dist/main.js']]) {
    const s = await startStandin({ main });
    // Past the start's own warm-ups (the tokenizer half a second after listening).
    await sleep(1500);
    for (const [request, send] of requests(s)) note(name, request, await heldWhile(s.url, send), await heldWhile(s.url, send));
    await s.stop();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const cell = (xs) => `${median(xs).toFixed(1)} (${xs.map((x) => x.toFixed(1)).join(', ')})`;
const rows = [];
for (const [name, byRequest] of Object.entries(runs))
  for (const [request, { first, second }] of Object.entries(byRequest))
    rows.push({ build: name, request, first: cell(first), second: cell(second) });
report('first-requests', rows, [
  `Worst GET /livez latency (ms) while the route's first request, then its second, was answered: median of ${ROUNDS} rounds (each round's figure in brackets). bare: a Fastify route in its own process; ${OLD ? `before: ${OLD}; ` : ''}now: dist/main.js, each on a fresh data folder.`,
]);
