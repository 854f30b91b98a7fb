// The built-in embedder of two source trees in one process, alternating on the same text: CPU ms per MB
// of `embedChunks` (the chunks made beforehand, outside the timing). On a shared machine whose speed
// drifts (the same code measured 8 and 12 ms per MB an hour apart here), trees measured in separate
// processes (bench/ingest-stages.mjs) differ by more than most changes to the embedder; here each round
// runs both on the same four files back to back, the order swapped every round, and the change is the
// median of the rounds' ratios.
// Text: Debian changelogs, as bench/ingest-throughput.mjs. Each tree first embeds 2 MB (its caches and
// JIT warm), then each round 1 MB it has not seen ("new after"), then the same again ("seen").
// Run: node bench/embed-ab.mjs [treeA [treeB]]   (default: this tree against itself, which shows the
// harness's own spread; e.g. node bench/embed-ab.mjs /work/wt-base .)   BENCH_EMBED_ROUNDS (8).
// BENCH_EMBED_WHAT=prepare times an ingestion process's whole work on each file instead (prepare.ts
// `prepareFile`: extract, token ends, chunk, embed), for changes outside the embedder.
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { changelogTexts, importTree, report } from './lib.mjs';

const [a = '.', b = a] = process.argv.slice(2).map((t) => resolve(t));
const trees = [resolve(a), resolve(b)];
const ROUNDS = Number(process.env.BENCH_EMBED_ROUNDS ?? 8);
const FILE_BYTES = 256 * 1024;
const WARM = 8;
const PER_ROUND = 4;

/** A tree's chunker and embedder, bundled apart under `key` (each bundle a module instance with caches of its own, even for one tree twice). */
async function load(tree, key) {
  const { build } = await import(join(tree, 'node_modules/esbuild/lib/main.js'));
  const folder = join(
    tree,
    'node_modules/.cache/standin-bench-embed',
    createHash('sha256').update(`${tree}:${key}`).digest('hex').slice(0, 12),
  );
  return importTree(build, tree, folder, (src) => [
    `export * as chunk from ${src('vector-stores/chunk.ts')};`,
    `export * as emb from ${src('vector-stores/embedder.ts')};`,
    `export { prepareFile } from ${src('vector-stores/prepare.ts')};`,
    `export { DEFAULT_LIMITS } from ${src('vector-stores/limits.ts')};`,
  ]);
}
const modules = [await load(trees[0], 0), await load(trees[1], 1)];

// The chunks are made beforehand by a module instance of their own. Made by A's (before stop 63), they
// filled A's pre-token cache with every file's pre-tokens: A's new text was seen text to its tokenizer,
// and one tree against itself measured B at 111 % on new text with BENCH_EMBED_WHAT=prepare.
const chunker = (await load(trees[0], 'chunks')).chunk;
const files = changelogTexts(WARM + ROUNDS * PER_ROUND, FILE_BYTES).map((text) => {
  const starts = [];
  const chunks = [...chunker.chunkText(text, chunker.AUTO_CHUNKING, starts)];
  return { text, chunks, starts, bytes: Buffer.from(text), mb: Buffer.byteLength(text) / 1e6 };
});
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const PREPARE = process.env.BENCH_EMBED_WHAT === 'prepare';
/** CPU ms per MB of one tree's embedder (or its whole `prepareFile`) over `set`. */
const embed = async (m, set) => {
  const at = cpu();
  for (const f of set) {
    if (PREPARE)
      await m.prepareFile({ filename: 'a.txt', data: f.bytes, chunking: m.chunk.AUTO_CHUNKING, embed: true, limits: m.DEFAULT_LIMITS });
    else m.emb.embedChunks(f.text, f.chunks, f.starts);
  }
  return (cpu() - at) / set.reduce((n, f) => n + f.mb, 0);
};

for (const m of modules) await embed(m, files.slice(0, WARM));
const runs = { 'new after': [[], []], seen: [[], []] };
for (let r = 0; r < ROUNDS; r++) {
  const set = files.slice(WARM + r * PER_ROUND, WARM + (r + 1) * PER_ROUND);
  const order = r % 2 ? [1, 0] : [0, 1];
  for (const kind of Object.keys(runs)) for (const t of order) runs[kind][t].push(await embed(modules[t], set));
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};
const rows = Object.entries(runs).map(([kind, [xa, xb]]) => ({
  text: kind,
  'A, CPU ms per MB (median)': median(xa).toFixed(1),
  'B, CPU ms per MB (median)': median(xb).toFixed(1),
  'B against A, median of the rounds’ ratios': `${(100 * median(xb.map((x, i) => x / xa[i]))).toFixed(1)} %`,
  'rounds’ ratios, lowest–highest': `${(100 * Math.min(...xb.map((x, i) => x / xa[i]))).toFixed(0)}–${(100 * Math.max(...xb.map((x, i) => x / xa[i]))).toFixed(0)} %`,
}));
report(PREPARE ? 'prepare-ab' : 'embed-ab', rows, [
  `A: ${trees[0]}; B: ${trees[1]}. ${ROUNDS} rounds of ${PER_ROUND} files of ${FILE_BYTES >> 10} KB, in one process.`,
]);
