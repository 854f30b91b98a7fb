// A/B of two builds on the ads API's request path, with the bare Fastify route, in one run: rounds alternate
// the bare route, build A and build B, so the machine's drift falls on all three alike; CPU µs a request is
// each process's own (/proc), medians of the rounds.
// Run: npm run build && node bench/ads-ab.mjs <old build's dist/main.js> [dist/main.js …]   (BENCH_SECONDS=2, BENCH_ROUNDS=5)
// Builds are named A, B, C… in the order given.
import { AD_GROUP_BODY, bareAdsTargets, cpuPerRequest, load, report, startBaseline, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const OPS = (process.env.BENCH_OPS ?? 'retrieve,list,create').split(',');
const mains = process.argv.length > 2 ? process.argv.slice(2) : ['dist/main.js', 'dist/main.js'];
const builds = Object.fromEntries(mains.map((main, i) => [String.fromCharCode(65 + i), main]));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const instances = {};
for (const [name, main] of Object.entries(builds)) {
  const s = await startStandin({ main });
  const headers = { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' };
  let id;
  for (let i = 0; i < 20; i++)
    id ??= (await (await fetch(`${s.url}/ads/v1/ad_groups`, { method: 'POST', headers, body: AD_GROUP_BODY })).json()).id;
  instances[name] = {
    s,
    targets: {
      retrieve: { url: `${s.url}/ads/v1/ad_groups/${id}`, headers },
      list: { url: `${s.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, headers },
      create: { url: `${s.url}/ads/v1/ad_groups`, method: 'POST', headers, body: AD_GROUP_BODY },
    },
  };
}
const A = instances.A;
const one = await (await fetch(A.targets.retrieve.url, { headers: A.targets.retrieve.headers })).json();
const page = await (await fetch(A.targets.list.url, { headers: A.targets.list.headers })).json();
const b = await startBaseline({ one, page });
const bare = bareAdsTargets(b.url, A.targets);
const measured = (pid, target) => cpuPerRequest(pid, target, { connections, duration: DURATION });
const rows = [];
try {
  for (const op of OPS) {
    const all = { bare: { pid: b.child.pid, target: bare[op] } };
    for (const [name, i] of Object.entries(instances)) all[name] = { pid: i.s.child.pid, target: i.targets[op] };
    for (const x of Object.values(all)) await load({ ...x.target, connections, duration: 0.5 });
    const m = Object.fromEntries(Object.keys(all).map((k) => [k, []]));
    // Each round starts one further along the list: whatever a measure leaves running (a collection after its
    // load) falls on the next one, and a fixed order made the second build measure 10–20 % worse than the
    // first, the same build in both places (load average 1.5).
    const entries = Object.entries(all);
    for (let r = 0; r < ROUNDS; r++)
      for (let j = 0; j < entries.length; j++) {
        const [k, x] = entries[(r + j) % entries.length];
        m[k].push(await measured(x.pid, x.target));
      }
    const row = { operation: op, 'bare CPU µs': Math.round(median(m.bare.map((r) => r.cpu))) };
    for (const k of Object.keys(instances)) {
      row[`${k} CPU µs`] = Math.round(median(m[k].map((r) => r.cpu)));
      row[`${k} / bare`] = (Math.round(median(m[k].map((r, i) => r.cpu / m.bare[i].cpu)) * 100) / 100).toFixed(2);
      row[`${k} share of bare req/s`] = `${Math.round(median(m[k].map((r, i) => r.rps / m.bare[i].rps)) * 100)} %`;
      row[`${k} errors`] = m[k].reduce((n, r) => n + r.errors, 0);
    }
    rows.push(row);
  }
} finally {
  await b.stop();
  for (const i of Object.values(instances)) await i.s.stop();
}
const named = Object.entries(builds)
  .map(([k, main]) => `${k}: ${main}`)
  .join(', ');
report('ads-ab', rows, [
  `${named}. autocannon, ${connections} connections; ${ROUNDS} rounds of ${DURATION} s of the bare route and each build, each round starting one further along; medians (ratios: median of the rounds' ratios).`,
]);
