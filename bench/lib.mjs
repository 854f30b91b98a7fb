// Shared helpers of the benchmarks: start processes, run autocannon, print a table, write JSON.
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { secondEntries, serverBundle, serverSplitting } from '../scripts/bundle-options.mjs';

/** The body the benchmarks create ad groups with (in the seeded demo campaign). */
export const AD_GROUP_BODY = JSON.stringify({
  campaign_id: 'cmp_demo_clicks',
  name: 'Bench ad group',
  status: 'active',
  bidding_config: { billing_event_type: 'click', max_bid_micros: 1000000 },
});

/** Node's own flags for Standin (BENCH_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). */
const nodeArgs = (env) => (env.BENCH_NODE_ARGS ?? process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * What reads a started Standin's output, in a process of its own, as a log collector (journald, a container
 * runtime) would: it passes the start banner on, then reads and drops every line. Reading hundreds of MB
 * of request lines in the bench's own process took CPU from the load generator that shares it.
 */
const DRAIN = `
  let seen = '';
  let passing = true;
  process.stdin.on('data', (d) => {
    if (!passing) return;
    process.stdout.write(d);
    seen += d;
    if (/listening on http/.test(seen) && seen.includes('docs:')) passing = false;
  });
`;

/**
 * Starts `node dist/main.js serve` (or `main`, another build) on a free port with a fresh data folder; resolves with its URL and printed
 * keys. Its output goes to a reader process (DRAIN), or with `output: 'file'` to a file in memory (/dev/shm)
 * that nothing reads and that is emptied every second: Standin's own cost of writing, without a reader's.
 */
