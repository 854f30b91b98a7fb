// Webhook deliveries per second to a local receiver (every attempt recorded), and event-to-first-attempt
// latency, on SQLite and PostgreSQL; the baseline is a bare signer POSTing the same bodies with the same
// HTTP client and concurrency, no queue, no store, measured in the same run.
// Run: npm run build && node bench/webhooks.mjs   (BENCH_EVENTS, BENCH_DATABASE_URL to change the defaults)
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import pg from 'pg';
import { cpuMs, report, startStandin } from './lib.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10000);
const LATENCY_EVENTS = 300;
const ADMIN = 'sk-admin-bench-webhooks-0000000000000000';
const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.STANDIN_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The receiver: answers 200 at once, remembers when each webhook-id first arrived. */
function startReceiver() {
  const first = new Map();
  let total = 0;
  let waiter;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      total++;
      const id = req.headers['webhook-id'];
      if (!first.has(id)) first.set(id, performance.now());
      res.writeHead(200).end('ok');
      if (waiter && first.size >= waiter.n) waiter.resolve();
    });
  });
  server.keepAliveTimeout = 10_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/hook`,
        first,
        total: () => total,
        reset() {
          first.clear();
          total = 0;
        },
        until(n, timeoutMs = 120_000) {
          if (first.size >= n) return Promise.resolve();
          return new Promise((resolve, reject) => {
            const t = setTimeout(() => reject(new Error(`only ${first.size} of ${n} deliveries arrived`)), timeoutMs);
            waiter = { n, resolve: () => (clearTimeout(t), (waiter = undefined), resolve()) };
          });
        },
        close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
      }),
    ),
  );
}

/** Baseline: a separate process signs and POSTs n envelopes with undici (64 at a time). */
function baseline(url, n) {
  const code = `
    const { createHmac } = require('node:crypto');
    const { Agent, request } = require('undici');
    const key = Buffer.alloc(32, 7);
    const agent = new Agent({ connections: 128 });
    let next = 0;
    const one = async () => {
      while (next < ${n}) {
        const i = next++;
        const id = 'evt_baseline_' + i;
        const body = JSON.stringify({ id, object: 'event', type: 'batch.completed', created_at: 1, data: { id: 'batch_' + i } });
        const ts = Math.floor(Date.now() / 1000);
        const sig = 'v1,' + createHmac('sha256', key).update(id + '.' + ts + '.' + body).digest('base64');
        const res = await request(${JSON.stringify(url)}, { method: 'POST', dispatcher: agent, body, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': sig } });
        await res.body.text();
      }
    };
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    Promise.all(Array.from({ length: 64 }, one)).then(() => { const c = process.cpuUsage(c0); console.log('DONE ' + (performance.now() - t0) + ' ' + (c.user + c.system) / 1000); agent.close(); });
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => {
      const m = /DONE (\S+) (\S+)/.exec(String(d));
      if (m) resolve({ ms: Number(m[1]), cpuMs: Number(m[2]) });
    });
    child.on('exit', (c) => c && reject(new Error(`baseline exited with ${c}`)));
  });
}

async function admin(url, path, body) {
  const r = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** Emits n events through the admin API, `parallel` at a time. */
async function emit(url, n, parallel = 16) {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next++ < n) await admin(url, '/admin/v1/projects/proj_demo/events', { type: 'batch.completed' });
    }),
  );
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function measure(label, env, rx) {
  const args = ['--admin-key', ADMIN];
  // 1. Fill the outbox with the workers off, so the delivery run starts with all events waiting.
  let s = await startStandin({ args: [...args, '--no-workers'], env });
  await admin(s.url, '/admin/v1/projects/proj_demo/webhook_endpoints', { name: 'bench', url: rx.url, event_types: ['batch.completed'] });
  await emit(s.url, EVENTS);
  await s.stop();
  // 2. Restart with workers: every event fans out to a delivery, each delivery is one recorded attempt.
  rx.reset();
  s = await startStandin({ args, env, data: s.data });
  const started = performance.now();
  const cpu0 = cpuMs(s.child.pid);
  await rx.until(EVENTS);
  const seconds = (performance.now() - started) / 1000;
  const cpuPerDelivery = (cpuMs(s.child.pid) - cpu0) / EVENTS;
  // 3. Latency: one event at a time, from the admin call to the first attempt reaching the receiver.
  rx.reset();
  const lat = [];
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const sent = performance.now();
    const event = await admin(s.url, '/admin/v1/projects/proj_demo/events', { type: 'batch.completed' });
    while (!rx.first.has(event.id)) await new Promise((r) => setImmediate(r));
    lat.push(rx.first.get(event.id) - sent);
  }
  const attempts = await countAttempts(s, env);
  await s.stop();
  return { label, rate: Math.round(EVENTS / seconds), cpu: cpuPerDelivery, p50: pct(lat, 50), p99: pct(lat, 99), attempts };
}

