// Ingestion throughput through the real server: the same text files uploaded (POST /v1/files), attached
// as one file batch (POST /v1/vector_stores/{id}/file_batches, auto chunking, built-in embedder), timed
// from the batch's creation to all files completed; the old build (commit BENCH_INGEST_BASELINE, bundled
// here from git) and now (dist/), alternating, in one run. Meanwhile each server records its worst
// event-loop delay every 100 ms (bench/lib.mjs eventLoopRecorder, preloaded): the longest stall of its thread
// during ingestion. BENCH_INGEST_PROBE=http instead asks GET /v1/models one request at a time, 5 ms apart,
// as the bench did before stop 59 (its worst latency bounds the stall; the probe and its answers cost 10–20
// ms of CPU per MB on the cores being measured). Also the bare cost of reading and writing the same bytes.
// The text: Debian changelogs of the packages installed here (/usr/share/doc/*/changelog*.gz), text
// nobody here wrote, cut into files of BENCH_INGEST_FILE_KB (512) KB, BENCH_INGEST_FILES (32) of them.
// Run: npm run build && node bench/ingest-throughput.mjs   (SQLite unless told; needs git and the repository's history)
// BENCH_INGEST_BASELINE_SCRIPT=/path/main.js compares with a built tree instead; BENCH_INGEST_SCRIPT replaces dist/main.js;
// BENCH_INGEST_ROUNDS (2) rounds alternate; BENCH_INGEST_DATABASE_URL=postgres://… runs each server on PostgreSQL
// (a schema of its own, dropped after) instead of SQLite. The server's CPU is given less its cost of the bench's requests
// (the status reads, and the probe's requests with BENCH_INGEST_PROBE=http, each costed after the batch with nothing
// being ingested).
// The text a store holds after the batch (chunk rows and files' texts, UTF-8 bytes per byte ingested) is read with SQL.
// The uploads before the batch (one at a time) are timed too, with the server's CPU per MB uploaded (and PostgreSQL's).
// BENCH_INGEST_REPEAT (1) uploads the files that many times over (the machine's changelogs make about 24 MB: three
// files of 8 MB at most), so a batch of many large files can be measured; a process that is kept meets text it has seen.
// BENCH_INGEST_POLL=http: the batch's end found by asking its status over HTTP every 20 ms, as before stop 60;
// otherwise by reading its files' statuses from the server's store (no request to the server): every 25 ms until nine
// tenths of the files have ended, then every 5 ms.
// BENCH_INGEST_WARM_FILES (0) more files of the changelogs, other text than the batch's, are ingested first (not timed)
// instead of the two small warm-up files: the batch then meets processes past their start (their code compiled, their
// caches of words and pre-tokens filled), as a long ingestion's processes are, with text still new to them.
// BENCH_INGEST_STATIC=100,0: static chunks (max_chunk_size_tokens, chunk_overlap_tokens) instead of auto, as
// issue 38 grew its stores (100 tokens a chunk and none shared: four times auto's chunks per MB, each a row).
// Also how many of the machine's cores the batch kept busy (all the CPU measured, over the batch's time): below
// their number, something waited rather than worked (stop 61: the processes waiting for their next file).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  buildCommit,
  changelogTexts,
  childrenCpu,
  cpuMs,
  endedChildrenCpuMs,
  eventLoopRecorder,
  postgresCpu,
  report,
  worstStall,
} from './lib.mjs';

const BASELINE = process.env.BENCH_INGEST_BASELINE ?? 'f48ba84';
const FILES = Number(process.env.BENCH_INGEST_FILES ?? 32);
const FILE_BYTES = Number(process.env.BENCH_INGEST_FILE_KB ?? 512) * 1024;
const ROUNDS = Number(process.env.BENCH_INGEST_ROUNDS ?? 2);
const ADMIN = 'sk-admin-bench-ingest-key-000000000000';
const KEY = 'sk-proj-bench-ingest-key-0000000000000';

