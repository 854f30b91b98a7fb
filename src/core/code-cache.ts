import { isAscii } from 'node:buffer';
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import vm from 'node:vm';
import { underStartTuning } from './v8-start.js';

/**
 * The server as one CommonJS script (dist/standin.cjs) compiled with V8's code cache beside it
 * (dist/standin.cjs.cache, made by `npm run build`): a start deserializes the bytecode of what a start
 * runs instead of parsing and compiling megabytes of JavaScript (bench/cold-start.mjs). Node 22's compile
 * cache does this for modules on disk; Node 20 has none, and neither caches a script the program compiles.
 *
 * The cache is used only when it is newer than the script (an edited script is compiled afresh); V8 itself
 * refuses a cache made by another V8, under other flags, or for a script of another length, and the script
 * then compiles as it would without one. Nothing here writes at run time unless asked
 * (`STANDIN_WRITE_CODE_CACHE=1`, the build's warm-up, scripts/code-cache.mjs): an installed release's
 * folder may be read-only.
 */
export type CodeCacheOutcome = 'used' | 'rejected' | 'none';

/** Shared through the global object: the loader (dist/main.js) and the script it runs are two bundles. */
const OUTCOME = Symbol.for('standin.codeCache');

/** How the running server's script was compiled; null when it was not loaded through `runScript` (tests, the sources). */
export const codeCacheOutcome = (): CodeCacheOutcome | null =>
  ((globalThis as Record<symbol, unknown>)[OUTCOME] as CodeCacheOutcome | undefined) ?? null;

/** The cache file of a script. */
export const cacheFileOf = (file: string): string => `${file}.cache`;

function cachedDataFor(file: string): Buffer | undefined {
  try {
    const cache = cacheFileOf(file);
    if (statSync(cache).mtimeMs < statSync(file).mtimeMs) return undefined;
    return readFileSync(cache);
  } catch {
    return undefined;
  }
}

/**
 * The script's text. In ASCII (the build makes it so, scripts/server-script.mjs) it is read as Latin-1,
 * which Node gives V8 as a one-byte string kept outside the heap: no UTF-8 decoding, and half the memory of
 * the two-byte string one other character would make of the whole script. Otherwise, decoded as UTF-8.
 */
function scriptText(file: string): string {
  const bytes = readFileSync(file);
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/**
 * Compiles the script `file` (absolute), with its code cache when there is a valid one. The file is a
 * function expression, Node's CommonJS wrapper whole (`(function (exports, require, module, __filename,
 * __dirname) {…})`, scripts/server-script.mjs): compiled as read, not copied into a wrapper first.
 */
export function compileScript(file: string): { script: vm.Script; outcome: CodeCacheOutcome } {
  const cachedData = cachedDataFor(file);
  const script = new vm.Script(scriptText(file), {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  return { script, outcome: !cachedData ? 'none' : script.cachedDataRejected ? 'rejected' : 'used' };
}

/** Writes the code cache of `file`'s script: everything compiled of it so far, under the start's V8 flags. */
export function writeCodeCache(file: string, script: vm.Script): void {
  // V8 keys a cache to the flags in force when it is made: the start's, which a later start compiles under.
  const data = underStartTuning(() => script.createCachedData());
  const cache = cacheFileOf(file);
  writeFileSync(`${cache}.tmp`, data);
  renameSync(`${cache}.tmp`, cache);
}

/**
 * Runs the script `file` (absolute, a wrapped CommonJS module: `compileScript`) as Node would load it
 * (`require`, `module`, `__filename`, `__dirname`; `import()` through Node's own loader), compiled with its
 * code cache when it has a valid one.
 * With `writeOnExit`, the cache is written as the process exits, of everything compiled by then.
 */
export function runScript(file: string, { writeOnExit = process.env.STANDIN_WRITE_CODE_CACHE === '1' } = {}): CodeCacheOutcome {
  const { script, outcome } = compileScript(file);
  (globalThis as Record<symbol, unknown>)[OUTCOME] = outcome;
  if (writeOnExit) process.once('exit', () => writeCodeCache(file, script));
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dirname(file));
  return outcome;
}
