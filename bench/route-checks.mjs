// The request path's cost of deciding on the routed path (docs/security.md): CPU per request of the ads
// API's retrieve, list and create on this build and on the build it started from, in the same run.
// The "before" is built from BENCH_BEFORE_REF (default: where this branch left main) into a temporary folder.
// Run: npm run build && node bench/route-checks.mjs
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AD_GROUP_BODY, cpuMs, load, report, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = 50;

const ref = process.env.BENCH_BEFORE_REF ?? execSync('git merge-base HEAD main', { encoding: 'utf8' }).trim();
const before = mkdtempSync(join(tmpdir(), 'standin-before-'));
execSync(`git archive ${ref} | tar -x -C ${before}`);
symlinkSync(resolve('node_modules'), join(before, 'node_modules'));
execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: before, stdio: 'ignore' });

const builds = { before: join(before, 'dist/main.js'), after: 'dist/main.js' };
const started = {};
for (const [name, main] of Object.entries(builds)) {
  const s = await startStandin({ main });
  const auth = { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' };
  let firstId;
  for (let i = 0; i < 20; i++) {
    const r = await fetch(`${s.url}/ads/v1/ad_groups`, { method: 'POST', headers: auth, body: AD_GROUP_BODY });
    firstId ??= (await r.json()).id;
  }
  started[name] = {
    s,
    targets: {
      'retrieve one ad group': { url: `${s.url}/ads/v1/ad_groups/${firstId}`, headers: auth },
      'list 20 ad groups': { url: `${s.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, headers: auth },
      'create an ad group': { url: `${s.url}/ads/v1/ad_groups`, method: 'POST', headers: auth, body: AD_GROUP_BODY },
    },
  };
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const measured = async (pid, target) => {
  const c0 = cpuMs(pid);
  const r = await load({ ...target, connections, duration: DURATION });
  return { ...r, cpu: ((cpuMs(pid) - c0) * 1000) / r.total };
};
const rows = [];
for (const operation of Object.keys(started.after.targets)) {
  const m = { before: [], after: [] };
  for (const name of Object.keys(builds)) await load({ ...started[name].targets[operation], connections, duration: 1 }); // warm-up
  // Rounds alternate the two builds, so drift on a shared machine hits both alike; medians are reported.
  for (let i = 0; i < ROUNDS; i++)
    for (const name of i % 2 ? ['after', 'before'] : ['before', 'after'])
      m[name].push(await measured(started[name].s.child.pid, started[name].targets[operation]));
  const cpu = (name) => median(m[name].map((r) => r.cpu));
  rows.push({
    operation,
    'CPU µs/request before': Math.round(cpu('before')),
    'CPU µs/request after': Math.round(cpu('after')),
    'after / before': `${Math.round((median(m.after.map((r, i) => r.cpu / m.before[i].cpu)) - 1) * 1000) / 10} %`,
    'req/s before': median(m.before.map((r) => r.rps)),
    'req/s after': median(m.after.map((r) => r.rps)),
    errors: [...m.before, ...m.after].reduce((n, r) => n + r.errors, 0),
  });
}
for (const { s } of Object.values(started)) await s.stop();
rmSync(before, { recursive: true, force: true });
report('route-checks', rows, [
  `before: ${ref.slice(0, 12)}; after: this build. ${ROUNDS} alternating rounds of ${DURATION} s, ${connections} connections, SQLite; medians. CPU is Standin's process (user + system) over the requests it answered.`,
]);
