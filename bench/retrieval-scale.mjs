// Retrieval at team scale (issue 38): one vector store grown to --chunks chunks (default 100,000) in a
// PostgreSQL schema of its own, read by instances of the code before (commit BENCH_RETRIEVAL_BASELINE,
// bundled here from git) and now (dist/), with a bare scan of the same vectors in this process as the floor.
// Reports: the first search (index load), search p50/p99, the time from a file's `completed` on instance B
// to its chunks being found by a search on the reading instance, the worst event-loop stall of each instance
// (monitorEventLoopDelay, preloaded), resident memory, and HTTP ingestion MB/s on B (A searching meanwhile, then A idle).
// --compare exact: the third instance is this build searching exactly (--search-approximate-from 0) instead
// of the commit before (whose whole rebuild per change is impractical at a million chunks).
// --memory-mb: the readers' --search-memory-mb (default 4096, enough for the exact index of a million chunks).
// --scan-queries: queries of the bare scan (default all; each reads every vector in this process).
// --no-ingest: leaves out the HTTP ingestion on B (its MB/s and stalls).
// --fill-threads: threads filling the store (default 2; each embeds and inserts its own files).
// --text runs|rows: how the fill stores a chunk's text. runs (default): as an ingestion does since stop 57,
// the file's text in parts cut at the chunks' edges (vector_store_texts), each chunk's row naming its run
// of two parts (text_from, text_to) and holding no text, so loads and hits join the parts; rows: each
// chunk's row holds its text (as before stop 57, and rows written before it). A reader of a build before
// stop 57 (the default third instance) finds no text in runs: use --compare none or exact with runs.
// --no-saved: leaves out the reader started after the first has saved the store's index (--search-index-dir; the save is awaited all the same),
// whose first search loads that file instead of the rows (its first load, stall and answers, held equal).
// Each stage's figures are printed as it ends and kept in bench/results/retrieval-scale-<N>.partial.json,
// so a run cut short still reports what it reached.
// BENCH_RETRIEVAL_NODE_ARGS: Node options of every instance (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
// Run: npm run build && node bench/retrieval-scale.mjs [--chunks 100000] [--compare exact]
//      (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; the schema is dropped after)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { build } from 'esbuild';
import pg from 'pg';
import { Agent, setGlobalDispatcher } from 'undici';
import { serverBundle } from '../scripts/bundle-options.mjs';
import {
  buildCommit,
  childrenCpu,
  cpuMs,
  endedChildrenCpuMs,
  eventLoopRecorder,
  madeUpChunk as chunkText,
  postgresCpu,
  RECORD_MS,
  report,
  rng,
  worstStall,
} from './lib.mjs';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const N = Number(arg('--chunks') ?? process.env.BENCH_RETRIEVAL_CHUNKS ?? 100_000);
const QUERIES = Number(arg('--queries') ?? 100);
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BASELINE = process.env.BENCH_RETRIEVAL_BASELINE ?? '33be4d3';
const EXACT = arg('--compare') === 'exact';
// --compare none: no third reader (the after reader and the bare scan only).
const NONE = arg('--compare') === 'none';
const SCAN_QUERIES = Number(arg('--scan-queries') ?? QUERIES);
const INGEST = !process.argv.includes('--no-ingest');
const SAVED = !process.argv.includes('--no-saved');
const FILL_THREADS = Math.max(1, Number(arg('--fill-threads') ?? 2));
const TEXT = arg('--text') ?? 'runs';
if (TEXT !== 'runs' && TEXT !== 'rows') throw new Error('--text is runs or rows');
const MEMORY = ['--search-memory-mb', arg('--memory-mb') ?? '4096'];
const ADMIN = 'sk-admin-bench-retrieval-key-0000000000';
const PER_FILE = 100;
const DIM = 256;

const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A store's first search loads it whole: minutes at a million chunks, past fetch's default 300 s for headers.
// A connection idle for 30 s is not reused: a first search waits over a minute after a fill of a minute, and a
// socket idle for the server's keep-alive timeout (72 s) can be closed by it just as the next request goes out.
if (isMainThread) setGlobalDispatcher(new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveMaxTimeout: 30_000 }));
const work = isMainThread ? mkdtempSync(join(tmpdir(), 'standin-bench-retrieval-')) : '';