export function startStandin({
  args = [],
  env = {},
  data = mkdtempSync(join(tmpdir(), 'standin-bench-')),
  output = 'reader',
  main = 'dist/main.js',
  wrap = [],
} = {}) {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    let reader;
    let file;
    let shm;
    let stdout;
    if (output === 'file') {
      shm = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/standin-bench-') : undefined;
      file = join(shm ?? data, 'stdout.log');
      stdout = openSync(file, 'a');
    } else {
      reader = spawn(process.execPath, ['-e', DRAIN], { stdio: ['pipe', 'pipe', 'inherit'] });
      stdout = reader.stdin;
    }
    // `wrap`: a command Node runs under (valgrind and its options), its pid the process's own.
    const [command, ...wrapArgs] = [...wrap, process.execPath];
    const child = spawn(command, [...wrapArgs, ...nodeArgs(env), main, 'serve', '--port', '0', '--data', data, ...args], {
      env: { ...process.env, STANDIN_LOG_LEVEL: 'error', ...env },
      stdio: ['ignore', stdout, 'inherit'],
    });
    // The child holds its own copy: the reader sees the end of its input when Standin exits.
    if (reader) reader.stdin.destroy();
    else closeSync(stdout);
    let out = '';
    const started = (text) => {
      out = text;
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (!m || !out.includes('docs:')) return false;
      const keys = {
        // The banner's line is 'admin key (control plane http://…/admin/v1): <key>': the URL has colons of its
        // own, so the key is what follows the closing '): ', not the first colon. A key set with
        // --admin-key is not printed (undefined: the caller passed it).
        admin: /admin key \(control plane [^\s"]+\): ([^\s"]+)/.exec(out)?.[1],
        platform: /platform API key[^:]*:\s*([^\s"]+)/.exec(out)?.[1],
        ads: /ads API key[^:]*:\s*([^\s"]+)/.exec(out)?.[1],
      };
      // Appended to (O_APPEND), the file is emptied under the writer without a gap.
      const emptying = file && setInterval(() => truncateSync(file, 0), 1000);
      const stopAll = async () => {
        clearInterval(emptying);
        await stop(child);
        if (shm) rmSync(shm, { recursive: true, force: true });
      };
      resolve({ child, url: m[1], keys, data, startedMs: performance.now() - t0, stop: stopAll });
      return true;
    };
    if (reader) {
      const onData = (d) => {
        if (started(out + d)) {
          reader.stdout.off('data', onData);
          reader.stdout.resume();
        }
      };
      reader.stdout.on('data', onData);
    } else {
      const poll = setInterval(() => started(readFileSync(file, 'utf8')) && clearInterval(poll), 10);
      child.on('exit', () => clearInterval(poll));
    }
    child.on('exit', (code) => reject(new Error(`standin exited with ${code}: ${out}`)));
  });
}

/**
 * Starts bare Fastify JSON routes (the baseline) in their own process: GET /<name> and GET /<name>/:id answer
 * `bodies[name]`, POST /<name> answers it merged with the parsed request body.
 */
export function startBaseline(bodies = { item: { id: 'baseline', name: 'Trail running shoes', status: 'active' } }, args = [], wrap = []) {
  const code = `
    const fastify = require('fastify')({ logger: false });
    const bodies = ${JSON.stringify(bodies)};
    for (const [name, body] of Object.entries(bodies)) {
      fastify.get('/' + name, async () => body);
      fastify.get('/' + name + '/:id', async () => body);
      fastify.post('/' + name, async (req) => ({ ...body, ...req.body }));
    }
    // An exit of its own on SIGTERM, so a profiled baseline (--cpu-prof) writes its profile.
    process.on('SIGTERM', () => process.exit(0));
    fastify.listen({ port: 0, host: '127.0.0.1' }).then((a) => console.log('LISTEN ' + a));
  `;
  return new Promise((resolve, reject) => {
    const [command, ...wrapArgs] = [...wrap, process.execPath];
    const child = spawn(command, [...wrapArgs, ...args, '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => {
      const m = /LISTEN (\S+)/.exec(String(d));
      if (m) resolve({ child, url: m[1], stop: () => stop(child) });
    });
    child.on('exit', (c) => reject(new Error(`baseline exited with ${c}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Runs autocannon for a fixed time; returns requests/s, latency percentiles (ms) and error counts. */
export async function load({ url, method = 'GET', headers = {}, body, connections = 50, duration = 5, requests }) {
  const result = await autocannon({ url, method, headers, body, connections, duration, requests });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    total: result.requests.total,
  };
}

/** Prints a Markdown table and writes bench/results/<name>.json. */
export function report(name, rows, notes = []) {
  const cols = Object.keys(rows[0]);
  const line = (cells) => `| ${cells.join(' | ')} |`;
  console.log(`\n### ${name}\n`);
  console.log(line(cols));
  console.log(line(cols.map(() => '---')));
  for (const r of rows) console.log(line(cols.map((c) => String(r[c]))));
  for (const n of notes) console.log(`\n${n}`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${name}.json`, JSON.stringify({ name, at: new Date().toISOString(), rows, notes }, null, 2));
}

/** CPU time (user + system) a process has used, ms — steadier than wall time on a shared machine. */
export const cpuMs = (pid) => statMs(pid, 11);

/** CPU ms of each process on the machine that `pick(pid)` accepts, by pid (one that ends meanwhile is left out). */
export function cpuOf(pick) {
  const out = new Map();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (pick(p)) out.set(p, cpuMs(p));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/**
 * CPU ms of the server's child processes (its ingestion processes; the search worker is a thread), by pid: found in each of
 * its threads' `children` (a few files), not by reading every process's stat on the machine, which the
 * bench does every 20 ms while ingesting, on the cores it measures. A kernel without those files
 * (CONFIG_PROC_CHILDREN) gets the scan.
 */
export function childrenCpu(pid) {
  if (!existsSync(`/proc/${pid}/task/${pid}/children`))
    return cpuOf((p) => Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === pid);
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    for (const p of children.split(' ').filter(Boolean)) {
      try {
        out.set(p, cpuMs(p));
      } catch {
        // ended meanwhile
      }
    }
  }
  return out;
}

/** CPU ms of every PostgreSQL process on the machine (the server's backends among them; the bench's own are idle). */
export const postgresCpu = () =>
  [...cpuOf((p) => readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'postgres').values()].reduce((a, b) => a + b, 0);

/** CPU ms of a process's children that have ended (and been waited for): an ingestion process replaced mid-run. */
export const endedChildrenCpuMs = (pid) => statMs(pid, 13);

/** Two clock-tick fields of /proc/<pid>/stat from `first` (after the command's name), summed, in ms. */
function statMs(pid, first) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[first]) + Number(fields[first + 1])) * 1000) / 100;
}

/**
 * `post` for a started Standin (`startStandin`): a JSON body sent with its platform key, the answer's JSON
 * back, any status but 200 thrown; and the headers it sends.
 */
export function platformPost(standin) {
  const headers = { authorization: `Bearer ${standin.keys.platform}`, 'content-type': 'application/json' };
  const post = async (path, body) => {
    const res = await fetch(`${standin.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const json = await res.json();
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  return { headers, post };
}

/**
 * A Standin for a bench of the platform API: started with `adminKey`, stopped (and `onStop` run) on an
 * uncaught error, given `config` through the control plane (rate limits raised, models…), with `post`:
 * a JSON body sent with the platform key, the answer's JSON back, any status but 200 thrown.
 */
export async function apiBench({ adminKey, config, onStop = async () => {} }) {
  const standin = await startStandin({ env: { STANDIN_ADMIN_KEY: adminKey } });
  process.on('uncaughtException', async (err) => {
    console.error(err);
    await standin.stop();
    await onStop();
    process.exit(1);
  });
  const { headers, post } = platformPost(standin);
  const cfg = await fetch(`${standin.url}/admin/v1/config`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(config),
  });
  if (cfg.status !== 200) throw new Error(`could not configure: ${cfg.status} ${await cfg.text()}`);
  return { standin, headers, post };
}

/**
 * A Standin's ads targets (bench/short.mjs, bench/ads-instructions.mjs): 20 ad groups created in the demo
 * campaign (so the list answers a full page), then the retrieve of the first, the list of 20 and the create;
 * with the bodies the retrieve and the list answer, for the bare route to answer the same.
 */
export async function seedAdsTargets(s) {
  const headers = { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' };
  let id;
  for (let i = 0; i < 20; i++)
    id ??= (await (await fetch(`${s.url}/ads/v1/ad_groups`, { method: 'POST', headers, body: AD_GROUP_BODY })).json()).id;
  const targets = {
    retrieve: { url: `${s.url}/ads/v1/ad_groups/${id}`, headers },
    list: { url: `${s.url}/ads/v1/ad_groups?campaign_id=cmp_demo_clicks&limit=20`, headers },
    create: { url: `${s.url}/ads/v1/ad_groups`, method: 'POST', headers, body: AD_GROUP_BODY },
  };
  const one = await (await fetch(targets.retrieve.url, { headers })).json();
  const page = await (await fetch(targets.list.url, { headers })).json();
  return { targets, bodies: { one, page } };
}

/**
 * The bare route's ads targets (bench/ads-ab.mjs, bench/short.mjs, bench/ads-instructions.mjs), given
 * Standin's: the same request (its headers, its query string, an id in its path) to a route answering the
 * same body, so the HTTP parser, the headers and the query's parse are the baseline's work as well, and
 * what Standin costs above it is its own.
 */
export const bareAdsTargets = (baseUrl, targets) => {
  const same = (target, path) => ({ ...target, url: `${baseUrl}${path}${new URL(target.url).search}` });
  return {
    retrieve: same(targets.retrieve, `/one/${new URL(targets.retrieve.url).pathname.split('/').pop()}`),
    list: same(targets.list, '/page'),
    create: same(targets.create, '/one'),
  };
};

/**
 * Reads an event stream to its end (or its `data: [DONE]`), timed from `t0`: ms to the first read whose
 * text so far `isFirst` accepts (by default the first), ms to the end, and the text.
 */
export async function readTimedStream(res, t0, isFirst = () => true) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let first = null;
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (first === null && isFirst(text)) first = performance.now() - t0;
    if (text.includes('data: [DONE]')) break;
  }
  return { first, ms: performance.now() - t0, text };
}

/**
 * Runs on the built-in model (bench/short.mjs, bench/runs-ab.mjs), on a started Standin whose admin key is
 * `adminKey` (its organization lifted to the top rate-limit tier): `polled(i)` creates a thread and run and
 * reads the run until it ends; `streamed(i)` creates them streamed and reads the stream to its end. Each
 * answers its time in ms, the first streamed event's, and whether the run completed.
 */
export async function builtinRuns(s, adminKey) {
  const headers = { authorization: `Bearer ${s.keys.platform}`, 'content-type': 'application/json' };
  await fetch(`${s.url}/admin/v1/config`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ rate_limits: { organizations: { org_demo: { tier: 'tier_5' } } } }),
  });
  const post = (path, body) => fetch(`${s.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const assistant = await (await post('/v1/assistants', { model: 'bench-echo' })).json();
  const body = (i, stream) => ({ assistant_id: assistant.id, stream, thread: { messages: [{ role: 'user', content: `question ${i}` }] } });
  const polled = async (i) => {
    const t0 = performance.now();
    const run = await (await post('/v1/threads/runs', body(i, false))).json();
    for (;;) {
      const r = await (await fetch(`${s.url}/v1/threads/${run.thread_id}/runs/${run.id}`, { headers })).json();
      if (!['queued', 'in_progress'].includes(r.status)) return { ms: performance.now() - t0, first: null, ok: r.status === 'completed' };
    }
  };
  const streamed = async (i) => {
    const t0 = performance.now();
    const { first, ms, text } = await readTimedStream(await post('/v1/threads/runs', body(i, true)), t0);
    return { ms, first, ok: text.includes('event: thread.run.completed') };
  };
  return { polled, streamed };
}

/** One round of load on `target`: req/s, CPU µs a request of the process `pid`, and the errors. */
export async function cpuPerRequest(pid, target, { connections, duration }) {
  const c0 = cpuMs(pid);
  const r = await load({ ...target, connections, duration });
  return { rps: r.rps, cpu: ((cpuMs(pid) - c0) * 1000) / r.total, errors: r.errors };
}

/**
 * Text nobody here wrote, for the ingestion benches: the Debian changelogs of the packages installed,
 * concatenated and cut at a line end into `count` texts of about `bytes` each. Where they are too few (a
 * machine with only what `.ci/run` installs has about 24 MB of them), the packages' upstream changelogs
 * follow: the texts the Debian ones make alone stay the same.
 */
export function changelogTexts(count = 32, bytes = 512 * 1024) {
  const docs = '/usr/share/doc';
  const parts = [];
  let total = 0;
  const packages = readdirSync(docs).sort();
  for (const name of ['changelog.Debian.gz', 'changelog.gz']) {
    for (const pkg of packages) {
      const file = join(docs, pkg, name);
      if (total > count * bytes * 1.1 || !existsSync(file)) continue;
      parts.push(new TextDecoder().decode(gunzipSync(readFileSync(file))));
      total += parts.at(-1).length;
    }
  }
  const all = parts.join('\n');
  const texts = [];
  for (let at = 0; texts.length < count && at < all.length;) {
    let end = all.indexOf('\n', at + bytes);
    if (end < 0) end = all.length;
    texts.push(all.slice(at, end + 1));
    at = end + 1;
  }
  if (texts.length < count) throw new Error(`only ${texts.length} texts of changelogs found in ${docs}`);
  return texts;
}

// Deterministic prose: 8,000 made-up words drawn with a skew (a few common, most rare), 100 a chunk.
const SYL = 'ka ro mi te su na lo pe ri da vo ne ti sa mu le ko ba zi fe'.split(' ');
const VOCAB = Array.from({ length: 8000 }, (_, i) => {
  let w = '';
  for (let x = i + 1; x > 0; x = Math.floor(x / SYL.length)) w += SYL[x % SYL.length];
  return w + SYL[(i * 7) % SYL.length];
});
/** A deterministic random number generator (xorshift32) from `seed`: numbers in [0, 1). */
export function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/** How often an `eventLoopRecorder` writes its worst delay (ms): each record covers that long before it. */
export const RECORD_MS = 100;

/**
 * A preload (`node --import <it> …`) that records the server thread's worst event-loop delay every
 * RECORD_MS, with the time, into the file named by BENCH_ELD_FILE (workers inherit the preload: only the main
 * thread counts). Written into `dir`; returns its path. Read with `worstStall`.
 */
export function eventLoopRecorder(dir) {
  const file = join(dir, 'eld.mjs');
  writeFileSync(
    file,
    `import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createWriteStream } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
const h = isMainThread && monitorEventLoopDelay({ resolution: 5 });
if (h) h.enable();
// Written by a stream (on libuv's threads), not appendFileSync: a write to a disk busy with writeback (a saved
// index just written, PostgreSQL's WAL) can hold the thread being measured, a stall of the recorder's own.
const out = h && createWriteStream(process.env.BENCH_ELD_FILE, { flags: 'a' });
if (h) setInterval(() => { out.write(Date.now() + ' ' + (h.max / 1e6).toFixed(1) + '\\n'); h.reset(); }, ${RECORD_MS}).unref();
`,
  );
  return file;
}

/** The worst stall (ms) an `eventLoopRecorder` log holds between two wall-clock times (the last interval's record after `to` included). */
export const worstStall = (log, from, to) =>
  readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' ').map(Number))
    .filter(([t]) => t >= from && t <= to + 2 * RECORD_MS)
    .reduce((m, [, d]) => Math.max(m, d), 0);

/** Chunk `i` of the retrieval benches' store: 100 of the made-up words. */
export const madeUpChunk = (i) => {
  const r = rng(i * 2654435761 + 1);
  return Array.from({ length: 100 }, () => VOCAB[Math.floor(VOCAB.length * r() ** 2.5)]).join(' ');
};

/**
 * A commit's server for a bench to run beside this tree's dist/ (its main.js), built from the commit's
 * src/ into node_modules/.cache/`bench`/`commit` (where its packages resolve) as scripts/build.mjs builds
 * dist/: the ingestion process and the search worker as entries of their own beside the server, those of
 * them the commit has. Without them there, the server bundled each with esbuild when it first started it
 * (src/vector-stores/entry-script.ts) and kept esbuild's service running as its child, which the ingestion
 * benches counted among the ingestion processes.
 */
export async function buildCommit(commit, bench) {
  const { build } = await import('esbuild');
  const root = join('node_modules/.cache', bench, commit);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${commit} src | tar -x -C ${root}`]);
  const entryPoints = Object.fromEntries(
    Object.entries({ main: 'src/main.ts', ...secondEntries })
      .filter(([, source]) => existsSync(join(root, source)))
      .map(([name, source]) => [name, join(root, source)]),
  );
  await build({ entryPoints, outdir: root, ...serverBundle, ...serverSplitting, logLevel: 'error' });
  return join(root, 'main.js');
}

/** Copies the files a tree's build writes beside its bundle (the ranks, the classes), those it has, into `folder`. */
export function copyBuilt(tree, folder) {
  for (const file of ['o200k.bin', 'classes.bin']) {
    rmSync(join(folder, file), { force: true });
    if (existsSync(join(tree, 'dist', file))) copyFileSync(join(tree, 'dist', file), join(folder, file));
  }
}

/**
 * The module a bench makes of another source tree's files: `exports(src)` (src: a path of the tree's src/
 * as a JSON string) written as an entry in `folder`, bundled there with `build` (esbuild; packages stay
 * external, so the folder must be where they resolve: a node_modules/.cache) and imported, with the files
 * the tree's build writes beside its bundle (`copyBuilt`), as an ingestion process has them.
 */
export async function importTree(build, tree, folder, exports) {
  mkdirSync(folder, { recursive: true });
  copyBuilt(tree, folder);
  const entry = join(folder, 'entry.ts');
  writeFileSync(entry, exports((p) => JSON.stringify(join(tree, 'src', p))).join('\n'));
  const outfile = join(folder, 'bundle.mjs');
  await build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'error' });
  return import(outfile);
}
