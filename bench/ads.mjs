// Ads API throughput and latency against a bare Fastify JSON route measured in the same run, and cold start.
// Run: npm run build && node bench/ads.mjs
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { startBarePg } from './bare-pg.mjs';
import { AD_GROUP_BODY, cpuMs, load, report, startBaseline, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = 50;
const body = AD_GROUP_BODY;

const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.STANDIN_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// BENCH_ADS=pg runs only the PostgreSQL table, BENCH_ADS=sqlite only the SQLite one (and cold start).
const PARTS = process.env.BENCH_ADS ?? 'sqlite,pg';

if (PARTS.includes('sqlite')) await sqliteTable();
if (PARTS.includes('pg') && !process.env.BENCH_SKIP_PG) await postgresTable();

async function sqliteTable() {
  const standin = await startStandin();
  const auth = { authorization: `Bearer ${standin.keys.ads}`, 'content-type': 'application/json' };

  // 20 ad groups in the campaign, so "list 20" returns a full page.
  let firstId;
  for (let i = 0; i < 20; i++) {
    const r = await fetch(`${standin.url}/ads/v1/ad_groups`, { method: 'POST', headers: auth, body });
    firstId ??= (await r.json()).id;
  }

  // The baseline serves the very bodies Standin answers with, so the comparison is Standin's work per
  // request (authentication, validation, the store) and not the size of the JSON.
  const one = await (await fetch(`${standin.url}/ads/v1/ad_groups/${firstId}`, { headers: auth })).json();
  const page = await (await fetch(`${standin.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, { headers: auth })).json();
  const baseline = await startBaseline({ one, page });
  const rows = [];
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const measured = async (pid, target, during) => {
    const stop = during?.();
    const c0 = cpuMs(pid);
    const r = await load({ ...target, connections, duration: DURATION });
    const cpu = ((cpuMs(pid) - c0) * 1000) / r.total;
    await stop?.();
    return { ...r, cpu };
  };
  // Rounds alternate baseline and Standin, so drift on a shared machine hits both alike; medians are reported.
  const run = async (what, base, target, during) => {
    await load({ ...target, connections, duration: 1 }); // warm-up
    const b = [];
    const s = [];
    for (let i = 0; i < ROUNDS; i++) {
      b.push(await measured(baseline.child.pid, base));
      s.push(await measured(standin.child.pid, target, during));
    }
    rows.push({
      operation: what,
      'baseline req/s': median(b.map((r) => r.rps)),
      'standin req/s': median(s.map((r) => r.rps)),
      'share of baseline': `${Math.round(median(s.map((r, i) => r.rps / b[i].rps)) * 100)} %`,
      'standin p50 ms': median(s.map((r) => r.p50)),
      'standin p99 ms': median(s.map((r) => r.p99)),
      'CPU µs/request baseline': Math.round(median(b.map((r) => r.cpu))),
      'CPU µs/request standin': Math.round(median(s.map((r) => r.cpu))),
      errors: s.reduce((n, r) => n + r.errors, 0),
    });
  };
  await run('retrieve one ad group', { url: `${baseline.url}/one` }, { url: `${standin.url}/ads/v1/ad_groups/${firstId}`, headers: auth });
  // Reads are remembered until the database changes (docs/core.md). This row has another process commit to
  // the same SQLite file every millisecond (a table of its own), so nearly every read finds the database
  // changed and goes to SQLite; the writes' CPU is that process's, not Standin's.
  const busy = () => {
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `
    const db = new (require('better-sqlite3'))(${JSON.stringify(join(standin.data, 'standin.db'))});
    db.pragma('busy_timeout = 5000');
    db.exec('create table if not exists bench_ticks (n integer)');
    const tick = db.prepare('insert into bench_ticks (n) values (?)');
    let n = 0;
    setInterval(() => tick.run(n++), 1);
  `,
      ],
      { stdio: 'ignore' },
    );
    return () =>
      new Promise((resolve) => {
        writer.once('exit', resolve);
        writer.kill();
      });
  };
  await run(
    'retrieve, another process committing every 1 ms',
    { url: `${baseline.url}/one` },
    { url: `${standin.url}/ads/v1/ad_groups/${firstId}`, headers: auth },
    busy,
  );
  await run(
    'list 20 ad groups',
    { url: `${baseline.url}/page` },
    { url: `${standin.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, headers: auth },
  );
  await run(
    'create an ad group',
    { url: `${baseline.url}/one`, method: 'POST', headers: { 'content-type': 'application/json' }, body },
    { url: `${standin.url}/ads/v1/ad_groups`, method: 'POST', headers: auth, body },
  );
  await standin.stop();
  await baseline.stop();

  // Cold start: process start to the first 200, on a fresh data folder (migrations + seed) and on an existing one.
  const cold = [];
  for (let i = 0; i < 3; i++) {
    const fresh = await timeToFirst200();
    const again = await timeToFirst200(fresh.data);
    cold.push({ run: i + 1, 'fresh data folder ms': fresh.ms, 'existing data folder ms': again.ms });
  }
  report('ads', rows, [
    `autocannon, ${connections} connections; ${ROUNDS} rounds of ${DURATION} s, alternating baseline and Standin; medians (share: median of the rounds' ratios). Baseline: a bare Fastify 5 route in its own process answering the same JSON body (POST: echoes the parsed body merged into it). CPU µs/request: the server process's CPU time over the requests it answered.`,
  ]);
  report('cold-start', cold, ['process start → first 200 on /healthz, SQLite.']);
}

async function timeToFirst200(data) {
  const t0 = performance.now();
  const s = await startStandin(data ? { data } : {});
  for (;;) {
    const r = await fetch(`${s.url}/healthz`).catch(() => null);
    if (r?.status === 200) break;
  }
  const ms = Math.round(performance.now() - t0);
  await s.stop();
  return { ms, data: s.data };
}

/**
 * PostgreSQL: Standin on PostgreSQL against a bare Fastify route doing one `pg` query per request (pool 10,
 * named statements) on the same table, and against Standin on SQLite, rounds alternating the three.
 */
async function postgresTable() {
  const schema = `bench_ads_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const u = new URL(PG_URL);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const url = u.toString();
  try {
    const onPg = await startStandin({ env: { STANDIN_DATABASE_URL: url } });
    const onSqlite = await startStandin();
    const prepared = [];
    for (const s of [onPg, onSqlite]) {
      const auth = { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' };
      let firstId;
      for (let i = 0; i < 20; i++) {
        const r = await fetch(`${s.url}/ads/v1/ad_groups`, { method: 'POST', headers: auth, body });
        firstId ??= (await r.json()).id;
      }
      prepared.push({ s, auth, firstId });
    }
    const [p, q] = prepared;
    const row = (await admin.query(`select * from ${schema}.ad_groups where id = $1`, [p.firstId])).rows[0];
    const bare = await startBarePg(url, row);
    const rows = [];
    const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const measured = async (pid, target) => {
      const c0 = cpuMs(pid);
      const r = await load({ ...target, connections, duration: DURATION });
      return { ...r, cpu: ((cpuMs(pid) - c0) * 1000) / r.total };
    };
    const run = async (what, b, sp, sq) => {
      for (const t of [b, sp, sq]) await load({ ...t, connections, duration: 1 }); // warm-up
      const rb = [];
      const rp = [];
      const rq = [];
      for (let i = 0; i < ROUNDS; i++) {
        rb.push(await measured(bare.child.pid, b));
        rp.push(await measured(p.s.child.pid, sp));
        rq.push(await measured(q.s.child.pid, sq));
      }
      const share = (xs, ys) => `${Math.round(median(xs.map((r, i) => r.rps / ys[i].rps)) * 100)} %`;
      rows.push({
        operation: what,
        'bare pg req/s': median(rb.map((r) => r.rps)),
        'standin PG req/s': median(rp.map((r) => r.rps)),
        'standin SQLite req/s': median(rq.map((r) => r.rps)),
        'PG / bare pg': share(rp, rb),
        'PG / SQLite': share(rp, rq),
        'bare pg p99 ms': median(rb.map((r) => r.p99)),
        'PG p50 ms': median(rp.map((r) => r.p50)),
        'PG p99 ms': median(rp.map((r) => r.p99)),
        'CPU µs/request PG': Math.round(median(rp.map((r) => r.cpu))),
        errors: [...rb, ...rp, ...rq].reduce((n, r) => n + r.errors, 0),
      });
    };
    const list = (s) => `${s.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`;
    await run(
      'retrieve one ad group',
      { url: `${bare.url}/one/${p.firstId}` },
      { url: `${p.s.url}/ads/v1/ad_groups/${p.firstId}`, headers: p.auth },
      { url: `${q.s.url}/ads/v1/ad_groups/${q.firstId}`, headers: q.auth },
    );
    await run('list 20 ad groups', { url: `${bare.url}/page` }, { url: list(p.s), headers: p.auth }, { url: list(q.s), headers: q.auth });
    const post = (s, headers) => ({ url: `${s.url}/ads/v1/ad_groups`, method: 'POST', headers, body });
    await run(
      'create an ad group',
      { url: `${bare.url}/create`, method: 'POST', headers: { 'content-type': 'application/json' }, body },
      post(p.s, p.auth),
      post(q.s, q.auth),
    );
    await onPg.stop();
    await onSqlite.stop();
    await bare.stop();
    report('ads-postgres', rows, [
      `autocannon, ${connections} connections; ${ROUNDS} rounds of ${DURATION} s alternating the bare pg route, Standin on PostgreSQL and Standin on SQLite; medians (shares: median of the rounds' ratios). PostgreSQL on the same machine.`,
      'bare pg: a Fastify 5 route in its own process, one `pg` query per request (pool 10, named prepared statements): the retrieve and list SELECT the stored JSON, the create INSERTs one row.',
    ]);
  } finally {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}