// Every instance records its worst event-loop delay each 100 ms, with the time, into its own file.
const ELD = isMainThread ? eventLoopRecorder(work) : '';
/** The worst stall an instance recorded between two wall-clock times (ms). */
const stallOf = (inst, from, to) => worstStall(inst.eld, from, to);
/** CPU time of a process's main thread (the server's event loop) alone, ms. */
const mainCpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};
const rssMb = (inst) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${inst.child.pid}/status`, 'utf8'))[1]) / 1024);

/** A store's first search on an instance (its load): wall ms, CPU ms in all and on the main thread, the worst stall. */
async function firstSearch(inst, storeId) {
  const from = Date.now();
  const t = performance.now();
  const cpu = cpuMs(inst.child.pid);
  const main = mainCpuMs(inst.child.pid);
  await api(inst, `/v1/vector_stores/${storeId}/search`, { query: 'warm up' });
  return {
    first: performance.now() - t,
    firstCpuMs: cpuMs(inst.child.pid) - cpu,
    firstMainMs: mainCpuMs(inst.child.pid) - main,
    firstStall: stallOf(inst, from, Date.now()),
  };
}

/** A module of this tree bundled into node_modules/.cache, where its packages resolve. */
async function bundleOf(entry, out) {
  const file = join('node_modules/.cache/standin-bench-retrieval', out);
  await build({ entryPoints: [entry], outfile: file, ...serverBundle, logLevel: 'error' });
  return file;
}

let n = 0;
function start(name, script, databaseUrl, workers, extra = []) {
  const eld = join(work, `eld-${name}.log`);
  writeFileSync(eld, '');
  const nodeArgs = (process.env.BENCH_RETRIEVAL_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = [...nodeArgs, '--import', pathToFileURL(ELD).href, script, 'serve', '--port', '0', '--data', join(work, `data-${n++}`)];
  args.push('--admin-key', ADMIN, '--database-url', databaseUrl, '--workers', String(workers), ...extra);
  const child = spawn(process.execPath, args, {
    env: { ...process.env, STANDIN_LOG_LEVEL: 'error', BENCH_ELD_FILE: eld },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m && out.includes('docs:')) {
        child.stdout.resume();
        resolve({ name, child, url: m[1], eld, key: /platform API key[^:]*:\s*([^\s"]+)/.exec(out)?.[1] });
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}: ${out}`)));
  });
}

let KEY;
async function api(inst, path, body, method = body === undefined ? 'GET' : 'POST') {
  const res = await fetch(`${inst.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(body instanceof FormData || body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(3_600_000),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
async function upload(inst, filename, text) {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', new Blob([text]), filename);
  return (await api(inst, '/v1/files', form)).id;
}

/**
 * A fill thread: files [from, to) of the store, embedded and inserted 10 files a statement. With `runs`,
 * each chunk's text is two parts of its file's text (cut after its 50th word) and its row names them.
 */
async function fill({ url, storeId, embedderFile, shared, from, to, N, runs }) {
  const { embedBuiltin, toBlob, BUILTIN_ID } = await import(pathToFileURL(join(process.cwd(), embedderFile)).href);
  const vectors = new Float32Array(shared);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const FILES_PER_INSERT = 10;
  /** A VALUES list of `rows.length` rows of `width` parameters each (then `tail`). */
  const valuesOf = (rows, width, tail = '') =>
    rows.map((_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(', ')}${tail})`).join(',');
  for (let f0 = from; f0 < to; f0 += FILES_PER_INSERT) {
    const files = [];
    const chunks = [];
    const parts = [];
    for (let f = f0; f < Math.min(to, f0 + FILES_PER_INSERT) && f * PER_FILE < N; f++) {
      const fileId = `file-bench${String(f).padStart(8, '0')}`;
      files.push([storeId, fileId, 'proj_demo', `${fileId}.txt`, 'completed', 0, 0, '{}', 'ingest_bench']);
      for (let s = 0; s < PER_FILE && f * PER_FILE + s < N; s++) {
        const i = f * PER_FILE + s;
        const text = chunkText(i);
        const v = embedBuiltin(text);
        vectors.set(v, i * DIM);
        if (runs) {
          const cut = text.split(' ', 50).join(' ').length + 1;
          parts.push([storeId, fileId, 2 * s, text.slice(0, cut)], [storeId, fileId, 2 * s + 1, text.slice(cut)]);
        }
        chunks.push([storeId, fileId, s, runs ? '' : text, ...(runs ? [2 * s, 2 * s + 1] : [null, null]), toBlob(v), BUILTIN_ID]);
      }
    }
    await db.query(
      `INSERT INTO vector_store_files (vector_store_id, file_id, project_id, filename, status, usage_bytes, created_at, chunking, ingest_id)
       VALUES ${valuesOf(files, 9)}`,
      files.flat(),
    );
    if (parts.length)
      await db.query(`INSERT INTO vector_store_texts (vector_store_id, file_id, part, text) VALUES ${valuesOf(parts, 4)}`, parts.flat());
    await db.query(
      `INSERT INTO vector_store_chunks (vector_store_id, file_id, seq, text, text_from, text_to, embedding, embedder, tokens)
       VALUES ${valuesOf(chunks, 8, ', 100')}`,
      chunks.flat(),
    );
    if (((f0 - from) * PER_FILE) % 100_000 === 0) parentPort.postMessage((f0 - from) * PER_FILE);
  }
  await db.end();
}

