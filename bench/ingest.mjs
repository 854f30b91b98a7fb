// Ingestion off the main thread: the same files and bombs against the code before (ingestion on the
// server's thread: commit BENCH_INGEST_BASELINE, bundled here from git) and now (dist/, ingestion
// processes). Measures ingestion MB/s of ordinary text, and the latency (p50/p99) of GET /v1/models at
// rest and while hostile files are being ingested (goal: p99 under 50 ms).
// Run: npm run build && node bench/ingest.mjs   (SQLite; needs git and the repository's history)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { buildCommit, report } from './lib.mjs';

const BASELINE = process.env.BENCH_INGEST_BASELINE ?? '123e708';
const WINDOW_MS = Number(process.env.BENCH_INGEST_WINDOW_MS ?? 4000);
const ADMIN = 'sk-admin-bench-ingest-key-000000000000';
const KEY = 'sk-proj-bench-ingest-key-0000000000000';

const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function start(script) {
  const data = mkdtempSync(join(tmpdir(), 'standin-bench-ingest-'));
  const child = spawn(process.execPath, [script, 'serve', '--port', '0', '--data', data, '--admin-key', ADMIN], {
    env: { ...process.env, STANDIN_LOG_LEVEL: 'fatal' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) resolve({ child, url: m[1], data });
    });
    child.on('exit', (code) => reject(new Error(`standin exited with ${code}: ${out}`)));
  });
}

// Ordinary prose (about 140 tokens a paragraph).
function prose(paragraphs, seed) {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  const out = [];
  for (let i = 0; i < paragraphs; i++)
    out.push(
      `Entry ${seed}-${i}: the survey counted ${next() % 9000} items over ${next() % 90} days; ledger ${next() % 500} keeps the notes of the season.`,
    );
  return out.join('\n\n');
}

// Hostile files of issue 25, as test/hostile/bombs.ts makes them (a long word, deep HTML, deep JSON).
const BOMBS = [
  ['word.txt', 'a'.repeat(150_000)],
  ['deep.html', `${'<div>'.repeat(500_000)}deep${'</div>'.repeat(500_000)}`],
  ['deep.json', `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`],
];

