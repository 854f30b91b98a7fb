// Files and vector stores: ingestion throughput with the built-in embedder against a raw read of the same
// files; search latency over a 10,000-chunk store against a bare SQL read of the same rows; a 200 MB upload's
// speed and the server's peak memory against a bare node:http server writing the same body to disk.
// Run: npm run build && node bench/files.mjs   (SQLite; each baseline is measured in the same run)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { report, startStandin } from './lib.mjs';

const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 400);
const UPLOAD_MB = Number(process.env.BENCH_UPLOAD_MB ?? 200);
const TARGET_CHUNKS = 10_000;

const rows = [];
const notes = [];
const mb = (bytes) => bytes / 1e6;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
/** VmRSS and VmHWM (peak) of a process, MB. */
const memory = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
};

// Deterministic prose on many topics (about 140 tokens a paragraph).
const TOPICS = [
  'river barges',
  'alpine meadows',
  'bread ovens',
  'railway signals',
  'copper mines',
  'lighthouse keepers',
  'orchard pruning',
  'harbour tides',
  'paper mills',
  'weaving looms',
  'salt marshes',
  'clock towers',
];
function prose(paragraphs, seed) {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  const out = [];
  for (let i = 0; i < paragraphs; i++) {
    const t = TOPICS[next() % TOPICS.length];
    const u = TOPICS[next() % TOPICS.length];
    out.push(
      `Entry ${seed}-${i} on ${t}: the survey of ${t} near ${u} counted ${next() % 9000} items over ${next() % 90} days. ` +
        `Observers noted that ${u} changed with the season, and that records of ${t} were kept in ledger ${next() % 500}. ` +
        `A second pass compared ${t} with ${u} and found ${next() % 70} differences worth a note in the annual report.`,
    );
  }
  return out.join('\n\n');
}

