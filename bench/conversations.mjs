// A response's create time along a conversation's length, on the built-in model: p50 at the 1st, 10th,
// 25th and 50th turn of conversations (each turn appends its input and output, two items), against a
// response made with no state in the same run, and a previous_response_id chain for comparison.
// Run: npm run build && node bench/conversations.mjs   (BENCH_CONVERSATIONS=20 by default)
import { apiBench, report } from './lib.mjs';

const C = Number(process.env.BENCH_CONVERSATIONS ?? 40);
const TURNS = 50;
const MARKS = [1, 10, 25, 50];
const ADMIN_KEY = 'sk-admin-bench-conversations-000000000000';
const MODEL = 'gpt-4o-mini';

// The benchmark measures responses, not the rate limiter.
const { standin, post } = await apiBench({
  adminKey: ADMIN_KEY,
  config: { rate_limits: { organizations: { org_demo: { tier: 'tier_5' } } } },
});
const timed = async (path, body) => {
  const t0 = performance.now();
  const r = await post(path, body);
  return { ms: performance.now() - t0, r };
};

const p50 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.floor(s.length / 2)] * 100) / 100;
};
const turnText = (i) => `Turn ${i}: please keep a note that the order number is ${1000 + i} and answer briefly.`;

// Warm up (JIT, the tokenizer, connections).
for (let i = 0; i < 50; i++) await post('/v1/responses', { model: MODEL, input: turnText(i) });

const conv = Object.fromEntries(MARKS.map((m) => [m, []]));
const chain = Object.fromEntries(MARKS.map((m) => [m, []]));
const plain = Object.fromEntries(MARKS.map((m) => [m, []]));
const conversations = [];
const previous = [];
for (let c = 0; c < C; c++) conversations.push((await post('/v1/conversations', {})).id);
// Turn by turn across all conversations, a stateless response beside each turn: every turn number is
// measured over the same stretch of the run's time as the baseline.
for (let turn = 1; turn <= TURNS; turn++) {
  for (let c = 0; c < C; c++) {
    const a = await timed('/v1/responses', { model: MODEL, input: turnText(turn), conversation: conversations[c] });
    const b = await timed('/v1/responses', {
      model: MODEL,
      input: turnText(turn),
      ...(previous[c] ? { previous_response_id: previous[c] } : {}),
    });
    previous[c] = b.r.id;
    const p = await timed('/v1/responses', { model: MODEL, input: turnText(turn) });
    if (MARKS.includes(turn)) {
      conv[turn].push(a.ms);
      chain[turn].push(b.ms);
      plain[turn].push(p.ms);
    }
  }
}
await standin.stop();

const rows = MARKS.map((turn) => ({
  turn,
  'conversation p50 (ms)': p50(conv[turn]),
  'previous_response_id p50 (ms)': p50(chain[turn]),
  'no state p50 (ms), same turn': p50(plain[turn]),
  'conversation / no state': Math.round((p50(conv[turn]) / p50(plain[turn])) * 100) / 100,
}));
report('conversations', rows, [
  `${C} conversations of ${TURNS} turns (two items a turn), built-in model, SQLite; one request at a time.`,
  'Goal: the conversation column does not grow with the turn number.',
]);
