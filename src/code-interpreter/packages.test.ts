import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeMatplotlib as mpl, lockEntry as entry, serveMirror, sha256, sideModule, wheel } from '../../test/code-interpreter/wheels.js';
import { PackageStore } from './packages.js';
import { createCodeInterpreter, type CodeInterpreterRuntime } from './service.js';

// A package with a dependency and more files than the session may hold: installed files are not the session's.
const dep = wheel('standin-dep', { 'standin_dep/__init__.py': 'def total(xs):\n    return sum(xs)\n' });
const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`standin_demo/part${i}.py`, `N = ${i}\n`]));
const demo = wheel('standin-demo', {
  ...many,
  'standin_demo/__init__.py': 'from standin_dep import total\ndef mean(xs):\n    return total(xs) / len(xs)\n',
});
// A package with a WebAssembly library: its wasm, verified with the wheel, is the only wasm a kernel compiles.
const native = wheel('standin-native', { 'standin_native/__init__.py': '', 'standin_native/libadd.so': sideModule() });
const bad = wheel('standin-bad', { 'standin_bad/__init__.py': 'print("bad code ran")\n' });

describe('code interpreter (pyodide): packages on first import, from a mirror', { timeout: 120_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'standin-packages-'));
  const served = new Map<string, Buffer>();
  let requests: string[] = [];
  let server: Server;
  let mirror: string;
  const runtimes: CodeInterpreterRuntime[] = [];
  const lockFile = join(root, 'pyodide-lock.json');

  const runtime = (cacheDir: string, packages = mirror) => {
    const ci = createCodeInterpreter(
      () => 0,
      console,
      { executor: 'pyodide', pool_size: 0, max_files: 16, timeout_ms: 30_000, packages, package_lock: lockFile },
      { cacheDir },
    );
    runtimes.push(ci);
    return ci;
  };

  beforeAll(async () => {
    writeFileSync(
      lockFile,
      JSON.stringify({
        info: { arch: 'wasm32', python: '3.14.2' },
        packages: {
          'standin-dep': entry('standin-dep', dep, ['standin_dep']),
          'standin-demo': entry('standin-demo', demo, ['standin_demo'], ['standin-dep']),
          'standin-bad': entry('standin-bad', bad, ['standin_bad']),
          'standin-native': entry('standin-native', native, ['standin_native']),
          matplotlib: entry('matplotlib', mpl, ['matplotlib']),
          micropip: entry('micropip', bad, ['micropip']),
        },
      }),
    );
    for (const w of [dep, demo, mpl, native]) served.set(w.fileName, w.bytes);
    // The tampered copy: one byte changed of what the lock file names.
    const tampered = Buffer.from(bad.bytes);
    tampered[tampered.length - 30] ^= 1;
    served.set(bad.fileName, tampered);
    ({ url: mirror, server, requests } = await serveMirror(served));
  });
  afterAll(async () => {
    await Promise.all(runtimes.map((r) => r.close()));
    server.closeAllConnections();
    server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('loads a package and its dependency on first import, verified and cached, then offline in a new kernel', async () => {
    const cache = join(root, 'cache');
    const ci = runtime(cache);
    const code = 'import standin_demo, standin_demo.part29\nstandin_demo.mean([1, 2, 6])';
    const first = await ci.execute({ session: 's', code });
    expect(first, first.logs).toMatchObject({ status: 'ok', logs: '3.0\n', files: [] });
    expect(requests.sort()).toEqual([dep.fileName, demo.fileName].sort());
    expect(readdirSync(cache).sort()).toEqual(
      [`${sha256(dep.bytes).slice(0, 16)}-${dep.fileName}`, `${sha256(demo.bytes).slice(0, 16)}-${demo.fileName}`].sort(),
    );
    // The package's 30+ files are not the session's: it still holds its own 16.
    const own = await ci.execute({
      session: 's',
      code: 'for i in range(14):\n    open(f"f{i}", "w").close()\nlen(__import__("os").listdir())',
    });
    expect(own, own.logs).toMatchObject({ status: 'ok', logs: '14\n' });

    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    requests.splice(0);
    const offline = runtime(cache);
    const again = await offline.execute({ session: 't', code });
    expect(again, again.logs).toMatchObject({ status: 'ok', logs: '3.0\n' });
    expect(requests).toEqual([]);
    await new Promise<void>((resolve) => server.listen(Number(new URL(mirror).port), '127.0.0.1', resolve));
  });

  it('refuses a file whose SHA-256 is not the lock file’s: nothing of it runs or is cached', async () => {
    const cache = join(root, 'cache-bad');
    const ci = runtime(cache);
    const r = await ci.execute({ session: 'b', code: 'print("cell ran")\nimport standin_bad' });
    expect(r.status).toBe('exception');
    expect(r.logs).toContain(`ModuleNotFoundError: package 'standin-bad' from ${mirror}${bad.fileName} was refused: its SHA-256 is `);
    expect(r.logs).toContain(`the lock file says ${sha256(bad.bytes)}`);
    expect(r.logs).not.toMatch(/ran/);
    expect(readdirSync(root)).not.toContain('cache-bad');
    // A package of the lock file the sandbox refuses (the installer) is never loaded.
    const before = requests.length;
    const m = await ci.execute({ session: 'b', code: 'import micropip' });
    expect(m.logs).toContain("module 'micropip' is not available in the sandbox");
    expect(requests.length).toBe(before);
  });

  it('says the mirror is unreachable, at once, and the session goes on', async () => {
    const ci = runtime(join(root, 'cache-down'), 'http://127.0.0.1:9/dist/');
    const r = await ci.execute({ session: 'd', code: 'import standin_demo' });
    expect(r.status).toBe('exception');
    // The package and its dependency are fetched together: the first to fail is named.
    expect(r.logs).toMatch(
      /^ModuleNotFoundError: could not fetch package '(standin-dep|standin-demo)' from http:\/\/127\.0\.0\.1:9\/dist\/standin_(dep|demo)-1\.0-py3-none-any\.whl: /,
    );
    expect((await ci.execute({ session: 'd', code: '1 + 1' })).logs).toBe('2\n');
  });

  it('loads from a local folder too', async () => {
    const folder = join(root, 'folder');
    mkdirSync(folder);
    writeFileSync(join(folder, dep.fileName), dep.bytes);
    const ci = runtime(join(root, 'cache-folder'), folder);
    expect(await ci.execute({ session: 'f', code: 'from standin_dep import total\ntotal([1, 2])' })).toMatchObject({
      status: 'ok',
      logs: '3\n',
    });
  });

  it('reads a cached file anew each time: one changed on disk is fetched again from the source and cached again', async () => {
    const folder = join(root, 'folder-cache');
    const cacheDir = join(root, 'cache-changed');
    mkdirSync(folder);
    writeFileSync(join(folder, dep.fileName), dep.bytes);
    const store = new PackageStore({ source: folder, lockFile, cacheDir, blocked: [] });
    const [pkg] = store.resolve(['standin_dep'], new Set());
    expect(Buffer.from(await store.fetch(pkg)).equals(dep.bytes)).toBe(true);
    const [cached] = readdirSync(cacheDir);
    expect(readFileSync(join(cacheDir, cached)).equals(dep.bytes)).toBe(true);
    // The source gone: from the cache.
    rmSync(join(folder, dep.fileName));
    expect(Buffer.from(await store.fetch(pkg)).equals(dep.bytes)).toBe(true);
    // The cache's copy changed: refused from the cache, so fetched, and the source fails.
    writeFileSync(join(cacheDir, cached), Buffer.concat([dep.bytes, Buffer.from('x')]));
    await expect(store.fetch(pkg)).rejects.toThrow(/could not fetch package 'standin-dep'/);
    // Back at the source: fetched, verified and cached again.
    writeFileSync(join(folder, dep.fileName), dep.bytes);
    expect(Buffer.from(await store.fetch(pkg)).equals(dep.bytes)).toBe(true);
    expect(readFileSync(join(cacheDir, cached)).equals(dep.bytes)).toBe(true);
  });

  it('compiles the WebAssembly of a verified package (called through ctypes), and no other', async () => {
    const ci = runtime(join(root, 'cache-native'));
    const load = 'import ctypes, os, standin_native\nhere = os.path.dirname(standin_native.__file__)\n';
    const r = await ci.execute({ session: 'n', code: `${load}ctypes.CDLL(os.path.join(here, 'libadd.so')).standin_add(2, 40)` });
    expect(r, r.logs).toMatchObject({ status: 'ok', logs: '42\n' });
    // The same library with one instruction changed, loaded from a file the code wrote: refused, the session goes on.
    const copy = await ci.execute({
      session: 'n',
      code:
        "data = bytearray(open(os.path.join(here, 'libadd.so'), 'rb').read())\ndata[-2] = 0x6b\nopen('/tmp/libsub.so', 'wb').write(data)\n" +
        "try:\n    ctypes.CDLL('/tmp/libsub.so')\nexcept OSError as e:\n    print(e)",
    });
    expect(copy, copy.logs).toMatchObject({ status: 'ok' });
    expect(copy.logs).toContain('WebAssembly code that no verified package provides is not available in the sandbox');
    // Nor as an extension module the code imports (dlopen without ctypes).
    const ext = await ci.execute({
      session: 'n',
      code:
        "import importlib.machinery, sys\nos.makedirs('/tmp/ext', exist_ok=True)\n" +
        "open('/tmp/ext/evil' + importlib.machinery.EXTENSION_SUFFIXES[0], 'wb').write(data)\nsys.path.insert(0, '/tmp/ext')\nimport evil",
    });
    expect(ext.status).toBe('exception');
    expect(ext.logs).toContain('WebAssembly code that no verified package provides is not available in the sandbox');
    expect((await ci.execute({ session: 'n', code: "ctypes.CDLL(os.path.join(here, 'libadd.so')).standin_add(1, 1)" })).logs).toBe('2\n');
  });

  it('turns figures of a matplotlib loaded on first import into PNG images, through the prelude', async () => {
    const ci = runtime(join(root, 'cache-mpl'));
    const code = 'import matplotlib, matplotlib.pyplot as plt\nplt.figure()\nplt.show()\nplt.figure()\nmatplotlib.backend';
    const r = await ci.execute({ session: 'm', code });
    expect(r, r.logs).toMatchObject({ status: 'ok', logs: "'Agg'\n" });
    // One shown, one left open: both come back, in order, as PNG.
    expect(r.images).toHaveLength(2);
    for (const png of r.images) expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect((await ci.execute({ session: 'm', code: 'plt.get_fignums()' })).logs).toBe('[]\n');
  });
});