const standin = await startStandin();
const auth = { authorization: `Bearer ${standin.keys.platform}` };
const api = async (path, body) => {
  const res = await fetch(`${standin.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...auth, ...(body instanceof FormData || body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
};
const upload = async (name, text) => {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', new Blob([text]), name);
  return (await api('/v1/files', form)).id;
};
const untilCompleted = async (id) => {
  for (;;) {
    const vs = await api(`/v1/vector_stores/${id}`);
    if (vs.status !== 'in_progress') return vs;
    await new Promise((r) => setTimeout(r, 20));
  }
};

// 1. Ingestion: 8 text files, about 10 MB, auto chunking; the baseline reads the same files from disk.
const corpus = mkdtempSync(join(tmpdir(), 'standin-bench-corpus-'));
const texts = Array.from({ length: 8 }, (_, i) => prose(3600, i + 1));
texts.forEach((t, i) => writeFileSync(join(corpus, `doc${i}.txt`), t));
const totalBytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
const ids = [];
for (const [i, t] of texts.entries()) ids.push(await upload(`doc${i}.txt`, t));
let t0 = performance.now();
const ingested = await untilCompleted((await api('/v1/vector_stores', { name: 'ingest', file_ids: ids })).id);
const ingestSeconds = (performance.now() - t0) / 1000;
t0 = performance.now();
let readBytes = 0;
for (const f of readdirSync(corpus)) readBytes += readFileSync(join(corpus, f)).length;
const readSeconds = (performance.now() - t0) / 1000;
rows.push({
  measure: `ingest ${round(mb(totalBytes))} MB of text (8 files, auto chunking)`,
  baseline: `raw read: ${round(mb(readBytes) / readSeconds, 0)} MB/s`,
  standin: `${round(mb(totalBytes) / ingestSeconds, 2)} MB/s (${round(ingestSeconds)} s, ${ingested.file_counts.completed} files)`,
  goal: '',
});
rmSync(corpus, { recursive: true, force: true });

// 2. Search over a 10,000-chunk store (static 200/0 chunks); baseline: a bare SQL read of the same rows.
const paragraphsPerFile = 2700;
const searchIds = [];
for (let i = 0; i < 10; i++) searchIds.push(await upload(`s${i}.txt`, prose(paragraphsPerFile, 100 + i)));
const store = await untilCompleted(
  (
    await api('/v1/vector_stores', {
      name: 'search',
      file_ids: searchIds,
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 0 } },
    })
  ).id,
);
const db = new Database(join(standin.data, 'standin.db'), { readonly: true });
const chunks = db.prepare('select count(*) as n from vector_store_chunks where vector_store_id = ?').get(store.id).n;
const queries = Array.from(
  { length: SEARCHES },
  (_, i) => `How many items did the survey of ${TOPICS[i % TOPICS.length]} count in entry ${100 + (i % 10)}-${i % paragraphsPerFile}?`,
);
const search = (query) => api(`/v1/vector_stores/${store.id}/search`, { query, max_num_results: 10 });
t0 = performance.now();
await search(queries[0]);
const firstMs = performance.now() - t0;
const latencies = [];
for (const q of queries) {
  const s0 = performance.now();
  await search(q);
  latencies.push(performance.now() - s0);
}
// The rows a search index is made of: the chunks, and the text parts that hold their texts (tables.ts, `text_from`).
const read = db.prepare('select file_id, seq, text, text_from, text_to, embedding from vector_store_chunks where vector_store_id = ?');
const readTexts = db.prepare('select file_id, part, text from vector_store_texts where vector_store_id = ?');
const reads = [];
for (let i = 0; i < 50; i++) {
  const s0 = performance.now();
  read.all(store.id);
  readTexts.all(store.id);
  reads.push(performance.now() - s0);
}
db.close();
rows.push({
  measure: `search a ${chunks}-chunk store, top 10 (${SEARCHES} queries over HTTP)`,
  baseline: `SQL read of its rows: p50 ${round(pct(reads, 50))} ms, p99 ${round(pct(reads, 99))} ms`,
  standin: `p50 ${round(pct(latencies, 50))} ms, p99 ${round(pct(latencies, 99))} ms (first, building the index: ${round(firstMs, 0)} ms)`,
  goal: `p50 < 20 ms: ${pct(latencies, 50) < 20 ? 'met' : 'missed'}`,
});
if (chunks < TARGET_CHUNKS * 0.9) notes.push(`The search store holds ${chunks} chunks (target ${TARGET_CHUNKS}).`);
await standin.stop();

// 3. A 200 MB upload, streamed by the client; peak RSS of the server above its idle RSS.
const fresh = await startStandin();
const sendUpload = (url, headers, boundaryless) =>
  new Promise((resolve, reject) => {
    const boundary = 'benchboundary7f3a';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const block = Buffer.alloc(1 << 20, 'standin ');
    const size = UPLOAD_MB * 1e6;
    const body = boundaryless ? size : head.length + size + tail.length;
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body } },
      (res) => {
        let out = '';
        res.on('data', (d) => (out += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(out) : reject(new Error(`${res.statusCode} ${out}`))));
      },
    );
    req.on('error', reject);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        const n = Math.min(block.length, size - sent);
        sent += n;
        if (!req.write(n === block.length ? block : block.subarray(0, n))) return req.once('drain', pump);
      }
      if (!boundaryless) req.write(tail);
      req.end();
    };
    if (!boundaryless) req.write(head);
    pump();
  });
const measureUpload = async (pid, url, headers, boundaryless = false) => {
  await new Promise((r) => setTimeout(r, 500));
  const idle = memory(pid).rss;
  const s0 = performance.now();
  await sendUpload(url, headers, boundaryless);
  const seconds = (performance.now() - s0) / 1000;
  return { idle, above: memory(pid).peak - idle, seconds };
};
const up = await measureUpload(fresh.child.pid, `${fresh.url}/v1/files`, { authorization: `Bearer ${fresh.keys.platform}` });
await fresh.stop();
// Baseline: a bare node:http server piping the request body to a file.
const sink = mkdtempSync(join(tmpdir(), 'standin-bench-sink-'));
const bare = spawn(
  process.execPath,
  [
    '-e',
    `const fs = require('fs'); require('http').createServer((req, res) => req.pipe(fs.createWriteStream(${JSON.stringify(join(sink, 'body'))})).on('finish', () => res.end('{}'))).listen(0, '127.0.0.1', function () { console.log('LISTEN ' + this.address().port); });`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const port = await new Promise((resolve) => bare.stdout.on('data', (d) => resolve(/LISTEN (\d+)/.exec(String(d))[1])));
const base = await measureUpload(bare.pid, `http://127.0.0.1:${port}/`, {}, true);
bare.kill();
rmSync(sink, { recursive: true, force: true });
rows.push({
  measure: `upload ${UPLOAD_MB} MB (POST /v1/files, multipart)`,
  baseline: `node:http piping to a file: ${round(UPLOAD_MB / base.seconds, 0)} MB/s, peak RSS +${round(base.above, 0)} MB`,
  standin: `${round(UPLOAD_MB / up.seconds, 0)} MB/s, peak RSS +${round(up.above, 0)} MB above idle (${round(up.idle, 0)} MB)`,
  goal: `< 100 MB above idle: ${up.above < 100 ? 'met' : 'missed'}`,
});

notes.push(
  'SQLite, one process, built-in embedder. Ingestion: from creating the store to `completed` (extract, chunk by tokens, embed, store), against reading the same files from disk. Search: client-side latency of `POST /v1/vector_stores/{id}/search` (HTTP included) after the first query built the in-memory index; the baseline reads the store’s chunk rows (text and vector) with better-sqlite3 in the bench process. Upload: the client streams the body; peak RSS is the server’s VmHWM minus its RSS just before.',
);
report('files', rows, notes);
