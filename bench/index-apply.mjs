// What a reader pays to add new files to a store's index (index-core.ts StoreIndex: addChunks, then the
// flush a search makes), per MB of text, for one or more source trees alternating, each in a process of its
// own: bench/ingest-throughput.mjs's Debian changelogs, BENCH_APPLY_FILES (40) files of 512 KB cut at a line
// end, auto chunking (800 tokens, 400 of overlap: every word in two chunks), no vectors (the lexical half's
// work: every instance does it for every file another ingests, and for every chunk of a store's first load).
// CPU time of the process (pin it with taskset for steadier figures); the first 8 files are not timed.
// Run: node bench/index-apply.mjs [tree ...]   (default: this tree; e.g. /work/wt-base .)
// BENCH_APPLY_ROUNDS (3) rounds alternate the trees.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { changelogTexts, importTree, report } from './lib.mjs';

const trees = process.argv.length > 2 ? process.argv.slice(2).map((t) => resolve(t)) : [resolve('.')];
const ROUNDS = Number(process.env.BENCH_APPLY_ROUNDS ?? 3);
const FILES = Number(process.env.BENCH_APPLY_FILES ?? 40);
const WARM = 8;

if (process.env.BENCH_APPLY_CHILD) {
  const tree = process.env.BENCH_APPLY_CHILD;
  const { build } = await import(join(tree, 'node_modules/esbuild/lib/main.js'));
  const folder = join(tree, 'node_modules/.cache/standin-bench-apply', createHash('sha256').update(tree).digest('hex').slice(0, 12));
  const { StoreIndex, chunkText } = await importTree(build, tree, folder, (src) => [
    `export { StoreIndex } from ${src('vector-stores/index-core.ts')};`,
    `export { chunkText } from ${src('vector-stores/chunk.ts')};`,
  ]);
  const files = changelogTexts(FILES).map((text, f) => {
    const starts = [];
    const chunks = [...chunkText(text, { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 }, starts)];
    return { id: `file-${f}`, texts: chunks.map((c) => c.text), mb: Buffer.byteLength(text) / 1048576 };
  });
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const index = new StoreIndex();
  index.setFiles(files.map((f) => ({ id: f.id, filename: `${f.id}.txt`, attributes: null })));
  let mb = 0;
  let from = 0;
  for (const [i, f] of files.entries()) {
    if (i === WARM) from = cpu();
    const n = f.texts.length;
    index.addChunks({
      fileIds: Array(n).fill(f.id),
      seqs: f.texts.map((_, j) => j),
      texts: f.texts,
      vectors: new Float32Array(0),
      hasVector: new Uint8Array(n),
      dimensions: 0,
    });
    index.flush();
    if (i >= WARM) mb += f.mb;
  }
  console.log(JSON.stringify({ msPerMb: (cpu() - from) / mb, mb }));
} else {
  const results = new Map(trees.map((t) => [t, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const tree of r % 2 ? [...trees].reverse() : trees) {
      const out = execFileSync(process.execPath, [process.argv[1]], { env: { ...process.env, BENCH_APPLY_CHILD: tree }, encoding: 'utf8' });
      const { msPerMb, mb } = JSON.parse(out.trim().split('\n').pop());
      results.get(tree).push(msPerMb);
      console.log(`${tree}: ${msPerMb.toFixed(1)} ms per MB (${mb.toFixed(1)} MB)`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  report(
    'index-apply',
    trees.map((tree) => ({
      tree,
      'CPU ms per MB of text, median': median(results.get(tree)).toFixed(1),
      runs: results
        .get(tree)
        .map((x) => x.toFixed(1))
        .join(', '),
    })),
    [
      `${FILES - WARM} files of 512 KB of Debian changelogs after ${WARM}, auto chunking, StoreIndex.addChunks then flush per file; ${ROUNDS} rounds alternating.`,
    ],
  );
}