async function measure(name, script) {
  const s = await start(script);
  const api = async (path, body, key = KEY) => {
    const res = await fetch(`${s.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        ...(body instanceof FormData || body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const upload = async (filename, text) => {
    const form = new FormData();
    form.append('purpose', 'assistants');
    form.append('file', new Blob([text]), filename);
    return (await api('/v1/files', form)).id;
  };
  /** GET /v1/models one after another for the window: each latency (a request stuck 10 s counts as 10 s). */
  const latencies = async () => {
    const out = [];
    const end = performance.now() + WINDOW_MS;
    while (performance.now() < end) {
      const t = performance.now();
      await fetch(`${s.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` }, signal: AbortSignal.timeout(10_000) })
        .then((r) => r.arrayBuffer())
        .catch(() => {});
      out.push(performance.now() - t);
      await sleep(10);
    }
    return out;
  };
  await api('/admin/v1/projects/proj_demo/api_keys', { name: 'bench', value: KEY }, ADMIN);

  // A small file first, so both measure warm ingestion (the tokenizer loaded; the processes started).
  const warm = await api('/v1/vector_stores', { name: 'warm', file_ids: [await upload('warm.txt', prose(10, 99))] });
  while ((await api(`/v1/vector_stores/${warm.id}`)).status === 'in_progress') await sleep(20);

  // 1. Ordinary text: 8 files, about 5 MB, auto chunking, the built-in embedder.
  const texts = Array.from({ length: 8 }, (_, i) => prose(5000, i + 1));
  const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
  const ids = [];
  for (const [i, t] of texts.entries()) ids.push(await upload(`doc${i}.txt`, t));
  const t0 = performance.now();
  let vs = await api('/v1/vector_stores', { name: 'ingest', file_ids: ids });
  while (vs.status === 'in_progress') {
    await sleep(20);
    vs = await api(`/v1/vector_stores/${vs.id}`);
  }
  const seconds = (performance.now() - t0) / 1000;

  // 2. Latency at rest, then while the bombs are ingested.
  const idle = await latencies();
  const bombIds = [];
  for (const [filename, text] of BOMBS) bombIds.push(await upload(filename, text));
  await api('/v1/vector_stores', { name: 'bombs', file_ids: bombIds });
  await sleep(100);
  const busy = await latencies();
  s.child.kill('SIGKILL');
  rmSync(s.data, { recursive: true, force: true });
  return {
    name,
    mbps: round(bytes / 1e6 / seconds, 2),
    files: `${vs.file_counts.completed}/${ids.length} in ${round(seconds)} s`,
    idle: `p50 ${round(pct(idle, 50))} ms, p99 ${round(pct(idle, 99))} ms (${idle.length} requests)`,
    busy: `p50 ${round(pct(busy, 50))} ms, p99 ${round(pct(busy, 99))} ms, max ${round(Math.max(...busy))} ms (${busy.length} requests)`,
    p99: pct(busy, 99),
  };
}

/**
 * The work alone, without HTTP or the store: the same files extracted, chunked and embedded in this process
 * one after another (what the server's thread did before), and by two ingestion processes (now).
 */
async function work() {
  const lib = join('node_modules/.cache/standin-bench-ingest/work.mjs');
  await build({
    stdin: {
      contents: [
        "export { prepareFile } from './src/vector-stores/prepare.ts';",
        "export { createIngestPool } from './src/vector-stores/ingest-pool.ts';",
        "export { DEFAULT_LIMITS } from './src/vector-stores/limits.ts';",
        "export { AUTO_CHUNKING } from './src/vector-stores/chunk.ts';",
      ].join('\n'),
      resolveDir: '.',
      loader: 'ts',
    },
    outfile: lib,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  const { prepareFile, createIngestPool, DEFAULT_LIMITS, AUTO_CHUNKING } = await import(`../${lib}`);
  const files = Array.from({ length: 8 }, (_, i) => Buffer.from(prose(5000, i + 1)));
  const mb = files.reduce((n, f) => n + f.length, 0) / 1e6;
  const req = (data) => ({ filename: 'doc.txt', data, chunking: AUTO_CHUNKING, embed: true });
  await prepareFile({ ...req(Buffer.from('warm')), limits: DEFAULT_LIMITS });
  let t = performance.now();
  for (const f of files) await prepareFile({ ...req(f), limits: DEFAULT_LIMITS });
  const inProcess = mb / ((performance.now() - t) / 1000);
  const pool = createIngestPool({ processes: 2, limits: DEFAULT_LIMITS });
  await Promise.all([pool.run(req(Buffer.from('warm'))), pool.run(req(Buffer.from('warm')))]);
  t = performance.now();
  await Promise.all(files.map((f) => pool.run(req(f))));
  const processes = mb / ((performance.now() - t) / 1000);
  await pool.close();
  return { inProcess: round(inProcess, 2), processes: round(processes, 2) };
}

const alone = await work();
const before = await measure(`before (${BASELINE}, ingestion on the server thread)`, await buildCommit(BASELINE, 'standin-bench-ingest'));
const after = await measure('now (ingestion processes)', 'dist/main.js');
report(
  'ingest',
  [
    {
      measure: 'extract, chunk and embed ~5 MB of text (8 files), no HTTP or store, MB/s',
      before: `${alone.inProcess} (in this process, one after another)`,
      now: `${alone.processes} (2 ingestion processes)`,
      goal: 'no slower',
    },
    {
      measure: 'ingest ~5 MB of text (8 files, auto chunking), MB/s',
      before: `${before.mbps} (${before.files})`,
      now: `${after.mbps} (${after.files})`,
      goal: 'no slower',
    },
    { measure: 'GET /v1/models at rest', before: before.idle, now: after.idle, goal: '' },
    {
      measure: 'GET /v1/models while a 150 KB word, 500k nested divs and 1M nested brackets are ingested',
      before: before.busy,
      now: after.busy,
      goal: `p99 < 50 ms: ${after.p99 < 50 ? 'met' : 'not met'}`,
    },
  ],
  [
    `Window ${WINDOW_MS} ms per latency measure, one request at a time; a request stuck 10 s is cut off and counts as 10 s.`,
    'Ingestion processes run ten steps of nice below the server: on a machine busy with other work they get less CPU than the server thread did.',
  ],
);
