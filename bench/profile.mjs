// Where a request's time goes: each hot path profiled in one Standin process (node --cpu-prof), every sample
// put to a stage by the innermost frame on its stack whose source (read through the bundle's source maps)
// names one: auth, rate limit, validation, the handler, the store, serialization, the request log,
// metrics, hooks, the framework (Fastify, its router) and Node (http, net, streams). Samples of builtins
// (JSON.stringify, RegExp) count for their caller. CPU per request per stage is the stage's time over the
// requests the profile spans; the share is of the process's busy time (idle left out).
// Run: npm run build && node bench/profile.mjs   (BENCH_PROFILE_SECONDS=4, BENCH_PROFILE_OPS=retrieve,list,create,runs)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AD_GROUP_BODY, load, report, startBaseline, startStandin } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 4);
const OPS = (process.env.BENCH_PROFILE_OPS ?? 'retrieve,list,create,runs').split(',');
const connections = 50;

/** The stage of a source file (a path as the source map names it, or a node: URL). */
export function stageOf(source, functionName) {
  if (/^validate\d*$/.test(functionName)) return 'validation'; // ajv's compiled validators
  if (!source) return undefined;
  if (source.startsWith('node:')) return 'node (http, net, streams)';
  const s = source.replace(/\\/g, '/');
  const in_ = (...parts) => parts.some((p) => s.includes(p));
  if (in_('src/admin/request-log', 'src/admin/redact', 'src/core/redact')) return 'request log';
  if (in_('src/metrics/', 'prom-client')) return 'metrics';
  if (in_('src/ratelimit/')) return 'rate limit';
  if (in_('src/core/auth', 'src/core/secrets', 'src/identity/', 'src/ads/accounts', 'src/core/route-path')) return 'auth';
  if (in_('src/core/validation', '/ajv/', 'ajv-formats', 'src/core/json-body', 'secure-json-parse')) return 'validation';
  if (in_('fast-json-stringify', 'lib/reply.js') && /serializ|stringify/i.test(functionName)) return 'serialization';
  if (in_('/store.ts', 'src/store/', '/kysely/', 'better-sqlite3', 'src/core/changes', '/tables.ts', 'src/core/ids')) return 'store';
  if (in_('src/server/', 'src/core/reply-headers', 'src/core/body-timeout', 'src/core/health', 'lib/hooks.js')) return 'hooks';
  if (in_('src/assistants/', 'src/models/', 'src/core/sse', 'src/core/jobs', 'src/core/events', 'src/webhooks/'))
    return 'handler (runs, model, jobs)';
  if (in_('src/ads/', 'src/core/pagination', 'src/core/errors')) return 'handler';
  if (in_('/fastify/', 'find-my-way', 'light-my-request', '/avvio/', 'pino', 'sonic-boom', '@fastify/', 'fast-querystring'))
    return 'framework (Fastify)';
  if (in_('src/')) return 'other Standin';
  return 'other dependencies';
}