/** Figures so far, printed and kept, for a run cut short. */
function partial(stage, result) {
  console.log(
    `[${new Date().toISOString()}] ${stage}: ${JSON.stringify(result)} load ${loadavg()
      .map((x) => round(x))
      .join(', ')}`,
  );
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    `bench/results/retrieval-scale-${N}.partial.json`,
    JSON.stringify({ stage, at: new Date().toISOString(), loadavg: loadavg(), result }, null, 2),
  );
}

async function main() {
  const embedderFile = await bundleOf('src/vector-stores/embedder.ts', 'embedder.mjs');
  const { embedBuiltin } = await import(pathToFileURL(join(process.cwd(), embedderFile)).href);
  const beforeScript = EXACT || NONE ? 'dist/main.js' : await buildCommit(BASELINE, 'standin-bench-retrieval');
  const schema = `bench_retrieval_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const db = new pg.Client({ connectionString: url.href });
  await db.connect();
  const running = [];
  // The instances stopped and the schema dropped once, at the end or on an interrupt (a million chunks
  // leave gigabytes in the database).
  let cleaned;
  const cleanup = () =>
    (cleaned ??= (async () => {
      for (const inst of running) {
        inst.child.kill('SIGTERM');
        await new Promise((r) => (inst.child.exitCode !== null ? r() : inst.child.once('exit', r)));
      }
      await db.end();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
      rmSync(work, { recursive: true, force: true });
    })());
  const interrupted = (signal) => {
    console.error(`${signal}: stopping the instances and dropping schema ${schema}`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    // A: reads (now), B: ingests (now), C: reads (before).
    // BENCH_RETRIEVAL_ARGS: settings of the reading instance (e.g. --search-approximate-from 50000).
    // The after reader saves the store's index here; the saved reader (started later) loads it.
    const indexDir = join(work, 'indexes');
    const a = await start('after', 'dist/main.js', url.href, false, [
      ...MEMORY,
      '--search-index-dir',
      indexDir,
      // Saved at any size the bench is given (the server's default saves from 10,000 live chunks; a smaller
      // store was never saved, and the bench waited its 30 minutes for the file).
      '--search-index-save-from',
      String(Math.max(1, Math.min(N, 10_000))),
      ...(process.env.BENCH_RETRIEVAL_ARGS ?? '').split(' ').filter(Boolean),
    ]);
    running.push(a);
    KEY = a.key;
    const store = await api(a, '/v1/vector_stores', { name: 'scale' });

    // The store's chunks, written straight into the tables (HTTP ingestion is measured on its own below),
    // by FILL_THREADS threads, each its own files; the vectors land in one shared array for the bare scan.
    const t0 = performance.now();
    const shared = new SharedArrayBuffer(N * DIM * 4);
    const vectors = new Float32Array(shared);
    const files = Math.ceil(N / PER_FILE);
    await Promise.all(
      Array.from({ length: FILL_THREADS }, (_, w) => {
        const from = Math.floor((files * w) / FILL_THREADS);
        const to = Math.floor((files * (w + 1)) / FILL_THREADS);
        const worker = new Worker(fileURLToPath(import.meta.url), {
          workerData: { fill: true, url: url.href, storeId: store.id, embedderFile, shared, from, to, N, runs: TEXT === 'runs' },
          argv: process.argv.slice(2),
        });
        worker.on('message', (m) => console.log(`filled ${m} chunks (thread ${w}, ${round((performance.now() - t0) / 1000)} s)`));
        return new Promise((resolve, reject) => {
          worker.on('error', reject);
          worker.on('exit', (code) => (code ? reject(new Error(`fill thread exited ${code}`)) : resolve()));
        });
      }),
    );
    await db.query('UPDATE vector_stores SET index_version = index_version + 1 WHERE id = $1', [store.id]);
    const fillS = (performance.now() - t0) / 1000;
    console.log(`filled ${N} chunks in ${round(fillS)} s`);

    const b = await start('ingest', 'dist/main.js', url.href, true);
    running.push(b);
    const c = NONE
      ? null
      : await start(
          EXACT ? 'exact' : 'before',
          beforeScript,
          url.href,
          false,
          EXACT ? [...MEMORY, '--search-approximate-from', '0', '--search-index-dir', join(work, 'indexes-exact')] : [],
        );
    if (c) running.push(c);

    // Queries: three words of a chunk picked at random (its chunk is the one to find).
    const r = rng(42);
    const queries = Array.from({ length: QUERIES }, () => {
      const i = Math.floor(r() * N);
      const ws = chunkText(i).split(' ');
      return { target: i, text: [0, 1, 2].map(() => ws[Math.floor(r() * ws.length)]).join(' ') };
    });

    // The bare scan: cosine over the same vectors, top 10, in this process.
    const scan = [];
    let scanFound = 0;
    const fileOf = (i) => Math.floor(i / PER_FILE);
    for (const q of queries.slice(0, SCAN_QUERIES)) {
      const t = performance.now();
      const qv = embedBuiltin(q.text);
      const top = [];
      for (let i = 0, off = 0; i < N; i++, off += DIM) {
        let dot = 0;
        for (let k = 0; k < DIM; k++) dot += vectors[off + k] * qv[k];
        if (top.length < 10 || dot > top[top.length - 1].dot) {
          top.push({ i, dot });
          top.sort((x, y) => y.dot - x.dot);
          if (top.length > 10) top.pop();
        }
      }
      scan.push(performance.now() - t);
      if (top.slice(0, 5).some((h) => fileOf(h.i) === fileOf(q.target))) scanFound++;
    }
    console.log(`bare scan done, p50 ${round(pct(scan, 50))} ms`);

    const answersOf = new Map();
    /** Every query on a reader: latencies, hits, its CPU from the start; its answers kept for comparison. */
    const searchAll = async (inst) => {
      const lat = [];
      const answers = [];
      let found = 0;
      const qFrom = Date.now();
      const cpu0 = cpuMs(inst.child.pid);
      for (const q of queries) {
        const t1 = performance.now();
        const res = await api(inst, `/v1/vector_stores/${store.id}/search`, { query: q.text, max_num_results: 5 });
        lat.push(performance.now() - t1);
        answers.push(JSON.stringify(res.data.map((h) => [h.file_id, h.score, h.text])));
        if (res.data.some((h) => h.file_id === `file-bench${String(Math.floor(q.target / PER_FILE)).padStart(8, '0')}`)) found++;
      }
      answersOf.set(inst, answers);
      return { lat, found, qFrom, cpu0, answers };
    };
    /** Waits until a reader's saved index is in place (a .idx file, no .part being written); ms waited. */
    const savedIndex = async (dir) => {
      const t = performance.now();
      for (;;) {
        const names = existsSync(dir) ? readdirSync(dir) : [];
        if (names.some((f) => f.endsWith('.idx')) && !names.some((f) => f.endsWith('.part'))) {
          console.log(`saved index: ${names.map((f) => `${f} ${round(statSync(join(dir, f)).size / 1048576)} MB`).join(', ')}`);
          return performance.now() - t;
        }
        if (performance.now() - t > 1_800_000) throw new Error('the index was not saved within 30 minutes');
        await sleep(200);
      }
    };
    const rows = [];
    const result = {
      fill: { s: round(fillS) },
      bare: { p50: round(pct(scan, 50)), p99: round(pct(scan, 99)), hit5: round((100 * scanFound) / scan.length), queries: scan.length },
    };
    partial('bare scan', result);
    // The new build first: at a million chunks the run may be cut short.
    for (const inst of [a, c].filter(Boolean)) {
      const { first, firstCpuMs, firstMainMs, firstStall } = await firstSearch(inst, store.id);
      // The after reader saves the store's index in the background: wait for it, so searches (and, with
      // --no-saved too, B's ingestion with A idle) are measured alone. Not awaited with --no-saved before
      // stop 73: at a million chunks the save overlapped B's ingestion.
      let savedS;
      if (inst === a) {
        const t2 = performance.now();
        savedS = round((first + (await savedIndex(indexDir))) / 1000);
        console.log(`index saved ${round((performance.now() - t2) / 1000)} s after the first search`);
      }
      const { lat, found, qFrom, cpu0 } = await searchAll(inst);
      result[inst.name] = {
        savedS,
        first: round(first),
        firstCpu: round(firstCpuMs),
        firstMainCpu: round(firstMainMs),
        firstStall,
        p50: round(pct(lat, 50)),
        p99: round(pct(lat, 99)),
        searchStall: stallOf(inst, qFrom, Date.now()),
        hit5: round((100 * found) / QUERIES),
        cpu: round((cpuMs(inst.child.pid) - cpu0) / QUERIES),
        rss: rssMb(inst),
      };
      partial(`searches on ${inst.name}`, result);
    }

    // A reader started after the store's index was saved: its first search reads the file, not the rows.
    let saved;
    if (SAVED) {
      saved = await start('saved', 'dist/main.js', url.href, false, [
        ...MEMORY,
        '--search-index-dir',
        indexDir,
        ...(process.env.BENCH_RETRIEVAL_ARGS ?? '').split(' ').filter(Boolean),
      ]);
      running.push(saved);
      // As long idle as the after reader was before its first search (it waited for the fill): the stall
      // measured is the load's, not the start's (the idle seconds' own worst is kept beside it).
      const idleFrom = Date.now();
      await sleep(5000);
      // From the second record on: the first after the start covers the RECORD_MS before it, the end of the
      // server's start (its routes made before it listens), not its idle seconds.
      const idleStall = stallOf(saved, idleFrom + RECORD_MS, Date.now());
      const { first, firstCpuMs, firstMainMs, firstStall } = await firstSearch(saved, store.id);
      const { lat, found, qFrom, cpu0, answers: theirs } = await searchAll(saved);
      const same = theirs.filter((x, i) => x === answersOf.get(a)[i]).length;
      result.saved = {
        first: round(first),
        firstCpu: round(firstCpuMs),
        firstMainCpu: round(firstMainMs),
        firstStall,
        idleStall,
        p50: round(pct(lat, 50)),
        p99: round(pct(lat, 99)),
        searchStall: stallOf(saved, qFrom, Date.now()),
        hit5: round((100 * found) / QUERIES),
        cpu: round((cpuMs(saved.child.pid) - cpu0) / QUERIES),
        rss: rssMb(saved),
        sameAnswers: `${same}/${QUERIES}`,
      };
      partial('searches on the reader of the saved index', result);
    }

    // A change on B; how long after its `completed` each reader finds it.
    const fileId = await upload(b, 'late.txt', 'The zeppelin quartermaster counts brass lanterns at the Ostrova depot.');
    await api(b, `/v1/vector_stores/${store.id}/files`, { file_id: fileId });
    for (;;) {
      const f = await api(b, `/v1/vector_stores/${store.id}/files/${fileId}`);
      if (f.status === 'completed') break;
      if (f.status !== 'in_progress') throw new Error(`late.txt: ${JSON.stringify(f)}`);
      await sleep(20);
    }
    const completedAt = performance.now();
    const wallAt = Date.now();
    await Promise.all(
      [c, a, saved].filter(Boolean).map(async (inst) => {
        for (;;) {
          const res = await api(inst, `/v1/vector_stores/${store.id}/search`, {
            query: 'zeppelin quartermaster Ostrova',
            max_num_results: 1,
          });
          if (res.data[0]?.file_id === fileId) break;
          await sleep(10);
        }
        result[inst.name].visible = round(performance.now() - completedAt);
        result[inst.name].changeStall = stallOf(inst, wallAt, Date.now());
        result[inst.name].rssAfter = rssMb(inst);
      }),
    );
    partial('completed → found', result);

    if (INGEST) {
      // HTTP ingestion on B: 16 files of about 640 KB of prose, one batch; searches on A meanwhile.
      const prose = (f) =>
        Array.from({ length: 64 }, (_, p) => `${chunkText(10_000_000 + f * 100 + p)}.\n\n`)
          .join('')
          .repeat(10);
      const ingested = async (ids) => {
        const batch = await api(b, `/v1/vector_stores/${store.id}/file_batches`, { file_ids: ids });
        for (;;) {
          const bt = await api(b, `/v1/vector_stores/${store.id}/file_batches/${batch.id}`);
          if (bt.status !== 'in_progress') return;
          await sleep(50);
        }
      };
      // B's ingestion processes past their start first, as a long ingestion's are (and as
      // bench/ingest-throughput.mjs measures them): two other files, one batch, not timed.
      await ingested([await upload(b, 'warm-0.txt', prose(16)), await upload(b, 'warm-1.txt', prose(17))]);
      // CPU of every process on the two cores meanwhile: B, its ingestion processes (those that ended too),
      // PostgreSQL, and A (its searches, and the new files added to its index).
      const cpuNow = () => {
        const sum = (m) => [...m.values()].reduce((x, y) => x + y, 0);
        return [cpuMs(b.child.pid), sum(childrenCpu(b.child.pid)) + endedChildrenCpuMs(b.child.pid), postgresCpu(), cpuMs(a.child.pid)];
      };
      /** A batch of 16 files (`first`: the first's number) on B, with A searching every 50 ms meanwhile or not at all. */
      const batchOnB = async (first, searching) => {
        const texts = Array.from({ length: 16 }, (_, f) => prose(first + f));
        const bytes = texts.reduce((s, t) => s + Buffer.byteLength(t), 0);
        const ids = [];
        for (const [i, t] of texts.entries()) ids.push(await upload(b, `prose-${first + i}.txt`, t));
        const cpu0 = cpuNow();
        const ingestFrom = Date.now();
        const ti = performance.now();
        const during = (async () => {
          while (searching) {
            await api(a, `/v1/vector_stores/${store.id}/search`, { query: queries[0].text });
            await sleep(50);
          }
        })();
        await ingested(ids);
        const ingestS = (performance.now() - ti) / 1000;
        searching = false;
        await during;
        const mb = bytes / 1048576;
        return {
          mbps: round(mb / ingestS, 2),
          cpuPerMb: cpuNow().map((ms, i) => round((ms - cpu0[i]) / mb)),
          stall: stallOf(b, ingestFrom, Date.now()),
          readerStall: stallOf(a, ingestFrom, Date.now()),
        };
      };
      result.ingest = await batchOnB(0, true);
      // The same ingestion with A idle: what the two cores give B when no reader shares them (A adds the new
      // files at its next search, after the batch: not timed).
      result.ingestAlone = await batchOnB(32, false);
      partial('ingestion', result);
    }

    const fmt = (x) => (x === undefined ? '–' : String(x));
    const line = (what, bare, before, after, goal) =>
      rows.push({ what, 'bare scan': fmt(bare), [EXACT ? 'exact' : 'before']: fmt(before), after: fmt(after), goal });
    const { bare, after } = result;
    const before = (c && result[c.name]) ?? {};
    const fromSaved = result.saved;
    line('first search (index load), ms', undefined, before.first, after.first, '');
    if (fromSaved) {
      line('… from the saved index (a new reader), ms', undefined, undefined, fromSaved.first, 'seconds');
      line(
        "… its CPU (all threads) / on the server's thread, ms",
        undefined,
        undefined,
        `${fromSaved.firstCpu} / ${fromSaved.firstMainCpu}`,
        '',
      );
      line(
        '… worst stall during it (in the 5 idle s after its start), ms',
        undefined,
        undefined,
        `${fromSaved.firstStall} (${fromSaved.idleStall})`,
        '< 50',
      );
      line('… its answers the same as the loaded reader', undefined, undefined, fromSaved.sameAnswers, 'all');
      line('… its search p50 / p99, RSS, MB', undefined, undefined, `${fromSaved.p50} / ${fromSaved.p99}, ${fromSaved.rss}`, '');
      line('… index saved by the first reader, s after its first search began', undefined, undefined, after.savedS, '');
    }
    line("reader's CPU during it (all threads), ms", undefined, before.firstCpu, after.firstCpu, '');
    line("… of it on the server's thread, ms", undefined, before.firstMainCpu, after.firstMainCpu, '');
    line('worst stall during it, ms', undefined, before.firstStall, after.firstStall, '< 50');
    line('search p50, ms', bare.p50, before.p50, after.p50, '< 20 at 1M');
    line('search p99, ms', bare.p99, before.p99, after.p99, '');
    line("reader's CPU per search (both threads), ms", undefined, before.cpu, after.cpu, '');
    line('worst stall while searching, ms', undefined, before.searchStall, after.searchStall, '< 50');
    line("query's chunk's file in the top 5, %", bare.hit5, before.hit5, after.hit5, 'kept');
    line("B's completed → found on the reader, ms", undefined, before.visible, after.visible, '< 1000');
    line('worst stall meanwhile, ms', undefined, before.changeStall, after.changeStall, '< 50');
    line(
      'reader RSS after load / after the change, MB',
      undefined,
      `${before.rss} / ${before.rssAfter}`,
      `${after.rss} / ${after.rssAfter}`,
      'bounded',
    );
    if (result.ingest) {
      const ingestion = (what, cpu, r) => {
        line(what, undefined, undefined, r.mbps, '≥ 20');
        line(
          `${cpu} ms per MB meanwhile: B + its ingestion processes + PostgreSQL + A`,
          undefined,
          undefined,
          r.cpuPerMb.join(' + '),
          '≤ 100 on 2 cores',
        );
      };
      ingestion('HTTP ingestion on B (A searching), MB/s', 'CPU', result.ingest);
      ingestion('… with A not searching, MB/s', '… CPU', result.ingestAlone);
      line(
        "worst stall on B while ingesting / on A's searches meanwhile, ms",
        undefined,
        undefined,
        `${result.ingest.stall} / ${result.ingest.readerStall}`,
        '< 50',
      );
    }
    report(`retrieval-scale-${N}`, rows, [
      `${N} chunks of 100 made-up words in one store (PostgreSQL, texts as ${TEXT}, filled in ${result.fill.s} s by ${FILL_THREADS} threads), ${QUERIES} queries (${SCAN_QUERIES} for the bare scan) of 3 words of a random chunk; ${EXACT ? 'exact = this build with --search-approximate-from 0' : `before = ${BASELINE}`}; readers ${MEMORY.join(' ')}.`,
      `Load average of this shared machine at the end: ${loadavg()
        .map((x) => round(x))
        .join(', ')} (stalls are wall time: a starved process stalls too).`,
      INGEST
        ? `Ingestion: 16 files of about 640 KB, one batch, --ingest-processes default, after two other files (not timed); then 16 other files with A idle. RSS of B: ${rssMb(b)} MB.`
        : 'No ingestion (--no-ingest).',
    ]);
  } finally {
    await cleanup();
  }
}

if (isMainThread) await main();
else if (workerData?.fill) await fill(workerData);
