// Batches: lines per second of a batch with the built-in model against the same number of direct
// POST /v1/chat/completions requests in the same run (the baseline), and the peak memory of a 50,000-line
// batch against the same process idle.
// Run: npm run build && node bench/batches.mjs   (SQLite; BENCH_BATCH_LINES, BENCH_BIG_LINES change the sizes)
import { readFileSync } from 'node:fs';
import { cpuMs, report, startStandin } from './lib.mjs';

const LINES = Number(process.env.BENCH_BATCH_LINES ?? 3000);
const BIG = Number(process.env.BENCH_BIG_LINES ?? 50_000);
/** Direct requests in flight at once (keep-alive fetch). */
const CONCURRENCY = 32;
const MODEL = 'gpt-4o-mini';

const rows = [];
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const memory = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
};
const body = (i) => ({ model: MODEL, messages: [{ role: 'user', content: `Request number ${i}: tell me something about it.` }] });
const line = (i) => JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/chat/completions', body: body(i) });

const ADMIN_KEY = 'sk-admin-bench-batches-00000000000000000000';
const started = [];
// A failed run must not leave its Standin running.
process.on('exit', () => started.forEach((s) => s.child.kill('SIGKILL')));

async function boot() {
  const standin = await startStandin({ env: { STANDIN_ADMIN_KEY: ADMIN_KEY } });
  started.push(standin);
  const admin = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
  // The demo organization starts on a low tier; the benchmark measures batches, not the rate limiter.
  const cfg = await fetch(`${standin.url}/admin/v1/config`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ rate_limits: { organizations: { org_demo: { tier: 'tier_5' } } } }),
  });
  if (!cfg.ok) throw new Error(`could not raise the rate limits: ${cfg.status} ${await cfg.text()}`);
  const auth = { authorization: `Bearer ${standin.keys.platform}` };
  return { standin, auth };
}

async function upload(standin, auth, n) {
  const form = new FormData();
  form.append('purpose', 'batch');
  const parts = [];
  for (let i = 0; i < n; i++) parts.push(`${line(i)}\n`);
  form.append('file', new Blob(parts), 'input.jsonl');
  const res = await fetch(`${standin.url}/v1/files`, { method: 'POST', headers: auth, body: form });
  if (!res.ok) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

/** Creates a batch and polls it until it ends; resolves with the batch and the seconds from create to its end. */
async function runBatch(standin, auth, fileId, onPoll = () => {}) {
  const t0 = performance.now();
  const res = await fetch(`${standin.url}/v1/batches`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' }),
  });
  let b = await res.json();
  if (!res.ok) throw new Error(`create failed: ${JSON.stringify(b)}`);
  while (!['completed', 'failed', 'expired', 'cancelled'].includes(b.status)) {
    await new Promise((r) => setTimeout(r, 20));
    onPoll();
    b = await (await fetch(`${standin.url}/v1/batches/${b.id}`, { headers: auth })).json();
  }
  return { batch: b, seconds: (performance.now() - t0) / 1000 };
}

// 1. Lines per second: direct requests, then the same bodies as one batch, on one process.
{
  const { standin, auth } = await boot();
  const pid = standin.child.pid;
  const headers = { ...auth, 'content-type': 'application/json' };
  const direct = async (n, offset = 0) => {
    let next = 0;
    let failed = 0;
    const worker = async () => {
      while (next < n) {
        const i = offset + next++;
        const r = await fetch(`${standin.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify(body(i)) });
        if (r.status !== 200) failed++;
        await r.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return failed;
  };
  await direct(300, 1_000_000); // warm-up
  const warm = await upload(standin, auth, 300);
  await runBatch(standin, auth, warm);

  let cpu0 = cpuMs(pid);
  let t0 = performance.now();
  const failed = await direct(LINES);
  const directS = (performance.now() - t0) / 1000;
  const directCpu = cpuMs(pid) - cpu0;
  if (failed) throw new Error(`${failed} direct requests failed`);
  rows.push({
    what: `${LINES} direct POST /v1/chat/completions (${CONCURRENCY} in flight)`,
    'lines/s': Math.round(LINES / directS),
    seconds: round(directS, 2),
    'server CPU ms/line': round(directCpu / LINES, 3),
  });

  const fileId = await upload(standin, auth, LINES);
  cpu0 = cpuMs(pid);
  const { batch, seconds } = await runBatch(standin, auth, fileId);
  const batchCpu = cpuMs(pid) - cpu0;
  if (batch.status !== 'completed' || batch.request_counts.completed !== LINES) throw new Error(`batch ended ${JSON.stringify(batch)}`);
  rows.push({
    what: `one batch of the same ${LINES} bodies (create → completed, output file written)`,
    'lines/s': Math.round(LINES / seconds),
    seconds: round(seconds, 2),
    'server CPU ms/line': round(batchCpu / LINES, 3),
  });
  await standin.stop();
}

// 2. Peak memory of a 50,000-line batch (a fresh process: VmHWM is the process's high-water mark).
{
  const { standin, auth } = await boot();
  const pid = standin.child.pid;
  const warm = await upload(standin, auth, 100);
  await runBatch(standin, auth, warm);
  const idle = memory(pid);
  const fileId = await upload(standin, auth, BIG);
  const afterUpload = memory(pid);
  let high = 0;
  const { batch, seconds } = await runBatch(standin, auth, fileId, () => (high = Math.max(high, memory(pid).rss)));
  const end = memory(pid);
  if (batch.status !== 'completed' || batch.request_counts.completed !== BIG) throw new Error(`batch ended ${JSON.stringify(batch)}`);
  const input = (await (await fetch(`${standin.url}/v1/files/${batch.input_file_id}`, { headers: auth })).json()).bytes;
  const output = (await (await fetch(`${standin.url}/v1/files/${batch.output_file_id}`, { headers: auth })).json()).bytes;
  rows.push({
    what: `one batch of ${BIG} lines (input ${round(input / 1e6)} MB, output ${round(output / 1e6)} MB)`,
    'lines/s': Math.round(BIG / seconds),
    seconds: round(seconds, 1),
    'server CPU ms/line': '',
    'RSS idle MB': round(idle.rss),
    'peak RSS before the batch MB': round(afterUpload.peak),
    'RSS sampled during the batch, max MB': round(high),
    'peak RSS (VmHWM) at the end MB': round(end.peak),
  });
  await standin.stop();
}

report(
  'batches',
  rows.map((r) => ({
    what: r.what,
    'lines/s': r['lines/s'],
    seconds: r.seconds,
    'server CPU ms/line': r['server CPU ms/line'],
    'RSS idle MB': r['RSS idle MB'] ?? '',
    'peak RSS before the batch MB': r['peak RSS before the batch MB'] ?? '',
    'RSS sampled during the batch, max MB': r['RSS sampled during the batch, max MB'] ?? '',
    'peak RSS (VmHWM) at the end MB': r['peak RSS (VmHWM) at the end MB'] ?? '',
  })),
  [
    `Built-in model (${MODEL}), SQLite, one process, rate limits at tier 5. Direct requests: ${CONCURRENCY} in flight over keep-alive fetch, after 300 warm-up requests and a 300-line warm-up batch. Batch lines run 32 at a time in one job, results recorded per group; the seconds include writing the output file. Shared 2-core machine: figures are noisy.`,
  ],
);
