// How long work waits after an instance dies (issue 29): two instances on one PostgreSQL schema; a burst
// of runs and background responses is created on B, B is killed with SIGKILL while they run, and A takes
// them over once their leases lapse (--lease-ms). The baseline is the same burst on a live B, in the same
// run. Figure: for the items still queued or in progress at the kill (300 ms after the burst), the time
// from the kill to their completion (p50/p99); the baseline measures the same from the same moment.
// Needs PostgreSQL (STANDIN_BENCH_DATABASE_URL, else STANDIN_TEST_DATABASE_URL); Redis is used when
// STANDIN_TEST_REDIS_URL is set. BENCH_LEASES=10000,3000 (ms; the first is the default), BENCH_ITEMS=20.
// Run: npm run build && node bench/takeover.mjs
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { report, startStandin } from './lib.mjs';

const base = process.env.STANDIN_BENCH_DATABASE_URL ?? process.env.STANDIN_TEST_DATABASE_URL;
if (!base) {
  console.log('bench/takeover skipped: no PostgreSQL (STANDIN_BENCH_DATABASE_URL)');
  process.exit(0);
}
const LEASES = (process.env.BENCH_LEASES ?? '10000,3000').split(',').map(Number);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 20);
const ADMIN = 'sk-admin-bench-takeover-00000000000000000';
const KEY = 'sk-proj-bench-takeover-00000000000000000';
const MODEL = 'bench-takeover';
const REPLY = 'A reply streamed in pieces, long enough to be cut by a kill.';
const POLL_MS = 50;

const dir = mkdtempSync(join(tmpdir(), 'standin-bench-takeover-'));
writeFileSync(
  join(dir, 'standin.json'),
  JSON.stringify({
    models: { [MODEL]: { provider: 'builtin', chunk_chars: 8, rules: [{ match: 'slow', reply: REPLY, delay: '200ms' }] } },
    organizations: [
      { id: 'org_bench', name: 'Bench', projects: [{ id: 'proj_bench', name: 'Bench', api_keys: [{ name: 'b', value: KEY }] }] },
    ],
  }),
);
const admin = new pg.Client({ connectionString: base });
await admin.connect();

const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'openai-beta': 'assistants=v2' };
const call = async (url, path, body) => {
  const res = await fetch(`${url}${path}`, { method: body ? 'POST' : 'GET', headers, body: body && JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 400) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]) : NaN;
};

/** One trial: fresh schema, A and B, a burst on B; B is killed `killAfterMs` after the burst (or not). */
async function trial(leaseMs, kill) {
  const schema = `standin_bench_takeover_${process.pid}_${leaseMs}_${kill ? 'k' : 'l'}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const env = {
    STANDIN_DATABASE_URL: url.toString(),
    STANDIN_ADMIN_KEY: ADMIN,
    STANDIN_CONFIG: join(dir, 'standin.json'),
    STANDIN_SEED: 'false',
    STANDIN_LEASE_MS: String(leaseMs),
    ...(process.env.STANDIN_TEST_REDIS_URL ? { STANDIN_REDIS_URL: process.env.STANDIN_TEST_REDIS_URL } : {}),
  };
  const a = await startStandin({ env });
  const b = await startStandin({ env });
  try {
    const assistant = await call(b.url, '/v1/assistants', { model: MODEL });
    // The burst: every run and response created at once, so they are all in flight when B dies.
    const created = performance.now();
    const items = await Promise.all(
      Array.from({ length: ITEMS }, async () => {
        const run = await call(b.url, '/v1/threads/runs', {
          assistant_id: assistant.id,
          thread: { messages: [{ role: 'user', content: 'slow' }] },
        });
        return { kind: 'run', id: run.id, created, path: `/v1/threads/${run.thread_id}/runs/${run.id}` };
      }).concat(
        Array.from({ length: ITEMS }, async () => {
          const resp = await call(b.url, '/v1/responses', { model: MODEL, input: 'slow', background: true });
          return { kind: 'response', id: resp.id, created, path: `/v1/responses/${resp.id}` };
        }),
      ),
    );
    // The moment B dies (or, in the baseline, would die), and the work in flight then: what has to wait.
    await new Promise((r) => setTimeout(r, 300));
    if (kill) b.child.kill('SIGKILL');
    const mark = performance.now();
    const inFlight = new Set(
      (
        await admin.query(
          `select id from ${schema}.thread_runs where status in ('queued', 'in_progress')
           union all select id from ${schema}.responses where status in ('queued', 'in_progress')`,
        )
      ).rows.map((r) => r.id),
    );
    const reader = kill ? a.url : b.url;
    const open = new Set(items);
    const deadline = performance.now() + leaseMs * 3 + 60_000;
    while (open.size && performance.now() < deadline) {
      await Promise.all(
        [...open].map(async (it) => {
          const o = await call(reader, it.path);
          if (['completed', 'failed', 'cancelled', 'expired', 'incomplete'].includes(o.status)) {
            it.done = performance.now();
            it.status = o.status;
            open.delete(it);
          }
        }),
      );
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return items.map((it) => ({ ...it, total: it.done - it.created, wait: it.done - mark, inFlight: inFlight.has(it.id) }));
  } finally {
    await a.stop();
    if (b.child.exitCode === null && b.child.signalCode === null) await b.stop();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  }
}

const rows = [];
for (const leaseMs of LEASES) {
  for (const kill of [false, true]) {
    const items = await trial(leaseMs, kill);
    for (const kind of ['run', 'response']) {
      const mine = items.filter((i) => i.kind === kind);
      const done = mine.filter((i) => i.status === 'completed');
      const waited = done.filter((i) => i.inFlight).map((i) => i.wait);
      rows.push({
        lease_ms: leaseMs,
        case: kill ? 'B killed (SIGKILL)' : 'B live (baseline)',
        kind,
        completed: `${done.length}/${mine.length}`,
        'in flight at the kill': waited.length,
        'kill→complete p50 ms': pct(waited, 50),
        'kill→complete p99 ms': pct(waited, 99),
        'create→complete p50 ms': pct(
          done.map((i) => i.total),
          50,
        ),
      });
    }
  }
}
await admin.end();
rmSync(dir, { recursive: true, force: true });
report('takeover', rows, [
  `${ITEMS} runs and ${ITEMS} background responses per trial, created on B at once (create→complete counts from the burst's start); each reply is ${REPLY.length} characters in 8-character pieces 200 ms apart (1.6 s a turn).`,
  `Polled every ${POLL_MS} ms through the instance that lives (A when B was killed). Runs are executed by B (the instance that created them); background responses by whichever instance claimed their job. A taken-over item waits for its lease (and claim) to lapse, at most --lease-ms after B's last renewal, plus up to one job poll (1 s), then makes its turn again.`,
]);
