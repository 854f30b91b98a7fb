// A large store's search in the worker's code alone (no server, no database, no thread): one StoreIndex of
// --chunks chunks (default 1,000,000) of bench/retrieval-scale.mjs's made-up words, built once by this tree
// and saved (index-file.ts) in the system's temporary folder, then restored by each tree and searched with
// the same queries (3 words of a random chunk, max 5 results, warmed by one pass). Reports, per tree, search
// p50 / p90 (wall) and CPU per search over three passes, whether the query's chunk's file is in the top 5,
// and how many queries answer as the first tree does. Trees alternate for --rounds rounds.
// Run: node bench/search-alone.mjs [--chunks N] [--queries 200] [--rounds 2] [tree ...]   (default: this tree)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { importTree, madeUpChunk as chunkText, report, rng } from './lib.mjs';

const arg = (name, d) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : d;
};
const N = Number(arg('--chunks', 1_000_000));
const Q = Number(arg('--queries', 200));
const ROUNDS = Number(arg('--rounds', 2));
const flags = new Set(['--chunks', '--queries', '--rounds']);
const trees = process.argv.slice(2).filter((a, i, all) => !flags.has(a) && !flags.has(all[i - 1]));
if (!trees.length) trees.push('.');
const saved = join(tmpdir(), `standin-bench-search-alone-${N}.idx`);

if (process.env.BENCH_SEARCH_CHILD) {
  await child(process.env.BENCH_SEARCH_CHILD);
} else {
  const rows = [];
  for (let r = 0; r < ROUNDS; r++)
    for (const tree of trees) {
      const out = execFileSync(process.execPath, [new URL(import.meta.url).pathname, ...process.argv.slice(2)], {
        env: { ...process.env, BENCH_SEARCH_CHILD: resolve(tree) },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      rows.push({ tree, ...JSON.parse(out) });
      console.error(`${tree}: ${out.trim().slice(0, 200)}`);
    }
  const first = rows[0].answers;
  report(
    `search-alone-${N}`,
    rows.map((r) => ({
      tree: r.tree,
      'p50 of each pass, ms': r.p50.join(' / '),
      'p90, ms': r.p90.join(' / '),
      'CPU per search, ms': r.cpu,
      'file in the top 5': `${r.found} / ${Q}`,
      [`top 5 as ${trees[0]}`]: `${r.answers.filter((a, i) => a === first[i]).length} / ${Q}`,
    })),
  );
}

async function child(tree) {
  // Bundled into this tree's node_modules/.cache, where the packages the sources import resolve.
  const folder = join(
    resolve('node_modules/.cache/standin-bench-search-alone'),
    createHash('sha256').update(tree).digest('hex').slice(0, 12),
  );
  const m = await importTree(build, tree, folder, (src) => [
    `export { StoreIndex, searchIndexes } from ${src('vector-stores/index-core.ts')};`,
    `export { embedBuiltin, BUILTIN_ID } from ${src('vector-stores/embedder.ts')};`,
    `export { words } from ${src('vector-stores/lexical.ts')};`,
    `export { saveIndex, restoreIndex } from ${src('vector-stores/index-file.ts')};`,
  ]);
  const fileOf = (c) => `file-bench${String(Math.floor(c / 100)).padStart(8, '0')}`;
  const who = { store: 'vs_bench', createdAt: 1, source: 'bench', embedder: m.BUILTIN_ID };
  const budget = 8 * 2 ** 30;
  let index;
  if (existsSync(saved)) {
    const r = await m.restoreIndex(saved, who, budget, 50_000);
    if ('refused' in r) throw new Error(`${saved}: ${r.refused}`);
    index = r.index;
  } else {
    index = new m.StoreIndex(50_000);
    const metas = [];
    for (let f = 0; f * 100 < N; f++) metas.push({ id: fileOf(f * 100), filename: `f${f}.txt`, attributes: null });
    index.setFiles(metas);
    for (let a = 0; a < N; a += 2000) {
      const n = Math.min(2000, N - a);
      const texts = Array.from({ length: n }, (_, i) => chunkText(a + i));
      const vectors = new Float32Array(n * 256);
      texts.forEach((t, i) => vectors.set(m.embedBuiltin(t), i * 256));
      index.addChunks({
        fileIds: texts.map((_, i) => fileOf(a + i)),
        seqs: texts.map((_, i) => (a + i) % 100),
        texts,
        vectors,
        hasVector: new Uint8Array(n).fill(1),
        dimensions: 256,
      });
    }
    index.flush();
    if (!(await m.saveIndex(saved, who, { version: 1, fingerprint: 'bench' }, index, budget, () => true))) throw new Error('not saved');
  }
  const r = rng(42);
  const queries = Array.from({ length: Q }, () => {
    const i = Math.floor(r() * N);
    const ws = chunkText(i).split(' ');
    return { target: i, text: [0, 1, 2].map(() => ws[Math.floor(r() * ws.length)]).join(' ') };
  });
  const pass = () => {
    const lat = [];
    const answers = [];
    let found = 0;
    for (const q of queries) {
      const t = performance.now();
      const hits = m.searchIndexes([index], [{ vector: m.embedBuiltin(q.text), words: m.words(q.text) }], {
        ranker: 'auto',
        max: 5,
        threshold: 0,
      });
      lat.push(performance.now() - t);
      answers.push(hits.map((h) => `${h.fileId}/${h.seq}`).join(' '));
      if (hits.some((h) => h.fileId === fileOf(q.target))) found++;
    }
    lat.sort((a, b) => a - b);
    return { p50: lat[lat.length >> 1], p90: lat[Math.floor(lat.length * 0.9)], found, answers };
  };
  pass();
  const cpu0 = process.cpuUsage();
  const passes = [pass(), pass(), pass()];
  const cpu = process.cpuUsage(cpu0);
  const ms = (x) => Math.round(x * 100) / 100;
  console.log(
    JSON.stringify({
      p50: passes.map((p) => ms(p.p50)),
      p90: passes.map((p) => ms(p.p90)),
      cpu: ms((cpu.user + cpu.system) / 1000 / (3 * Q)),
      found: passes[0].found,
      answers: passes[0].answers,
    }),
  );
}
