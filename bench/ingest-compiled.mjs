// What compiled code makes of an ingestion process's two largest parts, the built-in embedder and the
// tokenizer, beside this tree's JavaScript on the same texts (32 files of 512 KB of Debian changelogs, as
// bench/ingest-stages.mjs), in CPU ms per MB of text. The C's results are checked against the JavaScript's
// (the same vectors, the same token ends), so it does the same work.
// - embed: src/vector-stores/embedder.ts embedChunks over auto chunking's chunks, and the same steps in C
//   (bench/compiled/embed.c, native); three sets in a fresh process each round: 16 files never seen (caches
//   empty), 16 other files after them, those 16 again (every word met).
// - token ends: over all 32 files once every pre-token is remembered (a long-lived process on familiar
//   text): src/core/tokenizer.ts in JavaScript (tokenEndsInJs), src/core/token-ends.c built natively
//   (bench/compiled/tokens.c, its cache filled with the pre-tokens the JavaScript met), and tokenEnds as
//   Standin runs it, through that C's WebAssembly (src/core/token-ends-wasm.ts).
// Run: node bench/ingest-compiled.mjs   (BENCH_COMPILED_ROUNDS, default 3; CC, default cc)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { changelogTexts, importTree, report } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_COMPILED_ROUNDS ?? 3);
const tree = resolve('.');
const here = new URL('.', import.meta.url).pathname;

