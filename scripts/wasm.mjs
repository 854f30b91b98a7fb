// Builds src/core/token-ends.c as WebAssembly with clang (Debian: clang and lld) and writes its bytes into
// src/core/token-ends.wasm.ts, which is committed: `npm ci` and `npm start` need no C compiler. With
// --check, builds into a temporary folder and exits 1 when the committed bytes are not that build's
// (src/core/token-ends-wasm.test.ts runs it). The same clang makes the same bytes: no debug information,
// no names, nothing of the paths.
// Usage: node scripts/wasm.mjs [--check]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const source = join(root, 'src/core/token-ends.c');
const target = join(root, 'src/core/token-ends.wasm.ts');
// -mbulk-memory: the cache's clearing is a memory.fill, not a call of a C library's memset. The memory is
// made as large as it will ever be (token-ends-wasm.ts: the cache, then a text of WASM_UNITS at most), so it
// never grows: a grown memory's old buffer is detached, and the first detached buffer of a process makes V8's
// optimized code check every typed array's buffer ever after (the embedder took 10–20 % longer).
export const FLAGS = [
  '--target=wasm32',
  '-O2',
  '-nostdlib',
  '-mbulk-memory',
  '-Wl,--no-entry',
  '-Wl,--export=__heap_base',
  `-Wl,--initial-memory=${40 << 20}`,
  '-Wl,--strip-all',
];

/** The module's text: the bytes as base64, with where they come from. */
function moduleOf(wasm) {
  return [
    '// Written by scripts/wasm.mjs from token-ends.c (clang ' + FLAGS.join(' ') + '): do not edit.',
    '/** The WebAssembly of token-ends.c, base64. */',
    // As Prettier writes it.
    'export const TOKEN_ENDS_WASM =',
    `  '${wasm.toString('base64')}';`,
    '',
  ].join('\n');
}

const dir = mkdtempSync(join(tmpdir(), 'standin-wasm-'));
try {
  const out = join(dir, 'token-ends.wasm');
  execFileSync('clang', [...FLAGS, '-o', out, source], { stdio: 'inherit' });
  const text = moduleOf(readFileSync(out));
  if (process.argv.includes('--check')) {
    if (readFileSync(target, 'utf8') !== text) {
      console.error('src/core/token-ends.wasm.ts is not token-ends.c built: run node scripts/wasm.mjs');
      process.exit(1);
    }
  } else writeFileSync(target, text);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