/** From a .cpuprofile: µs per stage (busy samples only, from the first sample in a request on) and µs busy. */
export function stagesOf(file, fromUs = 0) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const maps = new Map();
  const sourceMapOf = (url) => {
    if (!maps.has(url)) {
      let map = null;
      try {
        const path = fileURLToPath(url);
        map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
        map.dir = path;
      } catch {
        map = null;
      }
      maps.set(url, map);
    }
    return maps.get(url);
  };
  const frameStage = new Map();
  const stageOfNode = (n) => {
    if (frameStage.has(n.id)) return frameStage.get(n.id);
    const { url, lineNumber, columnNumber, functionName } = n.callFrame;
    let source = url;
    if (url.startsWith('file:')) {
      const map = sourceMapOf(url);
      const entry = map?.findEntry(lineNumber, columnNumber);
      source = entry?.originalSource ?? url;
    }
    const stage =
      n.callFrame.functionName === '(garbage collector)' ? 'GC' : url ? stageOf(source, functionName) : stageOf('', functionName);
    frameStage.set(n.id, stage);
    n.source = source;
    return stage;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map(profile.nodes.flatMap((n) => (n.children ?? []).map((c) => [c, n])));
  const memo = new Map();
  const sampleStage = (id) => {
    if (memo.has(id)) return memo.get(id);
    let stage;
    const leaf = byId.get(id).callFrame.functionName;
    if (leaf === '(idle)') stage = null;
    else if (leaf === '(garbage collector)') stage = 'GC';
    else if (leaf === '(program)') stage = '(program: V8, native)';
    else
      for (let n = byId.get(id); n && !stage; n = parent.get(n.id)) {
        stage = stageOfNode(n);
      }
    stage ??= '(program: V8, native)';
    memo.set(id, stage);
    return stage;
  };
  const stages = {};
  // Inclusive time by Standin source file and function (BENCH_PROFILE_TOP): where to look next.
  const inclusive = {};
  let busy = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i];
    at += dt;
    // Samples before the measured load (start, setup, warm-up): both clocks are the system's monotonic one.
    if (at < fromUs) return;
    const stage = sampleStage(id);
    if (!stage) return;
    busy += dt;
    stages[stage] = (stages[stage] ?? 0) + dt;
    if (!process.env.BENCH_PROFILE_TOP) return;
    const seen = new Set();
    for (let n = byId.get(id); n; n = parent.get(n.id)) {
      stageOfNode(n);
      const key = `${n.callFrame.functionName || '(anonymous)'} ${(n.source ?? '').replace(/^.*?(src|node_modules)\//, '$1/')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive[key] = (inclusive[key] ?? 0) + dt;
    }
  });
  return { stages, busy, inclusive };
}

/** The ads operations of a started Standin (on an ad group it creates, with 20 in the campaign). */
export async function adsOperations(s) {
  const headers = { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' };
  let id;
  for (let i = 0; i < 20; i++)
    id ??= (await (await fetch(`${s.url}/ads/v1/ad_groups`, { method: 'POST', headers, body: AD_GROUP_BODY })).json()).id;
  return {
    retrieve: { url: `${s.url}/ads/v1/ad_groups/${id}`, headers },
    list: { url: `${s.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, headers },
    create: { url: `${s.url}/ads/v1/ad_groups`, method: 'POST', headers, body: AD_GROUP_BODY },
  };
}