async function bundle() {
  const { build } = await import(join(tree, 'node_modules/esbuild/lib/main.js'));
  const folder = join(tree, 'node_modules/.cache/standin-bench-compiled');
  return importTree(build, tree, folder, (src) => [
    `export { embedChunks } from ${src('vector-stores/embedder.ts')};`,
    `export { chunkText, AUTO_CHUNKING } from ${src('vector-stores/chunk.ts')};`,
    `export * as tokenizer from ${src('core/tokenizer.ts')};`,
    `export { classesOf, pretokenEnd } from ${src('core/pretokens.ts')};`,
  ]);
}

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/** FNV-1a, 64 bits, over numbers: the C's check of its token ends. */
function fnv64(arrays) {
  let h = 1469598103934665603n;
  for (const a of arrays) for (const x of a) h = ((h ^ BigInt(x)) * 1099511628211n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

/** The JavaScript's figures, in a fresh process (its caches empty); the vectors of the first two sets written to `dir`. */
async function measureJs(dir) {
  const m = await bundle();
  const texts = changelogTexts();
  const half = texts.length / 2;
  const files = texts.map((text) => {
    const starts = [];
    const chunks = [...m.chunkText(text, m.AUTO_CHUNKING, starts)];
    return { text, chunks, starts, k: m.classesOf(text), bytes: Buffer.byteLength(text) };
  });
  // chunkText tokenized every text: the tokenizer's cache holds every pre-token now, the embedder's nothing.
  const embed = {};
  const vectors = [];
  for (const [name, set] of Object.entries({ new: files.slice(0, half), 'new after': files.slice(half), seen: files.slice(half) })) {
    let ms = 0;
    let mb = 0;
    for (const f of set) {
      const a = cpu();
      const v = m.embedChunks(f.text, f.chunks, f.starts, f.k);
      ms += cpu() - a;
      mb += f.bytes / 1e6;
      if (name !== 'seen') vectors.push(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    }
    embed[name] = ms / mb;
  }
  writeFileSync(join(dir, 'js.vec'), Buffer.concat(vectors));
  // JavaScript alone, and (in a tree that has it) tokenEnds as Standin runs it, through the WebAssembly.
  const { tokenEnds, tokenEndsInJs } = m.tokenizer;
  const tokens = (run) => {
    let best = Infinity;
    let check = '';
    for (let r = 0; r < ROUNDS; r++) {
      let ms = 0;
      let mb = 0;
      const ends = [];
      for (const f of files) {
        const a = cpu();
        const out = run(f.text, 1e9, f.k);
        ms += cpu() - a;
        mb += f.bytes / 1e6;
        if (r === 0) ends.push(out.ends.subarray(0, out.count));
      }
      if (r === 0) check = fnv64(ends);
      best = Math.min(best, ms / mb);
    }
    return { ms: best, check };
  };
  const js = tokens(tokenEndsInJs ?? tokenEnds);
  const wasm = tokenEndsInJs ? tokens(tokenEnds) : undefined;
  return { embed, tokens: js.ms, check: js.check, wasm };
}

/** The C's inputs, written to `dir`: the texts, their chunks and classes, the lowercase table, the pre-tokens met and their tokens' lengths. */
async function writeInputs(dir) {
  const m = await bundle();
  const texts = changelogTexts();
  const int32 = (...xs) => Buffer.from(Int32Array.from(xs).buffer);
  const pad = (n, to) => Buffer.alloc((to - (n % to)) % to);
  const corpus = [int32(texts.length)];
  const plain = [int32(texts.length)];
  const pieces = new Map();
  for (const text of texts) {
    const starts = [];
    const chunks = [...m.chunkText(text, m.AUTO_CHUNKING, starts)];
    const k = m.classesOf(text);
    const units = Buffer.from(text, 'utf16le');
    const bytes = Buffer.byteLength(text);
    corpus.push(int32(text.length, bytes, chunks.length, ...chunks.flatMap((c, i) => [starts[i], c.text.length])));
    corpus.push(units, pad(units.length, 4), Buffer.from(k), pad(k.length, 4));
    plain.push(int32(text.length, bytes), units, pad(units.length, 4), Buffer.from(k), pad(k.length, 4));
    // Each pre-token with its tokens' lengths in bytes, from the token ends.
    const { ends, count } = m.tokenizer.tokenEnds(text, 1e9, k);
    let t = 0;
    let byte = 0;
    for (let p = 0; p < text.length;) {
      const e = m.pretokenEnd(text, k, p);
      const piece = text.slice(p, e);
      const end = byte + Buffer.byteLength(piece);
      const lengths = [];
      for (let prev = byte; t < count && ends[t] <= end; prev = ends[t++]) lengths.push(ends[t] - prev);
      if (!pieces.has(piece)) pieces.set(piece, lengths);
      byte = end;
      p = e;
    }
  }
  const met = [int32(pieces.size)];
  for (const [piece, lengths] of pieces) {
    const units = Buffer.from(piece, 'utf16le');
    met.push(int32(piece.length, lengths.length), units, pad(units.length, 4), int32(...lengths));
  }
  // embedder.ts's table: each unit's lowercase where it is one unit whatever surrounds it (0: not).
  const lower = new Uint16Array(1 << 16);
  for (let c = 0; c < lower.length; c++) {
    const l = String.fromCharCode(c).toLowerCase();
    lower[c] = l.length === 1 && c !== 0x03a3 && (c & 0xf800) !== 0xd800 ? l.charCodeAt(0) : 0;
  }
  writeFileSync(join(dir, 'corpus.bin'), Buffer.concat(corpus));
  writeFileSync(join(dir, 'texts.bin'), Buffer.concat(plain));
  writeFileSync(join(dir, 'pieces.bin'), Buffer.concat(met));
  writeFileSync(join(dir, 'lower.bin'), Buffer.from(lower.buffer));
  return texts;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};
const run = (cmd, args) => spawnSync(cmd, args, { encoding: 'utf8' });

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'standin-bench-compiled-'));
  const notes = [];
  try {
    const texts = await writeInputs(dir);
    const js = [];
    for (let r = 0; r < ROUNDS; r++) {
      const out = execFileSync(process.execPath, [new URL(import.meta.url).pathname], {
        env: { ...process.env, BENCH_COMPILED_CHILD: dir },
        encoding: 'utf8',
      });
      js.push(JSON.parse(out));
    }
    const cc = process.env.CC ?? 'cc';
    const native = { embed: [], tokens: [] };
    const built = ['embed', 'tokens'].every((name) => {
      const r = run(cc, ['-O2', '-o', join(dir, name), join(here, `compiled/${name}.c`), '-lm']);
      if (r.status !== 0)
        notes.push(`${cc} could not build compiled/${name}.c: ${(r.stderr || r.error?.message || '').trim().slice(0, 300)}`);
      return r.status === 0;
    });
    let vectorsNote = '';
    let tokensCheck = '';
    if (built) {
      for (let r = 0; r < ROUNDS; r++) native.embed.push(JSON.parse(execFileSync(join(dir, 'embed'), [dir], { encoding: 'utf8' })));
      const t = JSON.parse(execFileSync(join(dir, 'tokens'), [dir, String(ROUNDS)], { encoding: 'utf8' }));
      native.tokens.push(t.msPerMb);
      tokensCheck = t.check;
      // The same vectors, but where a count's weight takes a logarithm: C's log and V8's may differ in the last bit.
      const a = new Float32Array(readFileSync(join(dir, 'js.vec')).buffer.slice(0));
      const b = new Float32Array(readFileSync(join(dir, 'c.vec')).buffer.slice(0));
      if (a.length !== b.length) throw new Error(`the C made ${b.length} numbers of vectors, the JavaScript ${a.length}`);
      let differ = 0;
      let worst = 0;
      for (let i = 0; i < a.length; i++) {
        if (a[i] === b[i]) continue;
        differ++;
        worst = Math.max(worst, Math.abs(a[i] - b[i]));
      }
      if (worst > 1e-6) throw new Error(`the C's vectors are not the JavaScript's: ${differ} numbers differ, by up to ${worst}`);
      vectorsNote = `Vectors: ${a.length - differ} of ${a.length} numbers equal to the bit, the rest within ${worst.toExponential(1)} (C's log and V8's Math.log may differ in the last bit).`;
      if (tokensCheck !== js[0].check)
        throw new Error(`the C's token ends are not the JavaScript's (${tokensCheck} against ${js[0].check})`);
    }
    const wasm = js.filter((x) => x.wasm);
    if (wasm.some((x) => x.wasm.check !== js[0].check)) throw new Error('the WebAssembly’s token ends are not the JavaScript’s');
    const cell = (xs) => (xs.length ? median(xs).toFixed(1) : '');
    const rows = [
      ...['new', 'new after', 'seen'].map((set) => ({
        work: `embed, ${set}`,
        JavaScript: cell(js.map((x) => x.embed[set])),
        'C, native': cell(native.embed.map((x) => x[set])),
        'Standin’s WebAssembly': '',
      })),
      {
        work: 'token ends, every pre-token met',
        JavaScript: cell(js.map((x) => x.tokens)),
        'C, native': cell(native.tokens),
        'Standin’s WebAssembly': cell(wasm.map((x) => x.wasm.ms)),
      },
    ];
    notes.unshift(
      `CPU ms per MB of text, median of ${ROUNDS} rounds (token ends: each round the best of ${ROUNDS} passes in one process); ${(texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / 1e6).toFixed(1)} MB in ${texts.length} files.`,
      ...(vectorsNote ? [vectorsNote, `Token ends: the same in every column (FNV-1a ${js[0].check}).`] : []),
    );
    report('ingest-compiled', rows, notes);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env.BENCH_COMPILED_CHILD) {
  console.log(JSON.stringify(await measureJs(process.env.BENCH_COMPILED_CHILD)));
} else {
  await main();
}
