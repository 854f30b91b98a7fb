// The deployment of docs/deploy.md under load: retrieve one ad group through nginx in front of two
// instances (PostgreSQL + Redis), against one instance answered directly and one instance behind nginx,
// all in the same run, on the same schema. Needs nginx and PostgreSQL (STANDIN_BENCH_DATABASE_URL, else
// STANDIN_TEST_DATABASE_URL); skipped with a note when either is missing.
// Run: npm run build && node bench/deploy.mjs
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AD_GROUP_BODY, load, report, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = 50;
const base = process.env.STANDIN_BENCH_DATABASE_URL ?? process.env.STANDIN_TEST_DATABASE_URL;
const nginx = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p));
if (!base || !nginx) {
  console.log(
    `bench/deploy skipped: ${!nginx ? 'nginx is not installed (apt-get install -y nginx)' : 'no PostgreSQL (STANDIN_BENCH_DATABASE_URL)'}`,
  );
  process.exit(0);
}

const freePort = () =>
  new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

// A schema of its own in the database.
const schema = `standin_bench_deploy_${process.pid}`;
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
const url = new URL(base);
url.searchParams.set('options', `-c search_path=${schema}`);
const env = {
  STANDIN_DATABASE_URL: url.toString(),
  ...(process.env.STANDIN_TEST_REDIS_URL ? { STANDIN_REDIS_URL: process.env.STANDIN_TEST_REDIS_URL } : {}),
};

// One after the other: the first migrates and seeds (and prints the keys).
const a = await startStandin({ env });
const b = await startStandin({ env });
const auth = { authorization: `Bearer ${a.keys.ads}`, 'content-type': 'application/json' };
const created = await fetch(`${a.url}/ads/v1/ad_groups`, {
  method: 'POST',
  headers: auth,
  body: AD_GROUP_BODY,
});
const { id } = await created.json();

/** nginx with the recipe's configuration (examples/deploy/nginx.conf), its ports replaced. */
async function startNginx(upstreamPorts) {
  const port = await freePort();
  const prefix = mkdtempSync(join(tmpdir(), 'standin-nginx-'));
  chmodSync(prefix, 0o755);
  mkdirSync(join(prefix, 'tmp'), { mode: 0o777 });
  chmodSync(join(prefix, 'tmp'), 0o777);
  const conf = readFileSync('examples/deploy/nginx.conf', 'utf8')
    // In the foreground here, so the bench holds it as its child.
    .replace(/^pid nginx\.pid;$/m, 'pid nginx.pid;\ndaemon off;')
    .replace(/^( *)server 127\.0\.0\.1:8081( [^;]*)?;\n\1server 127\.0\.0\.1:8082( [^;]*)?;\n/m, (_, indent, opts = '') =>
      upstreamPorts.map((p) => `${indent}server 127.0.0.1:${p}${opts};\n`).join(''),
    )
    .replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`)
    // Plain HTTP is measured: no TLS listeners (nor their certificate), no widget listener.
    .replace(/^ *listen 127\.0\.0\.1:\d+ ssl;\n/gm, '')
    .replace(/^ *ssl_[a-z_]+ .*\n/gm, '')
    .replace(/^ {2}upstream standin_widgets \{[\s\S]*?^ {2}\}\n/m, '')
    .replace(/^ {2}server \{\n(?: *listen 127\.0\.0\.1:8090;\n)[\s\S]*?^ {2}\}\n/m, '')
    // The mTLS pass-through is not measured here (two balancers at once would share its ports).
    .replace(/^load_module .*\n/m, '')
    .replace(/^stream \{[\s\S]*?^\}\n/m, '');
  for (const gone of ['ssl', 'standin_widgets', ':8081', ':8082', ':8080'])
    if (conf.includes(gone)) throw new Error(`bench/deploy: examples/deploy/nginx.conf changed (${gone} left): update startNginx`);
  writeFileSync(join(prefix, 'nginx.conf'), conf);
  const args = ['-p', `${prefix}/`, '-c', join(prefix, 'nginx.conf'), '-e', join(prefix, 'error.log')];
  execFileSync(nginx, [...args, '-t'], { stdio: 'pipe' });
  const child = spawn(nginx, args, { stdio: 'ignore' });
  for (;;) {
    const up = await new Promise((r) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), r(true)));
      s.once('error', () => r(false));
    });
    if (up) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => (rmSync(prefix, { recursive: true, force: true }), resolve()));
        child.kill('SIGQUIT');
      }),
  };
}

const portOf = (u) => Number(new URL(u).port);
const both = await startNginx([portOf(a.url), portOf(b.url)]);
const single = await startNginx([portOf(a.url)]);

const targets = [
  ['one instance, direct', a.url],
  ['one instance behind nginx', single.url],
  ['two instances behind nginx', both.url],
];
const results = new Map(targets.map(([name]) => [name, []]));
for (const [, u] of targets) await load({ url: `${u}/ads/v1/ad_groups/${id}`, headers: auth, connections, duration: 1 }); // warm-up
// Rounds alternate the three, so drift on a shared machine hits all alike; medians are reported.
for (let i = 0; i < ROUNDS; i++)
  for (const [name, u] of targets)
    results.get(name).push(await load({ url: `${u}/ads/v1/ad_groups/${id}`, headers: auth, connections, duration: DURATION }));

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const direct = median(results.get('one instance, direct').map((r) => r.rps));
const rows = targets.map(([name]) => {
  const rs = results.get(name);
  return {
    'retrieve one ad group (PostgreSQL)': name,
    'req/s': median(rs.map((r) => r.rps)),
    'vs one instance direct': `${Math.round((median(rs.map((r) => r.rps)) / direct) * 100)} %`,
    'p50 ms': median(rs.map((r) => r.p50)),
    'p99 ms': median(rs.map((r) => r.p99)),
    errors: rs.reduce((n, r) => n + r.errors, 0),
  };
});

await both.stop();
await single.stop();
await b.stop();
await a.stop();
await admin.query(`DROP SCHEMA ${schema} CASCADE`);
await admin.end();

report('deploy', rows, [
  `autocannon, ${connections} connections; ${ROUNDS} rounds of ${DURATION} s, alternating the three targets; medians. nginx 1 worker with the recipe's configuration (examples/deploy/nginx.conf: keepalive upstream, no buffering). Every process shares this machine's cores: on 2 cores, two instances, nginx, PostgreSQL and autocannon compete, so the two-instance row shows nginx's cost and the balance, not the scale-out a second machine gives.`,
]);
