// file_search on /v1/responses against the vector store search alone (the baseline, measured in the same
// run, interleaved in blocks): wall time per request (p50, p99) and Standin's CPU per request. Built-in
// model (no pacing), SQLite, one process, rate limits at tier 5; a store of 20 small files.
// Run: npm run build && node bench/responses-file-search.mjs   (BENCH_REQUESTS=200 of each)
import { apiBench, cpuMs, report } from './lib.mjs';

const N = Number(process.env.BENCH_REQUESTS ?? 200);
const BLOCK = 20;
const ADMIN_KEY = 'sk-admin-bench-file-search-000000000000000';
const QUESTION = 'What is the launch code of the Zephyr probe?';

const { standin, post } = await apiBench({
  adminKey: ADMIN_KEY,
  config: { rate_limits: { organizations: { org_demo: { tier: 'tier_5' } } }, models: { '*': { provider: 'builtin' } } },
});
const auth = { authorization: `Bearer ${standin.keys.platform}` };

// A store of 20 files, one of which holds the fact.
const fileIds = [];
for (let i = 0; i < 20; i++) {
  const form = new FormData();
  const text =
    i === 7
      ? '# Zephyr\n\nThe launch code of the Zephyr probe is 7731-ALPHA.\n'
      : `# Notes ${i}\n\nThe garden of house ${i} has ${i + 3} apple trees and a pond with ${i * 2} fish.\n`;
  form.append('purpose', 'assistants');
  form.append('file', new Blob([text]), `notes-${i}.md`);
  const res = await fetch(`${standin.url}/v1/files`, { method: 'POST', headers: auth, body: form });
  fileIds.push((await res.json()).id);
}
const store = await post('/v1/vector_stores', { name: 'bench', file_ids: fileIds });
for (;;) {
  const s = await (await fetch(`${standin.url}/v1/vector_stores/${store.id}`, { headers: auth })).json();
  if (s.status === 'completed') break;
  await new Promise((r) => setTimeout(r, 50));
}

const search = async () => {
  const r = await post(`/v1/vector_stores/${store.id}/search`, { query: QUESTION, max_num_results: 10 });
  return r.data.length > 0;
};
const respond = async () => {
  const r = await post('/v1/responses', {
    model: 'gpt-4.1',
    input: QUESTION,
    tools: [{ type: 'file_search', vector_store_ids: [store.id] }],
  });
  return r.output[0]?.type === 'file_search_call' && r.output[1]?.content[0].annotations.length === 1;
};

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 100) / 100;
};

for (let i = 0; i < 30; i++) {
  await search();
  await respond();
}
const runs = { search: { ms: [], cpu: 0 }, respond: { ms: [], cpu: 0 } };
let errors = 0;
for (let b = 0; b < N / BLOCK; b++) {
  // Blocks interleaved, the order flipped every round: neither gets the warmer process.
  const order = b % 2 ? ['respond', 'search'] : ['search', 'respond'];
  for (const name of order) {
    const fn = name === 'search' ? search : respond;
    const cpu0 = cpuMs(standin.child.pid);
    for (let i = 0; i < BLOCK; i++) {
      const t0 = performance.now();
      if (!(await fn())) errors++;
      runs[name].ms.push(performance.now() - t0);
    }
    runs[name].cpu += cpuMs(standin.child.pid) - cpu0;
  }
}
await standin.stop();

const row = (operation, r) => ({
  operation,
  'p50 ms': pct(r.ms, 50),
  'p99 ms': pct(r.ms, 99),
  'CPU ms/request': (r.cpu / r.ms.length).toFixed(2),
  n: r.ms.length,
});
const s = row('POST /v1/vector_stores/{id}/search (baseline)', runs.search);
const f = row('POST /v1/responses with file_search (search + 2 model calls + stored)', runs.respond);
report(
  'responses-file-search',
  [
    s,
    f,
    {
      operation: 'overhead of a file_search response over the search alone',
      'p50 ms': `${(f['p50 ms'] / s['p50 ms']).toFixed(2)}x (+${(f['p50 ms'] - s['p50 ms']).toFixed(2)})`,
      'p99 ms': `${(f['p99 ms'] / s['p99 ms']).toFixed(2)}x`,
      'CPU ms/request': `${(f['CPU ms/request'] / s['CPU ms/request']).toFixed(2)}x (+${(f['CPU ms/request'] - s['CPU ms/request']).toFixed(2)})`,
      n: '-',
    },
  ],
  [
    `Built-in model, SQLite, one process, tier 5; a store of 20 files; ${N} of each after 30 warm-up pairs, in interleaved blocks of ${BLOCK}.`,
    ...(errors ? [`errors: ${errors}`] : []),
  ],
);
process.exit(errors ? 1 : 0);