const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The files: Debian changelogs, concatenated and cut at a line end into FILES texts of about FILE_BYTES. */
const REPEAT = Number(process.env.BENCH_INGEST_REPEAT ?? 1);
const WARM_FILES = Number(process.env.BENCH_INGEST_WARM_FILES ?? 0);
/** The batch's files, and the warm-up's (other text, before them in the changelogs). */
function corpus() {
  const all = changelogTexts(WARM_FILES + FILES, FILE_BYTES);
  return { warm: all.slice(0, WARM_FILES), texts: Array.from({ length: REPEAT }, () => all.slice(WARM_FILES)).flat() };
}

const DATABASE_URL = process.env.BENCH_INGEST_DATABASE_URL;
let servers = 0;

/** With BENCH_INGEST_DATABASE_URL: a new schema for a server, its URL, and its drop. */
async function pgSchema() {
  const schema = `bench_ingest_${process.pid}_${servers++}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    args: ['--database-url', url.href],
    url: url.href,
    drop: () => admin.query(`DROP SCHEMA ${schema} CASCADE`).finally(() => admin.end()),
  };
}

/**
 * A connection of the bench's own to a server's store: a PostgreSQL client, or SQLite read-only. `row`
 * runs a query with `$1`-style parameters (`@p1` to SQLite) and gives its first row.
 */
async function storeConnection(s) {
  if (s.databaseUrl) {
    const client = new pg.Client({ connectionString: s.databaseUrl });
    await client.connect();
    return { postgres: true, row: async (sql, params) => (await client.query(sql, params)).rows[0], close: () => client.end() };
  }
  const db = new Database(join(s.data, 'standin.db'), { readonly: true });
  const statements = new Map();
  const prepared = (sql) => statements.get(sql) ?? statements.set(sql, db.prepare(sql.replace(/\$(\d+)/g, '@p$1'))).get(sql);
  const named = (params) => Object.fromEntries(params.map((v, i) => [`p${i + 1}`, v]));
  return { postgres: false, row: async (sql, params) => prepared(sql).get(named(params)), close: async () => db.close() };
}

/**
 * The bytes of text a store holds (UTF-8): its chunks' rows and its files' texts. Chunks stored as runs of
 * their text's parts hold none of their own; rows written before, or by an older build, hold theirs.
 */
async function storedText(store, storeId) {
  const length = store.postgres ? 'octet_length(text)' : 'length(CAST(text AS BLOB))';
  const { chunks, texts } = await store.row(
    `SELECT (SELECT COALESCE(SUM(${length}), 0) FROM vector_store_chunks WHERE vector_store_id = $1) AS chunks,` +
      ` (SELECT COALESCE(SUM(${length}), 0) FROM vector_store_texts WHERE vector_store_id = $1) AS texts`,
    [storeId],
  );
  return { chunks: Number(chunks), texts: Number(texts) };
}

/**
 * How many of a store's files are no longer in progress: the end of a batch read from the store, without
 * asking the server, whose requests (a status read every 20 ms) cost it and the bench 7–8 ms of CPU per MB
 * on the cores being measured.
 */
const filesEnded = async (store, storeId) =>
  Number(
    (await store.row(`SELECT COUNT(*) AS n FROM vector_store_files WHERE vector_store_id = $1 AND status <> 'in_progress'`, [storeId])).n,
  );

const HTTP_PROBE = process.env.BENCH_INGEST_PROBE === 'http';
const HTTP_POLL = process.env.BENCH_INGEST_POLL === 'http';
const [size, shared = 0] = process.env.BENCH_INGEST_STATIC?.split(',').map(Number) ?? [];
/** The batches' chunking: auto, or BENCH_INGEST_STATIC's. */
const CHUNKING = size
  ? { chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: size, chunk_overlap_tokens: shared } } }
  : {};
const CHUNKING_NAME = size ? `static chunks of ${size} tokens, ${shared} shared` : 'auto chunking';
const logs = mkdtempSync(join(tmpdir(), 'standin-bench-ingest-eld-'));
const recorder = eventLoopRecorder(logs);
let started = 0;

async function start(script) {
  const data = mkdtempSync(join(tmpdir(), 'standin-bench-ingest-'));
  const eld = join(logs, `server-${started++}.log`);
  writeFileSync(eld, '');
  const store = DATABASE_URL ? await pgSchema() : { args: [], drop: async () => {} };
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_INGEST_NODE_ARGS?.split(' ') ?? []),
      '--import',
      pathToFileURL(recorder).href,
      script,
      'serve',
      '--port',
      '0',
      '--data',
      data,
      '--admin-key',
      ADMIN,
      ...store.args,
    ],
    {
      env: { ...process.env, STANDIN_LOG_LEVEL: 'fatal', BENCH_ELD_FILE: eld },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) resolve({ child, url: m[1], data, eld, drop: store.drop, ...(store.url && { databaseUrl: store.url }) });
    });
    child.on('exit', (code) => reject(new Error(`standin exited with ${code}: ${out}`)));
  });
}

async function measure(script, { warm: warmTexts, texts }) {
  const s = await start(script);
  /** The bench's reads of the server's store (storeConnection), open from the batch on. */
  let store;
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
  try {
    await api('/admin/v1/projects/proj_demo/api_keys', { name: 'bench', value: KEY }, ADMIN);
    // Small files first, one per ingestion process (2 by default), so both measure warm ingestion (every
    // process started, its tokenizer loaded): a process's start is paid once, not per MB. They go through the
    // routes measured below (a file batch, its status): a route's first request compiles its schemas
    // (core/validation.ts, 30–50 ms for the batch's), a cost of the route's first use, not of ingestion.
    const warmIds = warmTexts.length
      ? await Promise.all(warmTexts.map((t, i) => upload(`warm${i}.txt`, t)))
      : [await upload('warm0.txt', texts[0].slice(0, 20_000)), await upload('warm1.txt', texts[1].slice(0, 20_000))];
    const warm = await api('/v1/vector_stores', { name: 'warm' });
    const warmBatch = await api(`/v1/vector_stores/${warm.id}/file_batches`, { file_ids: warmIds, ...CHUNKING });
    while ((await api(`/v1/vector_stores/${warm.id}/file_batches/${warmBatch.id}`)).status === 'in_progress') await sleep(20);

    const ids = [];
    // The batch's files uploaded one at a time, as a loop over the SDK's files.create does: its time a file.
    const uploads0 = performance.now();
    const uploadServer0 = cpuMs(s.child.pid);
    const uploadPostgres0 = DATABASE_URL ? postgresCpu() : 0;
    for (const [i, t] of texts.entries()) ids.push(await upload(`changelog${i}.txt`, t));
    const uploadMs = (performance.now() - uploads0) / texts.length;
    // The uploads' CPU per MB: the server's (its requests' parsing, the bytes stored) and PostgreSQL's.
    const uploadedMb = texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / 1e6;
    const uploadServerMsPerMb = (cpuMs(s.child.pid) - uploadServer0) / uploadedMb;
    const uploadPostgresMsPerMb = DATABASE_URL ? (postgresCpu() - uploadPostgres0) / uploadedMb : 0;
    const vs = await api('/v1/vector_stores', { name: 'ingest' });
    let done = false;
    // Requests the bench makes meanwhile (status reads, probes): their cost is taken off the server's CPU.
    let requests = 0;
    // With BENCH_INGEST_PROBE=http, the probe: one GET /v1/models at a time while the batch is ingested.
    const latencies = [];
    const probe = (async () => {
      while (HTTP_PROBE && !done) {
        const t = performance.now();
        await fetch(`${s.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } }).then((r) => r.arrayBuffer());
        latencies.push(performance.now() - t);
        requests++;
        await sleep(5);
      }
    })();
    store = await storeConnection(s);
    const server0 = cpuMs(s.child.pid);
    const children0 = childrenCpu(s.child.pid);
    const ended0 = endedChildrenCpuMs(s.child.pid);
    const postgres0 = DATABASE_URL ? postgresCpu() : 0;
    const t0 = performance.now();
    const wall0 = Date.now();
    const bench0 = process.cpuUsage();
    let batch = await api(`/v1/vector_stores/${vs.id}/file_batches`, { file_ids: ids, ...CHUNKING });
    // The batch's request: its files are attached and their jobs queued in one transaction, before any is ingested.
    const createMs = performance.now() - t0;
    // The ingestion processes seen while ingesting: one started meanwhile replaced one (or the pool grew).
    const seen = new Set(children0.keys());
    // The store is read every 25 ms until nine tenths of the files have ended, then every 5 ms: the end is
    // found within 5 ms, for a quarter of the reads (each cost the bench and PostgreSQL about 0.35 ms of CPU).
    for (
      let polls = 0, ended = 0;
      HTTP_POLL ? batch.status === 'in_progress' : (ended = await filesEnded(store, vs.id)) < ids.length;
      polls++
    ) {
      await sleep(HTTP_POLL ? 20 : ended < 0.9 * ids.length ? 25 : 5);
      if (HTTP_POLL || polls % 4 === 0) for (const p of childrenCpu(s.child.pid).keys()) seen.add(p);
      if (!HTTP_POLL) continue;
      batch = await api(`/v1/vector_stores/${vs.id}/file_batches/${batch.id}`);
      requests++;
    }
    const seconds = (performance.now() - t0) / 1000;
    if (!HTTP_POLL) batch = await api(`/v1/vector_stores/${vs.id}/file_batches/${batch.id}`);
    const benchCpu = process.cpuUsage(bench0);
    const ingesting = requests;
    const serverCpu = cpuMs(s.child.pid) - server0;
    const children1 = childrenCpu(s.child.pid);
    const postgresMs = DATABASE_URL ? postgresCpu() - postgres0 : 0;
    // The processes running now, less what they had used before; and those that ended meanwhile (replaced
    // after a file that left them above half their memory limit), less what they had used before.
    const ended = endedChildrenCpuMs(s.child.pid) - ended0 - [...children0].reduce((n, [p, ms]) => n + (children1.has(p) ? 0 : ms), 0);
    const childCpu = ended + [...children1].reduce((n, [p, ms]) => n + ms - (children0.get(p) ?? 0), 0);
    // What one of the bench's requests costs the server, with nothing being ingested: the same polling
    // for a while, less what the server spends as long with no request at all (its timers; before stop
    // 60 that was counted as the requests', and taken off the server's figure with them); that times the
    // requests made while ingesting is taken off the server's figure.
    const quiet0 = cpuMs(s.child.pid);
    await sleep(1500);
    const quietPerMs = (cpuMs(s.child.pid) - quiet0) / 1500;
    const idle0 = cpuMs(s.child.pid);
    const requests0 = requests;
    const c0 = performance.now();
    while (performance.now() - c0 < 3000) {
      await sleep(20);
      await api(`/v1/vector_stores/${vs.id}/file_batches/${batch.id}`);
      requests++;
    }
    const perRequest = Math.max(0, cpuMs(s.child.pid) - idle0 - quietPerMs * (performance.now() - c0)) / (requests - requests0);
    done = true;
    await probe;
    if (batch.file_counts.completed !== ids.length) {
      const failed = await api(`/v1/vector_stores/${vs.id}/file_batches/${batch.id}/files?filter=failed&limit=5`);
      throw new Error(`batch ended ${JSON.stringify(batch.file_counts)}: ${JSON.stringify(failed.data.map((f) => f.last_error))}`);
    }
    const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
    const mb = bytes / 1e6;
    const stored = await storedText(store, vs.id);
    const serverMsPerMb = Math.max(0, serverCpu - perRequest * ingesting) / mb;
    const run = {
      processesBefore: children0.size,
      processesAfter: children1.size,
      processesStarted: [...seen].filter((p) => !children0.has(p)).length,
      mbps: mb / seconds,
      createMs: Math.round(createMs),
      uploadMs,
      uploadServerMsPerMb,
      uploadPostgresMsPerMb,
      seconds,
      worst: HTTP_PROBE ? Math.max(...latencies) : worstStall(s.eld, wall0, wall0 + seconds * 1000),
      serverMsPerMb,
      rawServerMsPerMb: serverCpu / mb,
      childMsPerMb: childCpu / mb,
      benchMsPerMb: (benchCpu.user + benchCpu.system) / 1000 / mb,
      postgresMsPerMb: postgresMs / mb,
      chunkTextPerMb: stored.chunks / bytes,
      textPerMb: stored.texts / bytes,
    };
    console.error(
      `${script}: ${JSON.stringify(Object.fromEntries(Object.entries(run).map(([k, v]) => [k, round(v)])))} load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
    );
    return run;
  } finally {
    await store?.close();
    if (process.env.BENCH_INGEST_NODE_ARGS) {
      s.child.kill('SIGTERM');
      await new Promise((r) => s.child.once('exit', r));
    }
    s.child.kill('SIGKILL');
    await new Promise((r) => (s.child.exitCode === null ? s.child.once('exit', r) : r()));
    await s.drop();
    rmSync(s.data, { recursive: true, force: true });
  }
}

/** Reading and writing the same bytes, file by file: the floor any ingestion stands on. */
function bare(texts) {
  const dir = mkdtempSync(join(tmpdir(), 'standin-bench-bare-'));
  texts.forEach((t, i) => writeFileSync(join(dir, `in${i}`), t));
  const t0 = performance.now();
  let bytes = 0;
  texts.forEach((_, i) => {
    const b = readFileSync(join(dir, `in${i}`));
    writeFileSync(join(dir, `out${i}`), b);
    bytes += b.length;
  });
  const mbps = bytes / 1e6 / ((performance.now() - t0) / 1000);
  rmSync(dir, { recursive: true, force: true });
  return mbps;
}

const { warm, texts } = corpus();
const mb = texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / 1e6;
const baseline = process.env.BENCH_INGEST_ONLY_NOW
  ? ''
  : (process.env.BENCH_INGEST_BASELINE_SCRIPT ?? (await buildCommit(BASELINE, 'standin-bench-ingest')));
const now = process.env.BENCH_INGEST_SCRIPT ?? 'dist/main.js';
const runs = { before: [], now: [] };
// The order swapped every round: a run leaves work behind it (PostgreSQL's checkpoint, vacuum and the
// dropped schema; the page cache's writes) that lands on the run after it.
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 ? ['now', 'before'] : ['before', 'now'];
  for (const which of order) {
    if (which === 'before' && baseline) runs.before.push(await measure(baseline, { warm, texts }));
    if (which === 'now') runs.now.push(await measure(now, { warm, texts }));
  }
}
const best = (xs) => xs.reduce((a, b) => (b.mbps > a.mbps ? b : a), { mbps: 0, serverMsPerMb: 0, childMsPerMb: 0 });
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : 0;
};
const storedShown = (xs) => (xs.length ? `${round(xs[0].chunkTextPerMb, 2)} + ${round(xs[0].textPerMb, 2)}` : '');
const show = (xs) => `${round(best(xs).mbps, 2)} (runs: ${xs.map((x) => round(x.mbps, 2)).join(', ')})`;
/** CPU ms per MB of everything measured (the server's with the bench's requests: CPU spent all the same), times MB per second. */
const uploadCpu = (xs) =>
  [xs.map((x) => x.uploadServerMsPerMb), ...(DATABASE_URL ? [xs.map((x) => x.uploadPostgresMsPerMb)] : [])]
    .map((ys) => round(median(ys)))
    .join(' + ');
const coresBusy = (x) => ((x.rawServerMsPerMb + x.childMsPerMb + x.postgresMsPerMb + x.benchMsPerMb) * x.mbps) / 1000;
const cpu = (xs) =>
  [xs.map((x) => x.serverMsPerMb), xs.map((x) => x.childMsPerMb), ...(DATABASE_URL ? [xs.map((x) => x.postgresMsPerMb)] : [])]
    .map((figures) => round(median(figures)))
    .join(' + ');
report(
  'ingest-throughput',
  [
    { measure: 'read and write the same bytes, MB/s', before: '', now: round(bare(texts)), goal: '' },
    {
      measure: `ingest ${round(mb)} MB of text (${texts.length} files, one batch, ${CHUNKING_NAME}), MB/s`,
      before: show(runs.before),
      now: show(runs.now),
      goal: `≥ 20: ${best(runs.now).mbps >= 20 ? 'met' : 'not met'}`,
    },
    {
      measure: `CPU ms per MB: server process (less the bench’s requests) + ingestion processes${DATABASE_URL ? ' + PostgreSQL’s processes' : ''}, median of runs`,
      before: cpu(runs.before),
      now: cpu(runs.now),
      goal: '≤ 100 in all (20 MB/s on 2 cores)',
    },
    {
      // What the batch kept busy of the machine: below its cores, something waited rather than worked.
      measure: `cores busy during the batch (the server, the ingestion processes${DATABASE_URL ? ', PostgreSQL’s' : ''} and the bench), of ${availableParallelism()}, median of runs`,
      before: runs.before.length ? round(median(runs.before.map(coresBusy)), 2) : '',
      now: round(median(runs.now.map(coresBusy)), 2),
      goal: '',
    },
    {
      measure: `CPU ms per MB of the bench itself (${HTTP_POLL ? 'its status reads' : 'its reads of the store'}${HTTP_PROBE ? ' and probe' : ''}), on the same cores, median of runs`,
      before: runs.before.length ? round(median(runs.before.map((x) => x.benchMsPerMb))) : '',
      now: round(median(runs.now.map((x) => x.benchMsPerMb))),
      goal: '',
    },
    {
      measure: 'text stored per byte of text: chunk rows + files’ texts (UTF-8 bytes, SQL)',
      before: storedShown(runs.before),
      now: storedShown(runs.now),
      goal: '',
    },
    {
      measure: 'an upload of one of the batch’s files (POST /v1/files, one at a time), ms, median of runs',
      before: runs.before.length ? round(median(runs.before.map((x) => x.uploadMs)), 2) : '',
      now: round(median(runs.now.map((x) => x.uploadMs)), 2),
      goal: '',
    },
    {
      measure: `CPU ms per MB uploaded: the server${DATABASE_URL ? ' + PostgreSQL’s processes' : ''}, median of runs`,
      before: runs.before.length ? uploadCpu(runs.before) : '',
      now: uploadCpu(runs.now),
      goal: '',
    },
    {
      measure: 'the batch’s request (its files attached and their jobs queued, before any is ingested), ms, median of runs',
      before: runs.before.length ? round(median(runs.before.map((x) => x.createMs))) : '',
      now: round(median(runs.now.map((x) => x.createMs))),
      goal: '',
    },
    {
      measure: HTTP_PROBE ? 'worst GET /v1/models latency while ingesting, ms' : 'worst stall of the server’s thread while ingesting, ms',
      before: runs.before.map((x) => round(x.worst)).join(', '),
      now: runs.now.map((x) => round(x.worst)).join(', '),
      goal: `< 50: ${Math.max(...runs.now.map((x) => x.worst)) < 50 ? 'met' : 'not met'}`,
    },
  ],
  [
    `before: ${process.env.BENCH_INGEST_BASELINE_SCRIPT ?? `commit ${BASELINE}`}; now: ${now}. ${ROUNDS} rounds, alternating (the order swapped each round), each on a fresh server (${DATABASE_URL ? 'PostgreSQL, a schema of its own' : 'SQLite'}), ingestion processes at their default count, ${WARM_FILES ? `warmed by ${WARM_FILES} other files of ${FILE_BYTES >> 10} KB first` : 'each warmed by a small file first'}.`,
    HTTP_PROBE
      ? 'The probe asks GET /v1/models one request at a time (5 ms apart): its worst latency bounds the longest stall of the server’s thread.'
      : 'The stall is the server’s own record of its event loop’s worst delay (monitorEventLoopDelay, every 100 ms).',
  ],
);
rmSync(logs, { recursive: true, force: true });
