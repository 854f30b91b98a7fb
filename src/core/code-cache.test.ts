import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cacheFileOf, compileScript, runScript, writeCodeCache } from './code-cache.js';

describe('the server script and its code cache', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  /** `source` as the build writes the server's script: in Node's CommonJS wrapper (scripts/server-script.mjs). */
  const scriptFile = (source: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-code-cache-'));
    dirs.push(dir);
    const file = join(dir, 'script.cjs');
    writeFileSync(file, `(function (exports, require, module, __filename, __dirname) {${source}\n})`);
    return file;
  };
  const seen = () => (globalThis as { codeCacheTest?: unknown }).codeCacheTest;
  /** Sets `path`'s times `seconds` after `than`'s modification. */
  const after = (path: string, than: string, seconds: number) => {
    const t = statSync(than).mtimeMs / 1000 + seconds;
    utimesSync(path, t, t);
  };

  it('runs a script as Node loads CommonJS: module, require, __filename and __dirname of its own file', () => {
    const file = scriptFile(
      `globalThis.codeCacheTest = { file: __filename, dir: __dirname, path: require('node:path').sep, module: typeof module.exports };`,
    );
    expect(runScript(file, { writeOnExit: false })).toBe('none');
    expect(seen()).toEqual({ file, dir: join(file, '..'), path: '/', module: 'object' });
  });

  it('uses the cache it wrote; compiles afresh a script newer than its cache, or a cache V8 refuses', () => {
    const file = scriptFile(`globalThis.codeCacheTest = (function twice(x) { return 2 * x; })(21);`);
    const first = compileScript(file);
    expect(first.outcome).toBe('none');
    first.script.runInThisContext();
    writeCodeCache(file, first.script);
    expect(compileScript(file).outcome).toBe('used');

    // An edit after the cache was made (the same length: V8 alone would take the old code for it).
    writeFileSync(file, readFileSync(file, 'utf8').replace('2 * x', '3 * x'));
    after(file, cacheFileOf(file), 5);
    expect(compileScript(file).outcome).toBe('none');
    expect(runScript(file, { writeOnExit: false })).toBe('none');
    expect(seen()).toBe(63);

    // Another V8's cache, or a damaged one: refused by V8, and the script runs all the same. (A source this
    // process compiled before would come from V8's memory, the cache unread: this one is new.)
    writeFileSync(file, readFileSync(file, 'utf8').replace('3 * x', '4 * x'));
    writeFileSync(cacheFileOf(file), Buffer.alloc(4096, 7));
    after(cacheFileOf(file), file, 5);
    expect(runScript(file, { writeOnExit: false })).toBe('rejected');
    expect(seen()).toBe(84);
  });

  it('reads an ASCII script as Latin-1 and any other as UTF-8: the same text either way', () => {
    // The build's script is ASCII (scripts/server-script.mjs); a script that is not still reads right.
    const file = scriptFile(
      `globalThis.codeCacheTest = ['caf\u00e9', 'café', '【', '😀'].map((s) => [s.length, s.codePointAt(s.length - 1)]);`,
    );
    expect(runScript(file, { writeOnExit: false })).toBe('none');
    expect(seen()).toEqual([
      [4, 0xe9],
      [4, 0xe9],
      [1, 0x3010],
      [2, 0xde00],
    ]);
  });
});