const ADMIN_KEY = 'sk-admin-bench-profile-000000000000000000000';
/** Runs `n` runs create → completed, polling, on the built-in model; the requests it made. */
async function runs(s, n, seconds) {
  const headers = { authorization: `Bearer ${s.keys.platform}`, 'content-type': 'application/json', 'openai-beta': 'assistants=v2' };
  const post = (path, body) => fetch(`${s.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) => r.json());
  s.assistant ??= await setUp();
  const assistant = s.assistant;
  async function setUp() {
    await fetch(`${s.url}/admin/v1/config`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rate_limits: { organizations: { org_demo: { tier: 'tier_5' } } } }),
    });
    return post('/v1/assistants', { model: 'bench-echo', instructions: 'Answer briefly.' });
  }
  let requests = 0;
  const end = performance.now() + seconds * 1000;
  let done = 0;
  while (performance.now() < end || done < n) {
    const run = await post('/v1/threads/runs', {
      assistant_id: assistant.id,
      thread: { messages: [{ role: 'user', content: `question ${done}` }] },
    });
    requests++;
    for (;;) {
      const r = await (await fetch(`${s.url}/v1/threads/${run.thread_id}/runs/${run.id}`, { headers })).json();
      requests++;
      if (!['queued', 'in_progress', 'cancelling'].includes(r.status)) break;
    }
    done++;
  }
  return { requests, runs: done };
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const profiling = (dir) => ['--cpu-prof', `--cpu-prof-interval=${process.env.BENCH_PROFILE_INTERVAL ?? 250}`, `--cpu-prof-dir=${dir}`];

/** Profiles `op` in Standin and, for the ads operations, the bare Fastify route answering the same bodies. */
async function profileOf(op) {
  const dirs = { standin: mkdtempSync(join(tmpdir(), 'standin-profile-')), bare: mkdtempSync(join(tmpdir(), 'standin-profile-')) };
  const s = await startStandin({ env: { STANDIN_ADMIN_KEY: ADMIN_KEY, BENCH_NODE_ARGS: profiling(dirs.standin).join(' ') } });
  const out = {};
  try {
    if (op === 'runs') {
      await runs(s, 20, 1); // warm-up
      const from = nowUs();
      const r = await runs(s, 50, SECONDS);
      await s.stop();
      out.standin = { ...stagesOf(join(dirs.standin, readdirSync(dirs.standin)[0]), from), requests: r.runs, per: r.requests / r.runs };
      return out;
    }
    const targets = await adsOperations(s);
    const auth = targets.retrieve.headers;
    const one = await (await fetch(targets.retrieve.url, { headers: auth })).json();
    const page = await (await fetch(targets.list.url, { headers: auth })).json();
    const b = await startBaseline({ one, page }, profiling(dirs.bare));
    const bare = {
      retrieve: { url: `${b.url}/one` },
      list: { url: `${b.url}/page` },
      create: { url: `${b.url}/one`, method: 'POST', headers: { 'content-type': 'application/json' }, body: AD_GROUP_BODY },
    };
    for (const [name, target, stop] of [
      ['standin', targets[op], () => s.stop()],
      ['bare', bare[op], () => b.stop()],
    ]) {
      await load({ ...target, connections, duration: 1 }); // warm-up
      const from = nowUs();
      const r = await load({ ...target, connections, duration: SECONDS });
      await stop();
      out[name] = { ...stagesOf(join(dirs[name], readdirSync(dirs[name])[0]), from), requests: r.total };
    }
    return out;
  } finally {
    await s.stop();
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rows = [];
  for (const op of OPS) {
    const p = await profileOf(op);
    const unit = op === 'runs' ? `run (${p.standin.per.toFixed(1)} requests)` : 'request';
    const us = (x, stage) => (x ? (x.stages[stage] ?? 0) / x.requests : 0);
    const stages = Object.keys({ ...p.standin.stages, ...(p.bare?.stages ?? {}) }).sort((a, b) => us(p.standin, b) - us(p.standin, a));
    console.log(
      `\n${op}: busy ${(p.standin.busy / p.standin.requests).toFixed(1)} µs/${unit}${p.bare ? `, bare route ${(p.bare.busy / p.bare.requests).toFixed(1)} µs` : ''} (profiled)`,
    );
    for (const stage of stages) {
      const share = (us(p.standin, stage) / (p.standin.busy / p.standin.requests)) * 100;
      console.log(
        `  ${stage.padEnd(30)} ${us(p.standin, stage).toFixed(1).padStart(8)} µs ${share.toFixed(1).padStart(5)} %${p.bare ? `   bare ${us(p.bare, stage).toFixed(1).padStart(7)} µs` : ''}`,
      );
      rows.push({
        operation: op,
        stage,
        'µs/request': us(p.standin, stage).toFixed(1),
        share: `${share.toFixed(1)} %`,
        'bare µs/request': p.bare ? us(p.bare, stage).toFixed(1) : '-',
      });
    }
    if (process.env.BENCH_PROFILE_TOP)
      for (const [key, t] of Object.entries(p.standin.inclusive)
        .sort((a, b) => b[1] - a[1])
        .slice(0, Number(process.env.BENCH_PROFILE_TOP)))
        console.log(`  ${(t / p.standin.requests).toFixed(1).padStart(9)} µs  ${key}`);
  }
  report('profile', rows, [
    `node --cpu-prof (every ${process.env.BENCH_PROFILE_INTERVAL ?? 250} µs), ${SECONDS} s of each ads operation at ${connections} connections after a 1 s warm-up, in Standin and in a bare Fastify route answering the same bodies; runs one at a time, polled, after a warm-up; SQLite. The profiler adds its own cost: shares hold, µs are above an unprofiled run's.`,
  ]);
}
