// What ingesting in processes costs beyond the work itself, for one or more source trees alternating:
// CPU ms per MB of text (process.cpuUsage here, /proc for the processes), the same 32 files of 512 KB of
// Debian changelogs as bench/ingest-throughput.mjs, auto chunking, built-in embedder.
// - "IPC alone": one process prepares one file once, then answers every request for it with the same
//   reply, encoded as the tree's ingestion process encodes it (ingest-protocol.ts `toWire`, where the tree
//   has it) and decoded here as its server does (`fromWire`): the pipe, both ways, and nothing else.
// - "in one process": `prepareFile` of every file here, no process in between.
// - "pool of 1" and "pool of 2": the tree's ingestion pool (ingest-pool.ts), one or two files at a time.
// Run: node bench/ingest-processes.mjs [tree ...]   (default: this tree; e.g. /work/wt-base .)
// BENCH_PROCESSES_ROUNDS (2) rounds alternate the trees.
import { execFileSync, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { changelogTexts, copyBuilt, report } from './lib.mjs';

const trees = process.argv.length > 2 ? process.argv.slice(2).map((t) => resolve(t)) : [resolve('.')];
const ROUNDS = Number(process.env.BENCH_PROCESSES_ROUNDS ?? 2);
/** BENCH_PROCESSES_WARM_FILES (0) other files of the changelogs first, not timed: processes past their start, their text still new. */
const WARM_FILES = Number(process.env.BENCH_PROCESSES_WARM_FILES ?? 0);
const CHUNKING = { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 };
const round = (x) => Math.round(x * 10) / 10;
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const cpuOf = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

/** The changelogs, cut at a line end into 32 texts of about 512 KB (as bench/ingest-throughput.mjs), as bytes. */
const corpus = () => changelogTexts(WARM_FILES + 32).map((t) => Buffer.from(t));

/**
 * The tree's ingestion code bundled into a folder of its own: the pool, and its ingestion process as
 * `ingest-child.js` beside it (where the pool looks first, as in dist/).
 */
async function bundled(tree) {
  const { build } = await import(join(tree, 'node_modules/esbuild/lib/main.js'));
  const folder = join(tree, 'node_modules/.cache/standin-bench-processes', createHash('sha256').update(tree).digest('hex').slice(0, 12));
  mkdirSync(folder, { recursive: true });
  copyBuilt(tree, folder);
  writeFileSync(join(folder, 'package.json'), '{"type":"module"}');
  const src = (p) => JSON.stringify(join(tree, 'src/vector-stores', p));
  const entry = join(folder, 'entry.ts');
  writeFileSync(
    entry,
    [
      `export { createIngestPool } from ${src('ingest-pool.ts')};`,
      `export { prepareFile } from ${src('prepare.ts')};`,
      `export * as wire from ${src('ingest-protocol.ts')};`,
      `export { DEFAULT_LIMITS } from ${src('limits.ts')};`,
    ].join('\n'),
  );
  const common = { bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'error' };
  await build({ ...common, entryPoints: [entry], outfile: join(folder, 'lib.js') });
  await build({ ...common, entryPoints: [join(tree, 'src/vector-stores/ingest-child.ts')], outfile: join(folder, 'ingest-child.js') });
  return join(folder, 'lib.js');
}

/** The child of "IPC alone": prepares the first file once, then answers with that reply. */
async function echoChild(lib) {
  const m = await import(lib);
  let reply;
  process.on('message', async (req) => {
    if (!reply) {
      const out = await m.prepareFile({ ...req, limits: m.DEFAULT_LIMITS });
      // Trees that send the text's UTF-8 (chunksOf) take prepareFile's result whole; those that send spans of
      // a string return { prepared, starts }; older ones the prepared file itself.
      reply = m.wire.chunksOf ? m.wire.toWire(out) : m.wire.toWire ? m.wire.toWire(out.prepared, out.starts) : out;
    }
    process.send({ id: req.id, ok: true, prepared: reply, rss: process.memoryUsage.rss(), cpu: cpu() });
  });
}

async function ipcAlone(lib, file) {
  const m = await import(lib);
  const child = fork(new URL(import.meta.url).pathname, [], {
    serialization: 'advanced',
    env: { ...process.env, BENCH_PROCESSES_ECHO: lib },
  });
  let id = 0;
  const ask = () =>
    new Promise((r) => {
      child.once('message', r);
      child.send({ id: ++id, filename: 'a.txt', data: file, chunking: CHUNKING, embed: true });
    });
  const decode = (reply) => (m.wire.fromWire ? m.wire.fromWire(reply.prepared) : reply.prepared);
  for (let i = 0; i < 20; i++) decode(await ask());
  const N = 200;
  const first = await ask();
  const here = cpu();
  for (let i = 0; i < N; i++) decode(await ask());
  const last = await ask();
  child.kill();
  const mb = ((N + 1) * file.length) / 1e6;
  return { server: (cpu() - here) / mb, processes: (last.cpu - first.cpu) / mb };
}

async function oneProcess(lib, all) {
  const m = await import(lib);
  const [warm, files] = [all.slice(0, WARM_FILES), all.slice(WARM_FILES)];
  await m.prepareFile({ filename: 'w.txt', data: files[0].subarray(0, 20_000), chunking: CHUNKING, embed: true, limits: m.DEFAULT_LIMITS });
  for (const data of warm) await m.prepareFile({ filename: 'w.txt', data, chunking: CHUNKING, embed: true, limits: m.DEFAULT_LIMITS });
  const here = cpu();
  for (const data of files) await m.prepareFile({ filename: 'a.txt', data, chunking: CHUNKING, embed: true, limits: m.DEFAULT_LIMITS });
  return { server: 0, processes: (cpu() - here) / (files.reduce((n, f) => n + f.length, 0) / 1e6) };
}

async function pool(lib, all, processes) {
  const m = await import(lib);
  const [warm, files] = [all.slice(0, WARM_FILES), all.slice(WARM_FILES)];
  const p = m.createIngestPool({ processes, limits: m.DEFAULT_LIMITS });
  const run = (data) => p.run({ filename: 'a.txt', data, chunking: CHUNKING, embed: true });
  // Every process started and its tables loaded first: a start is paid once, not per MB.
  await Promise.all(Array.from({ length: processes }, () => run(files[0].subarray(0, 20_000))));
  await Promise.all(warm.map(run));
  const pids = p.pids();
  const before = pids.map(cpuOf);
  const here = cpu();
  let next = 0;
  await Promise.all(
    Array.from({ length: processes }, async () => {
      while (next < files.length) await run(files[next++]);
    }),
  );
  const mb = files.reduce((n, f) => n + f.length, 0) / 1e6;
  const out = { server: (cpu() - here) / mb, processes: pids.reduce((n, pid, i) => n + cpuOf(pid) - before[i], 0) / mb };
  if (p.pids().join() !== pids.join()) throw new Error('an ingestion process was replaced during the run');
  await p.close();
  return out;
}

if (process.env.BENCH_PROCESSES_ECHO) await echoChild(process.env.BENCH_PROCESSES_ECHO);
else if (process.env.BENCH_PROCESSES_CHILD) {
  // One measure of one tree, in a fresh process: caches and compiled code start empty.
  const [tree, what] = JSON.parse(process.env.BENCH_PROCESSES_CHILD);
  const lib = await bundled(tree);
  const files = corpus();
  const out =
    what === 'ipc'
      ? await ipcAlone(lib, files[WARM_FILES])
      : what === 'one'
        ? await oneProcess(lib, files)
        : await pool(lib, files, what === 'pool1' ? 1 : 2);
  console.log(JSON.stringify(out));
} else {
  const measures = { ipc: 'IPC alone', one: 'in one process', pool1: 'pool of 1', pool2: 'pool of 2' };
  const results = [];
  for (let r = 0; r < ROUNDS; r++)
    for (const what of Object.keys(measures))
      for (const tree of trees) {
        const out = execFileSync(process.execPath, [new URL(import.meta.url).pathname], {
          env: { ...process.env, BENCH_PROCESSES_CHILD: JSON.stringify([tree, what]) },
          encoding: 'utf8',
        });
        results.push({ tree, what, ...JSON.parse(out) });
        console.error(`${tree} ${what}: ${out.trim()} load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`);
      }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
  };
  const cell = (tree, what) => {
    const xs = results.filter((x) => x.tree === tree && x.what === what);
    return `${round(median(xs.map((x) => x.server)))} + ${round(median(xs.map((x) => x.processes)))}`;
  };
  report(
    'ingest-processes',
    Object.entries(measures).map(([what, measure]) => ({
      measure: `${measure}: CPU ms per MB, this process + ingestion processes, median of ${ROUNDS}`,
      ...Object.fromEntries(trees.map((t) => [t, cell(t, what)])),
    })),
    [`Trees alternating, each measure in a fresh process; load average at the end ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}.`],
  );
}
