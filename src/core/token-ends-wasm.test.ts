import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { classesOf } from './pretokens.js';
import { WASM_UNITS, wasmClassesOf } from './token-ends-wasm.js';
import { tokenEnds, tokenEndsInJs } from './tokenizer.js';
import { random } from '../../test/random.js';

// What the pre-tokenizer tells apart: cases, digits, contractions, spaces and line ends, slashes, marks,
// letters past the BMP (a surrogate pair), halves of one alone, emoji, CJK, Σ and İ, NUL.
const PIECES = [
  'a',
  'Z',
  'é',
  'É',
  'ß',
  'ǅ',
  '7',
  '٣',
  "'s",
  "'LL",
  "'ve",
  "'",
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '/',
  '//',
  '.',
  ',',
  '!?',
  '-',
  '_',
  '$',
  '\u0301',
  '𝐀',
  '𝐚',
  '\ud835',
  '\udc00',
  '😀',
  '👍🏽',
  '日本',
  'Σ',
  'İ',
  '\u0000',
  '\u00a0',
  ' the',
  ' The',
  'THE',
  'don',
  "don't",
  ' 12345',
  'x1',
  '[[',
  '{{}}',
  '<|endoftext|>',
];
const textOf = (r: () => number, n: number) => Array.from({ length: n }, () => PIECES[Math.floor(r() * PIECES.length)]).join('');

/** Both ways' answers for `text` under `max`, with the ends cut to their count. */
function both(text: string, max = 1e9) {
  const k = classesOf(text);
  const cut = (x: { ends: Uint32Array; count: number } | undefined) => x && { count: x.count, ends: [...x.ends.subarray(0, x.count)] };
  return { wasm: cut(tokenEnds(text, max, k)), js: cut(tokenEndsInJs(text, max, k)) };
}

describe('token ends in WebAssembly', () => {
  it('are the JavaScript’s on text of every kind the pre-tokenizer tells apart, met for the first time and again', () => {
    const r = random(38);
    for (let i = 0; i < 400; i++) {
      const text = textOf(r, Math.floor(r() * 300));
      const first = both(text);
      expect(first.wasm, JSON.stringify(text)).toEqual(first.js);
      // Again: every pre-token is remembered now.
      expect(both(text).wasm).toEqual(first.js);
    }
  });

  it('class a text as classesOf does: pairs past the BMP, lone halves, and a text past WASM_UNITS (classesOf itself)', () => {
    const r = random(7);
    for (let i = 0; i < 200; i++) {
      const text = textOf(r, Math.floor(r() * 300));
      expect(wasmClassesOf(text), JSON.stringify(text)).toEqual(classesOf(text));
    }
    // A pair at either end, a half alone at either end; then a text past the module's units.
    for (const text of ['😀x𝐚', '\udc00a\ud835', 'é'.repeat(WASM_UNITS) + '𝐀']) expect(wasmClassesOf(text)).toEqual(classesOf(text));
  });

  it('hand pre-tokens over LONG units back (merged in blocks), and stop past max as the JavaScript does', () => {
    const texts = [
      'a'.repeat(300),
      ' '.repeat(5_000) + 'x',
      '['.repeat(70_000),
      '😀'.repeat(400),
      'word ' + 'é'.repeat(257) + " it's",
      '\n'.repeat(1_000) + ' end',
      '\ud800'.repeat(500),
    ];
    for (const text of texts) {
      const all = both(text);
      expect(all.wasm, text.slice(0, 20)).toEqual(all.js);
      const count = all.js!.count;
      for (const max of [0, 1, count >> 1, count - 1]) expect(both(text, max)).toEqual({ wasm: undefined, js: undefined });
      expect(both(text, count).wasm).toEqual(all.js);
    }
    expect(both('', 0)).toEqual({ wasm: { count: 0, ends: [] }, js: { count: 0, ends: [] } });
  });

  it('start over when the cache is full, and still answer for what they met before', () => {
    // 220,000 pre-tokens never met (the cache takes 200,000), in texts of at most WASM_UNITS units.
    const r = random(5);
    const word = () => ' ' + Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join('') + 'q';
    const first = Array.from({ length: 2_000 }, word).join('');
    expect(both(first).wasm).toEqual(both(first).js);
    for (let i = 0; i < 4; i++) {
      const text = Array.from({ length: 55_000 }, word).join('');
      expect(text.length).toBeLessThanOrEqual(WASM_UNITS);
      const { wasm, js } = both(text);
      expect(wasm).toEqual(js);
    }
    expect(both(first).wasm).toEqual(both(first).js);
  }, 60_000);

  it('take texts up to WASM_UNITS units, and leave longer ones to the JavaScript with the same ends', () => {
    const unit = " it's a test of 42 words;\n";
    for (const n of [WASM_UNITS, WASM_UNITS + 1]) {
      const text = unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
      const { wasm, js } = both(text);
      expect(wasm!.count).toBe(js!.count);
      expect(wasm!.ends).toEqual(js!.ends);
    }
  }, 60_000);

  // CI has clang and lld (.ci/run); elsewhere this test runs where they are.
  const clang = spawnSync('clang', ['--version']).status === 0 && spawnSync('wasm-ld', ['--version']).status === 0;
  it.runIf(clang || process.env.STANDIN_TEST_REQUIRE_ALL === '1')(
    "are token-ends.c and the embedder's kernels built: the committed bytes are what clang makes of them",
    () => {
      const check = spawnSync(process.execPath, ['scripts/wasm.mjs', '--check'], { encoding: 'utf8' });
      expect(check.stderr + check.stdout).toBe('');
      expect(check.status).toBe(0);
    },
    60_000,
  );
});
