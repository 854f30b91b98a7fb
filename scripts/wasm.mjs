// Builds the C kernels (src/core/token-ends.c; src/vector-stores/text-runs.c, word-cache.c and chunk-sums.c, one module)
// as WebAssembly with clang (Debian: clang and lld) and writes each one's bytes into its .wasm.ts beside it, which is committed:
// `npm ci` and `npm start` need no C compiler. With --check, builds into a temporary folder and exits 1
// when the committed bytes are not that build's (src/core/token-ends-wasm.test.ts runs it). The same clang
// makes the same bytes: no debug information, no names, nothing of the paths.
// Usage: node scripts/wasm.mjs [--check]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
// -mbulk-memory: a clearing is a memory.fill, not a call of a C library's memset. Each memory is made as
// large as it will ever be (token-ends-wasm.ts: the cache, then a text of WASM_UNITS at most;
// embed-kernel.ts: a text's units, runs, features and vectors, or the JavaScript does it), so it never
// grows: a grown memory's old buffer is detached, and the first detached buffer of a process makes V8's
// optimized code check every typed array's buffer ever after (the embedder took 10–20 % longer).
const flags = (memory) => [
  '--target=wasm32',
  '-O2',
  '-nostdlib',
  '-mbulk-memory',
  '-Wl,--no-entry',
  '-Wl,--export=__heap_base',
  `-Wl,--initial-memory=${memory}`,
  '-Wl,--strip-all',
];

const KERNELS = [
  { sources: ['src/core/token-ends.c'], target: 'src/core/token-ends.wasm.ts', name: 'TOKEN_ENDS_WASM', flags: flags(48 << 20) },
  // Imports Math.log and lexical.ts isWordRun (embed-kernel.ts gives them).
  {
    sources: ['src/vector-stores/text-runs.c', 'src/vector-stores/word-cache.c', 'src/vector-stores/chunk-sums.c'],
    target: 'src/vector-stores/embed-kernel.wasm.ts',
    name: 'EMBED_KERNEL_WASM',
    flags: [...flags(64 << 20), '-Wl,--allow-undefined'],
  },
];

/** The module's text: the bytes as base64, with where they come from. */
function moduleOf({ sources, name, flags }, wasm) {
  const files = sources.map((source) => source.split('/').pop()).join(' and ');
  return [
    `// Written by scripts/wasm.mjs from ${files} (clang ${flags.join(' ')}): do not edit.`,
    `/** The WebAssembly of ${files}, base64. */`,
    // As Prettier writes it.
    `export const ${name} =`,
    `  '${wasm.toString('base64')}';`,
    '',
  ].join('\n');
}

const dir = mkdtempSync(join(tmpdir(), 'standin-wasm-'));
try {
  for (const kernel of KERNELS) {
    const out = join(dir, 'kernel.wasm');
    execFileSync('clang', [...kernel.flags, '-o', out, ...kernel.sources.map((source) => join(root, source))], { stdio: 'inherit' });
    const text = moduleOf(kernel, readFileSync(out));
    const target = join(root, kernel.target);
    if (process.argv.includes('--check')) {
      if (readFileSync(target, 'utf8') !== text) {
        console.error(`${kernel.target} is not ${kernel.sources.join(' + ')} built: run node scripts/wasm.mjs`);
        process.exitCode = 1;
      }
    } else writeFileSync(target, text);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