/** Attempts recorded in the store (proves every attempt was written). */
async function countAttempts(s, env) {
  const r = await fetch(`${s.url}/admin/v1/projects/proj_demo/webhook_endpoints`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const [ep] = (await r.json()).data;
  if (env.STANDIN_DATABASE_URL) {
    const c = new pg.Client({ connectionString: env.STANDIN_DATABASE_URL });
    await c.connect();
    const { rows } = await c.query(
      'select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = $1',
      [ep.id],
    );
    await c.end();
    return rows[0].n;
  }
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(`${s.data}/standin.db`, { readonly: true });
  const n = db
    .prepare('select count(*) as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ?')
    .get(ep.id).n;
  db.close();
  return n;
}

const rx = await startReceiver();
const rows = [];
const { ms: baseMs, cpuMs: baseCpuTotal } = await baseline(rx.url, EVENTS);
const baseCpu = baseCpuTotal / EVENTS;
rows.push({
  setup: 'baseline: signer + undici POST, no queue or store',
  'deliveries/s': Math.round(EVENTS / (baseMs / 1000)),
  'sender CPU ms/delivery': baseCpu.toFixed(3),
  'event→first attempt p50 ms': '-',
  p99: '-',
  'attempts recorded': '-',
});
rx.reset();

const sqlite = await measure('Standin, SQLite', {}, rx);
rows.push({
  setup: sqlite.label,
  'deliveries/s': sqlite.rate,
  'sender CPU ms/delivery': sqlite.cpu.toFixed(3),
  'event→first attempt p50 ms': sqlite.p50.toFixed(2),
  p99: sqlite.p99.toFixed(2),
  'attempts recorded': sqlite.attempts,
});

let schema;
try {
  if (process.env.BENCH_SKIP_PG) throw new Error('BENCH_SKIP_PG is set');
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  schema = `bench_webhooks_${process.pid}`;
  await c.query(`create schema ${schema}`);
  await c.end();
  const u = new URL(PG_URL);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const pgr = await measure('Standin, PostgreSQL', { STANDIN_DATABASE_URL: u.toString() }, rx);
  rows.push({
    setup: pgr.label,
    'deliveries/s': pgr.rate,
    'sender CPU ms/delivery': pgr.cpu.toFixed(3),
    'event→first attempt p50 ms': pgr.p50.toFixed(2),
    p99: pgr.p99.toFixed(2),
    'attempts recorded': pgr.attempts,
  });
} catch (err) {
  rows.push({
    setup: `PostgreSQL skipped: ${err.message}`,
    'deliveries/s': '-',
    'sender CPU ms/delivery': '-',
    'event→first attempt p50 ms': '-',
    p99: '-',
    'attempts recorded': '-',
  });
} finally {
  if (schema) {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema ${schema} cascade`);
    await c.end();
  }
}
await rx.close();
report('webhooks', rows, [
  `${EVENTS} events queued with the workers off, then delivered (fan-out + signed POST + attempt row) after a restart; rate = events / time from "listening" to the last first arrival.`,
  'CPU ms/delivery: CPU time of the sending process (Standin: all its work — fan-out, store, signing, HTTP) per delivery; 1000 / it is the one-core ceiling, steadier than wall-clock rates on a shared machine.',
  `Latency: ${LATENCY_EVENTS} events one at a time, admin API call → first attempt at the receiver (includes the admin HTTP round trip).`,
]);
