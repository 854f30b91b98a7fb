// The CPU an ingestion process spends per MB of text, by stage (extract, pre-tokenize, token counts, chunk,
// embed, encode the reply, decode it on the server's side, with the chunks as spans of the text where the
// tree sends them so), in one process, for one or more source trees alternating: the same 32 files of
// 512 KB of Debian changelogs as bench/ingest-throughput.mjs. Three sets: 16 files never seen (caches
// empty), the same 16 again (every pre-token and word cached), then 16 other files (caches warm from the
// first, the text new: what a long-lived ingestion process meets).
// Run: node bench/ingest-stages.mjs [tree ...]   (default: this tree; e.g. /work/wt-base .)
// The figures are CPU time (process.cpuUsage), so a busy machine inflates them less than wall time.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { changelogTexts, importTree } from './lib.mjs';

const trees = process.argv.length > 2 ? process.argv.slice(2).map((t) => resolve(t)) : [resolve('.')];
const ROUNDS = Number(process.env.BENCH_STAGES_ROUNDS ?? 1);

if (process.env.BENCH_STAGES_CHILD) {
  await measure(process.env.BENCH_STAGES_CHILD);
} else {
  const results = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const tree of trees) {
      // Each tree in a fresh process: its caches and JIT start empty.
      const out = execFileSync(process.execPath, [new URL(import.meta.url).pathname], {
        env: { ...process.env, BENCH_STAGES_CHILD: tree },
        encoding: 'utf8',
      });
      results.push({ tree, ...JSON.parse(out) });
      console.error(`${tree}: ${out.trim()}`);
    }
  }
  for (const set of ['new', 'seen', 'new after']) {
    console.log(`\n${set}: CPU ms per MB (median of ${ROUNDS})`);
    const stages = Object.keys(results[0][set]);
    console.log(`| stage | ${trees.join(' | ')} |\n| --- |${trees.map(() => ' --- |').join('')}`);
    for (const s of stages) {
      const cells = trees.map((t) => {
        const xs = results
          .filter((x) => x.tree === t)
          .map((x) => x[set][s])
          .sort((a, b) => a - b);
        return (xs[(xs.length - 1) >> 1] + xs[xs.length >> 1]) / 2;
      });
      console.log(`| ${s} | ${cells.map((c) => c.toFixed(1)).join(' | ')} |`);
    }
  }
}

async function measure(tree) {
  const { build } = await import(join(tree, 'node_modules/esbuild/lib/main.js'));
  const { serialize, deserialize } = await import('node:v8');
  // One folder per tree: worktrees may share their node_modules.
  const folder = join(tree, 'node_modules/.cache/standin-bench-stages', createHash('sha256').update(tree).digest('hex').slice(0, 12));
  const m = await importTree(build, tree, folder, (src) => [
    `export * as chunk from ${src('vector-stores/chunk.ts')};`,
    `export * as emb from ${src('vector-stores/embedder.ts')};`,
    `export { extractText } from ${src('vector-stores/extract.ts')};`,
    `export { DEFAULT_LIMITS } from ${src('vector-stores/limits.ts')};`,
    // Token ends had a module of their own before the tokenizer's cache held token ids.
    `export { tokenEnds } from ${src(existsSync(join(tree, 'src/core/token-ends.ts')) ? 'core/token-ends.ts' : 'core/tokenizer.ts')};`,
    `export { classesOf, pretokenEnd } from ${src('core/pretokens.ts')};`,
    // The reply as chunk spans (ingest-protocol.ts toWire/fromWire), in trees that have them.
    existsSync(join(tree, 'src/vector-stores/ingest-protocol.ts'))
      ? `export * as wire from ${src('vector-stores/ingest-protocol.ts')};`
      : 'export const wire = {};',
  ]);
  const files = changelogTexts();
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  // The tables load first (an ingestion process loads them when it starts).
  [...m.chunk.chunkText('warm up', m.chunk.AUTO_CHUNKING)];
  m.emb.embedBuiltin('warm up');
  const results = {};
  for (const [name, set] of Object.entries({ new: files.slice(0, 16), seen: files.slice(0, 16), 'new after': files.slice(16) })) {
    const bufs = set.map((t) => Buffer.from(t));
    const mb = bufs.reduce((n, b) => n + b.length, 0) / 1e6;
    const T = { extract: 0, 'pre-tokenize': 0, 'token counts': 0, chunk: 0, embed: 0, 'encode reply': 0, 'decode reply': 0 };
    for (const b of bufs) {
      let a = cpu();
      const text = await m.extractText('a.txt', b, m.DEFAULT_LIMITS);
      T.extract += cpu() - a;
      // Pre-tokens alone, then token ends (pre-tokens and their token lengths): the difference is the counts.
      a = cpu();
      const k = m.classesOf(text);
      for (let p = 0; p < text.length;) p = m.pretokenEnd(text, k, p);
      const scan = cpu() - a;
      T['pre-tokenize'] += scan;
      a = cpu();
      m.tokenEnds(text, 5e6);
      T['token counts'] += Math.max(0, cpu() - a - scan);
      // The chunker's own work: chunkText less its token ends (again, now cached).
      const starts = [];
      // Trees whose reply is the text's UTF-8 (chunksOf) have the chunker give each chunk's span of it; the
      // file's bytes are that UTF-8 (prepare.ts).
      const spans = m.wire.chunksOf ? [] : undefined;
      a = cpu();
      const chunks = [...m.chunk.chunkText(text, m.chunk.AUTO_CHUNKING, starts, undefined, spans, spans && b)];
      const chunked = cpu() - a;
      a = cpu();
      m.tokenEnds(text, 5e6);
      T.chunk += Math.max(0, chunked - (cpu() - a));
      a = cpu();
      let vectors;
      if (m.emb.embedChunks) vectors = m.emb.embedChunks(text, chunks, starts);
      else {
        vectors = new Float32Array(chunks.length * 256);
        chunks.forEach((c, i) => vectors.set(m.emb.embedBuiltin(c.text), i * 256));
      }
      T.embed += cpu() - a;
      // What goes over IPC ('advanced' serialization: the structured clone), and the server's chunks made of it.
      a = cpu();
      // The file's bytes as the server sent them: trees that name a text file's text as those bytes do so.
      const prepared = spans
        ? m.wire.toWire({ prepared: { text, chunks, vectors }, utf8: b, spans }, b)
        : m.wire.toWire
          ? m.wire.toWire({ text, chunks, vectors }, starts)
          : { text, chunks, vectors };
      const wire = serialize({ id: 1, ok: true, prepared, rss: 0 });
      T['encode reply'] += cpu() - a;
      a = cpu();
      const back = deserialize(wire).prepared;
      if (m.wire.fromWire) m.wire.fromWire(back, b);
      T['decode reply'] += cpu() - a;
    }
    results[name] = Object.fromEntries(Object.entries(T).map(([k, v]) => [k, Math.round((10 * v) / mb) / 10]));
    results[name].total = Math.round((10 * Object.values(T).reduce((x, y) => x + y, 0)) / mb) / 10;
  }
  console.log(JSON.stringify(results));
}
