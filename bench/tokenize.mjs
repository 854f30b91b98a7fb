// Tokenizing: CPU time to count the o200k tokens of a run without spaces (`a` repeated) and of ordinary
// prose, with gpt-tokenizer directly (the old way) and with Standin's core/tokenizer.ts, against the
// linear baseline measured in the same run: gpt-tokenizer on the same text cut in 1 KiB pieces (merge
// cache cleared before each piece, so every piece is merged cold).
// gpt-tokenizer's merge is quadratic in a pre-token: on 1 MiB of `a` it needs minutes, so it is measured
// up to BENCH_TOKENS_OLD_MAX bytes (default 64 KiB) and its 1 MiB figure extrapolated from the largest.
// Run: node bench/tokenize.mjs
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { clearMergeCache, encode } from 'gpt-tokenizer';
import { report } from './lib.mjs';

const KiB = 1024;
const MiB = 1024 * KiB;
const OLD_MAX = Number(process.env.BENCH_TOKENS_OLD_MAX ?? 64 * KiB);
const PLAIN = { disallowedSpecial: new Set() };

const dir = join(process.cwd(), 'node_modules/.cache/standin-bench');
mkdirSync(dir, { recursive: true });
const outfile = join(dir, 'tokenizer.mjs');
await build({
  entryPoints: ['src/core/tokenizer.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  logLevel: 'warning',
});
const { countText } = await import(outfile);

/** CPU ms (user + system) of `f`, merge cache cleared first: the least of three runs, or of one if it is slow. */
function cpu(f) {
  let best;
  for (let i = 0; i < 3; i++) {
    clearMergeCache();
    const c = process.cpuUsage();
    const result = f();
    const d = process.cpuUsage(c);
    const ms = (d.user + d.system) / 1000;
    if (!best || ms < best.ms) best = { ms, result };
    if (ms > 1000) break;
  }
  return best;
}

const prose =
  'The committee met on Tuesday to review the quarterly figures; revenue rose 4.2% while costs fell. ' +
  'Ünïcödé names, 日本語のテキスト, and a URL like https://example.com/a?b=c appear now and then.\n';
const inputs = {
  'run of a': (n) => 'a'.repeat(n),
  prose: (n) => prose.repeat(Math.ceil(n / prose.length)).slice(0, n),
};

// Load both tokenizers' tables first, outside the measurements.
encode('warm up', PLAIN);
countText('a'.repeat(300));

const rows = [];
const round = (x) => (x >= 100 ? Math.round(x) : Math.round(x * 10) / 10);
for (const [name, make] of Object.entries(inputs)) {
  for (const size of name === 'prose' ? [MiB] : [16 * KiB, 64 * KiB, MiB]) {
    const text = make(size);
    // The linear baseline: the same library on 1 KiB pieces of the text, each merged cold.
    let baseline = 0;
    for (let at = 0; at < size; at += KiB) {
      const piece = text.slice(at, at + KiB);
      baseline += cpu(() => encode(piece, PLAIN)).ms;
    }
    const fresh = cpu(() => countText(text));
    let old;
    let oldNote = '';
    if (size <= OLD_MAX || name === 'prose') {
      old = cpu(() => encode(text, PLAIN).length);
      if (old.result !== fresh.result) throw new Error(`${name} ${size}: gpt-tokenizer counts ${old.result}, Standin ${fresh.result}`);
    } else {
      // Quadratic: the largest measured size's time times the square of the size ratio.
      const largest = rows.filter((r) => r.input === name && typeof r.old_ms === 'number').at(-1);
      old = { ms: largest.old_ms * (size / largest.bytes) ** 2 };
      oldNote = ' (extrapolated)';
    }
    rows.push({
      input: name,
      bytes: size,
      tokens: fresh.result,
      baseline_1KiB_pieces_ms: round(baseline),
      old_ms: round(old.ms),
      new_ms: round(fresh.ms),
      old_vs_baseline: `${round(old.ms / baseline)}x${oldNote}`,
      new_vs_baseline: `${round(fresh.ms / baseline)}x`,
    });
  }
}

report('tokenize', rows, [
  'CPU ms, the least of three runs (one when over a second). baseline: gpt-tokenizer on the same text in 1 KiB pieces, merge cache cleared before each (linear by construction).',
  'old: gpt-tokenizer encode on the whole text (quadratic in a run without spaces); new: core/tokenizer.ts countText (same counts).',
]);
