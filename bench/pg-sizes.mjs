// PostgreSQL connection sizes: the ads retrieve, list and create, and a mixed load, at each pairing of
// pipelined connections (--db-pipelines) and pool connections (--db-pool-size), against a bare Fastify route
// doing one `pg` query per request measured in the same run. Picks the defaults by measurement.
// Run: npm run build && node bench/pg-sizes.mjs   (BENCH_SECONDS, BENCH_PIPELINES, BENCH_POOLS, BENCH_DATABASE_URL)
import pg from 'pg';
import { AD_GROUP_BODY, cpuMs, load, report, startStandin } from './lib.mjs';
import { startBarePg } from './bare-pg.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const PIPELINES = (process.env.BENCH_PIPELINES ?? '1,2,4').split(',').map(Number);
const POOLS = (process.env.BENCH_POOLS ?? '5,10,20').split(',').map(Number);
const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.STANDIN_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const connections = 50;
const body = AD_GROUP_BODY;

const admin = new pg.Client({ connectionString: PG_URL });
await admin.connect();
const rows = [];
const schemas = [];
const inSchema = async (name) => {
  await admin.query(`create schema ${name}`);
  schemas.push(name);
  const u = new URL(PG_URL);
  u.searchParams.set('options', `-c search_path=${name}`);
  return u.toString();
};

try {
  // The baseline: one query per request, its own schema with the same rows.
  const bareUrl = await inSchema(`bench_sizes_bare_${process.pid}`);
  const seeded = await startStandin({ env: { STANDIN_DATABASE_URL: bareUrl } });
  const auth = { authorization: `Bearer ${seeded.keys.ads}`, 'content-type': 'application/json' };
  const first = await (await fetch(`${seeded.url}/ads/v1/ad_groups`, { method: 'POST', headers: auth, body })).json();
  await seeded.stop();
  const row = (await admin.query(`select * from bench_sizes_bare_${process.pid}.ad_groups where id = $1`, [first.id])).rows[0];
  const bare = await startBarePg(bareUrl, row);
  const measure = async (pid, target) => {
    await load({ ...target, connections, duration: 1 }); // warm-up
    const c0 = cpuMs(pid);
    const r = await load({ ...target, connections, duration: DURATION });
    return { ...r, cpu: Math.round(((cpuMs(pid) - c0) * 1000) / r.total) };
  };
  const b = await measure(bare.child.pid, { url: `${bare.url}/one/${first.id}` });
  rows.push({
    setup: 'bare pg route, retrieve (pool 10)',
    retrieve: `${b.rps} / ${b.p99}`,
    list: '-',
    create: '-',
    'mixed retrieve + create': '-',
    'CPU µs retrieve': b.cpu,
  });
  await bare.stop();

  for (const pipelines of PIPELINES) {
    for (const pool of POOLS) {
      const url = await inSchema(`bench_sizes_${pipelines}_${pool}_${process.pid}`);
      const s = await startStandin({
        args: ['--db-pipelines', String(pipelines), '--db-pool-size', String(pool)],
        env: { STANDIN_DATABASE_URL: url },
      });
      const h = { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' };
      let id;
      for (let i = 0; i < 20; i++)
        id ??= (await (await fetch(`${s.url}/ads/v1/ad_groups`, { method: 'POST', headers: h, body })).json()).id;
      const r = await measure(s.child.pid, { url: `${s.url}/ads/v1/ad_groups/${id}`, headers: h });
      const l = await measure(s.child.pid, { url: `${s.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, headers: h });
      const c = await measure(s.child.pid, { url: `${s.url}/ads/v1/ad_groups`, method: 'POST', headers: h, body });
      // Mixed: retrieves while creates commit, so the reads go to PostgreSQL (nothing stays remembered).
      const [mr, mc] = await Promise.all([
        load({ url: `${s.url}/ads/v1/ad_groups/${id}`, headers: h, connections: connections / 2, duration: DURATION }),
        load({ url: `${s.url}/ads/v1/ad_groups`, method: 'POST', headers: h, body, connections: connections / 2, duration: DURATION }),
      ]);
      rows.push({
        setup: `pipelines ${pipelines}, pool ${pool}`,
        retrieve: `${r.rps} / ${r.p99}`,
        list: `${l.rps} / ${l.p99}`,
        create: `${c.rps} / ${c.p99}`,
        'mixed retrieve + create': `${mr.rps} + ${mc.rps} / ${Math.max(mr.p99, mc.p99)}`,
        'CPU µs retrieve': r.cpu,
      });
      await s.stop();
    }
  }
  report('pg-sizes', rows, [
    `req/s / p99 ms; autocannon, ${connections} connections, ${DURATION} s each after 1 s of warm-up, one Standin on PostgreSQL per pairing (fresh schema, 20 ad groups). The retrieve reads the same ad group (remembered while the database holds still); create writes all along; mixed runs retrieves and creates at once (25 connections each), so the reads go to PostgreSQL.`,
  ]);
} finally {
  for (const name of schemas) await admin.query(`drop schema ${name} cascade`);
  await admin.end();
}
