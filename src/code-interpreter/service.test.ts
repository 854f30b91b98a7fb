import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodeInterpreter, type CodeInterpreterRuntime } from './service.js';

const require = createRequire(import.meta.url);

/**
 * The embedded executor end to end: real Pyodide kernels in worker threads. One runtime for the file
 * (kernels take seconds to load); sessions 'a' (kept all along), 'esc' (escape attempts), 'stub' (a loop
 * that ignores the interrupt) and the concurrency sessions.
 */
describe('code interpreter (pyodide)', { timeout: 60_000 }, () => {
  let now = 1_000_000;
  let ci: CodeInterpreterRuntime;
  const warnings: unknown[] = [];
  const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

  beforeAll(async () => {
    ci = createCodeInterpreter(
      () => now,
      { warn: (o) => warnings.push(o) },
      {
        executor: 'pyodide',
        // A source nothing listens on: a package import fails at once (packages.test.ts covers loading).
        packages: 'http://127.0.0.1:9/',
        pool_size: 1,
        max_sessions: 4,
        timeout_ms: 20_000,
        memory_mb: 256,
        output_limit_bytes: 4096,
        session_idle_seconds: 3600,
      },
    );
    ci.warm();
  });
  afterAll(async () => {
    await ci?.close();
  });

  it('computes, prints, shows the last expression and keeps variables between calls', async () => {
    const first = await ci.execute({ session: 'a', code: 'x = sum(i * i for i in range(1000))\nprint("squares", x)' });
    let expected = 0;
    for (let i = 0; i < 1000; i++) expected += i * i;
    expect(first).toMatchObject({ status: 'ok', logs: `squares ${expected}\n`, files: [], images: [] });
    const second = await ci.execute({ session: 'a', code: 'x * 2' });
    expect(second).toMatchObject({ status: 'ok', logs: `${expected * 2}\n` });
    expect(second.durationMs).toBeGreaterThanOrEqual(0);
  }, 120_000); // the first kernel loads Pyodide in full: ~3 s on a quiet machine, much more on a busy one

  it('gives randomness to a session started from the snapshot (os.urandom, secrets, tempfile)', async () => {
    const code = 'import os, secrets, tempfile\nprint(len(os.urandom(8)), len(secrets.token_hex(4)), os.path.exists(tempfile.mkdtemp()))';
    await ci.execute({ session: 'a', code: '0' }); // the snapshot exists: 'rnd' starts from it
    expect(await ci.execute({ session: 'rnd', code })).toMatchObject({ status: 'ok', logs: '8 8 True\n' });
    await ci.closeSession('rnd');
  });

  it('reports an exception as a result with its traceback, and the session goes on', async () => {
    const r = await ci.execute({ session: 'a', code: 'def f(d):\n    return 1 / d\nprint("before")\nf(0)' });
    expect(r.status).toBe('exception');
    expect(r.logs).toMatch(/^before\nTraceback \(most recent call last\):\n/);
    expect(r.logs).toContain('File "<stdin>", line 4, in <module>');
    expect(r.logs).toContain('ZeroDivisionError: division by zero');
    expect(r.logs).not.toContain('__standin');
    const syntax = await ci.execute({ session: 'a', code: 'def (' });
    expect(syntax.status).toBe('exception');
    expect(syntax.logs).toContain('SyntaxError');
    expect((await ci.execute({ session: 'a', code: 'x > 0' })).logs).toBe('True\n');
  });

  it('puts files into /mnt/data and returns the files the code writes (a CSV in, a CSV and a PNG out)', async () => {
    const csv = 'city,temp\nOslo,4\nLima,19\nCairo,25\n';
    const input = { path: '/mnt/data/temps.csv', bytes: new TextEncoder().encode(csv) };
    const code = [
      'import csv, os, struct, zlib',
      'rows = list(csv.DictReader(open("/mnt/data/temps.csv")))',
      'os.makedirs("/mnt/data/out", exist_ok=True)',
      'with open("/mnt/data/out/hot.csv", "w", newline="") as f:',
      '    w = csv.writer(f)',
      '    w.writerow(["city", "temp_f"])',
      '    for r in rows:',
      '        if int(r["temp"]) > 10: w.writerow([r["city"], int(r["temp"]) * 9 // 5 + 32])',
      'def chunk(kind, data):',
      '    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))',
      'raw = b"".join(b"\\x00" + bytes([255, 0, 0] * 4) for _ in range(4))',
      'png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")',
      'open("/mnt/data/red.png", "wb").write(png)',
      'print(len(rows), "rows")',
    ].join('\n');
    const r = await ci.execute({ session: 'a', code, files: [input] });
    expect(r).toMatchObject({ status: 'ok', logs: '3 rows\n' });
    const byPath = Object.fromEntries(r.files.map((f) => [f.path, f.bytes]));
    expect(Object.keys(byPath).sort()).toEqual(['/mnt/data/out/hot.csv', '/mnt/data/red.png']);
    expect(text(byPath['/mnt/data/out/hot.csv']!).replace(/\r\n/g, '\n')).toBe('city,temp_f\nLima,66\nCairo,77\n');
    expect([...byPath['/mnt/data/red.png']!.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

    // The same input again is a no-op; a changed file is an output; an unchanged one is not.
    const again = await ci.execute({
      session: 'a',
      code: 'open("/mnt/data/red.png", "ab").write(b"")\nopen("/mnt/data/out/hot.csv", "a").write("Rome,70\\n")',
      files: [input],
    });
    expect(again.status).toBe('ok');
    expect(again.files.map((f) => f.path)).toEqual(['/mnt/data/out/hot.csv']);
    const changedInput = await ci.execute({
      session: 'a',
      code: 'open("temps.csv").read().count("\\n")',
      files: [{ ...input, bytes: new TextEncoder().encode('city,temp\n') }],
    });
    expect(changedInput).toMatchObject({ status: 'ok', logs: '1\n', files: [] });
  });

  it('does not follow symlinks in /mnt/data (a loop to itself neither hangs nor comes back as a file)', async () => {
    const r = await ci.execute({
      session: 'a',
      code: 'import os\nos.symlink("/mnt/data", "/mnt/data/loop")\nos.symlink("/lib", "/mnt/data/lib")\nopen("/mnt/data/after-links.txt", "w").write("ok")',
    });
    expect(r.status).toBe('ok');
    expect(r.files.map((f) => f.path)).toEqual(['/mnt/data/after-links.txt']);
    expect(
      (await ci.execute({ session: 'a', code: 'os.remove("/mnt/data/loop")\nos.remove("/mnt/data/lib")\nsorted(os.listdir("/mnt/data"))' }))
        .files,
    ).toEqual([]);
  });

  it('says plainly when a package of the distribution cannot be had, and runs none of the code', async () => {
    const r = await ci.execute({ session: 'a', code: 'print("ran")\nimport matplotlib.pyplot as plt' });
    expect(r.status).toBe('exception');
    expect(r.logs).toMatch(/^ModuleNotFoundError: could not fetch package '[\w-]+' from http:\/\/127\.0\.0\.1:9\//);
    expect(r.logs).not.toContain('ran');
    expect(r.images).toEqual([]);
    // Outside the distribution: Python's own error.
    expect((await ci.execute({ session: 'a', code: 'import standin_no_such_package' })).logs).toContain(
      "ModuleNotFoundError: No module named 'standin_no_such_package'",
    );
  });

  it('caps the output of a flood, stops it, and the session goes on', async () => {
    const r = await ci.execute({ session: 'a', code: 'while True:\n    print("y" * 100)' });
    expect(r.status).toBe('exception');
    expect(r.logs).toContain('[output truncated: the logs are limited to 4096 bytes]');
    expect(Buffer.byteLength(r.logs)).toBeLessThan(4096 + 200);
    expect((await ci.execute({ session: 'a', code: 'x > 0' })).logs).toBe('True\n');
  });

  it('stops a memory bomb at the memory limit, and the session goes on', async () => {
    const grow = await ci.execute({ session: 'a', code: 'hoard = []\nwhile True:\n    hoard.append(bytearray(10**7))' });
    expect(grow.status).toBe('memory');
    expect(grow.logs).toContain('MemoryError');
    expect(grow.logs).toContain('[execution stopped: the memory limit of 256 MB was reached]');
    const big = await ci.execute({ session: 'a', code: 'del hoard\nb = bytearray(1024**3)' });
    expect(big.status).toBe('memory');
    // 4 GiB does not even fit a 32-bit WebAssembly size: an OverflowError, refused all the same.
    const huge = await ci.execute({ session: 'a', code: 'b = bytearray(4 * 1024**3)' });
    expect(huge.status).toBe('exception');
    expect(huge.logs).toContain('OverflowError');
    const list = await ci.execute({ session: 'a', code: 'x = [0] * 10**8' });
    expect(list.status).toBe('memory');
    // Sizes past a 32-bit WebAssembly index are an OverflowError, refused before any allocation.
    const huge2 = await ci.execute({ session: 'a', code: 'x = [0] * 10**10' });
    expect(huge2).toMatchObject({ status: 'exception' });
    expect(huge2.logs).toContain('OverflowError');
    expect((await ci.execute({ session: 'a', code: 'len(bytearray(10**7))' })).logs).toBe('10000000\n');
  });

  it('stops an infinite loop at the time limit while the event loop keeps turning; the session is kept', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 50);
    const r = await ci.execute({ session: 'a', code: 'n = 0\nwhile True:\n    n += 1', timeoutMs: 1500 });
    clearInterval(timer);
    expect(r.status).toBe('timeout');
    expect(r.logs).toContain('KeyboardInterrupt');
    expect(r.logs).toContain('[execution stopped: the time limit was reached]');
    expect(r.durationMs).toBeGreaterThanOrEqual(1400);
    expect(r.durationMs).toBeLessThan(1500 + 2000 + 2000);
    expect(ticks).toBeGreaterThan(5);
    expect((await ci.execute({ session: 'a', code: 'n > 0 and x > 0' })).logs).toBe('True\n');
  });

  it('ends the kernel of a loop that swallows the interrupt, and says the session was reset', async () => {
    expect((await ci.execute({ session: 'stub', code: 'kept = 1' })).status).toBe('ok');
    const code = 'while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass';
    const r = await ci.execute({ session: 'stub', code, timeoutMs: 1000 });
    expect(r.status).toBe('timeout');
    expect(r.logs).toContain('the session was reset');
    const after = await ci.execute({ session: 'stub', code: 'kept' });
    expect(after.status).toBe('exception');
    expect(after.logs).toContain("NameError: name 'kept' is not defined");
  });

  it('refuses every way out of the sandbox: host files, environment, network, processes, the JS bridge', async () => {
    const attempts: Record<string, string> = {
      passwd: 'print(open("/etc/passwd").read())',
      hostDir: 'import os\nprint(os.listdir("/"))\nprint(open("/proc/self/environ").read())',
      environ: 'import os\nprint(dict(os.environ))\nassert not os.environ, "environment visible"\nraise RuntimeError("empty")',
      importJs: 'import js\nprint(js.process.env)',
      jsRequire: 'from js import require\nprint(require("fs"))',
      jsGlobal: 'import js\nprint(js.globalThis.process)',
      pyodideJs: 'import pyodide_js\nprint(pyodide_js.FS.readdir("/"))',
      pyfetch: 'from pyodide.http import pyfetch\nprint(pyfetch)',
      runJs: 'from pyodide.code import run_js\nprint(run_js("process.env"))',
      urllib: 'import urllib.request\nprint(urllib.request.urlopen("http://127.0.0.1:5432/", timeout=3).read())',
      socket: 'import socket\ns = socket.create_connection(("127.0.0.1", 6379), timeout=3)\ns.sendall(b"PING\\r\\n")\nprint(s.recv(100))',
      subprocess: 'import subprocess\nprint(subprocess.run(["id"], capture_output=True))',
      system: 'import os\nprint(os.system("id > /tmp/standin-ci-escape"))',
      // Around the Python refusals: drop the import blocker, then try the bridge itself.
      unblocked: 'import sys\nsys.meta_path.pop(0)\nimport js\nprint(js)',
      jsProxyFunction:
        'import gc\nproxies = [o for o in gc.get_objects() if "JsProxy" in type(o).__name__ or type(o).__name__.startswith("Js")]\n' +
        'for p in proxies:\n    try:\n        print(p.constructor.constructor("return process.env")())\n    except Exception as e:\n        pass\nraise RuntimeError(f"{len(proxies)} proxies, none escaped")',
    };
    for (const [name, code] of Object.entries(attempts)) {
      const r = await ci.execute({ session: 'esc', code });
      expect(r.status, `${name}: ${r.logs}`).toMatch(/^(exception|crashed)$/);
      expect(r.logs, name).not.toMatch(/root:|PATH=|STANDIN_|\+PONG|uid=/);
    }
    // The last resort, through C: a refused capability inside a system call is fatal to the kernel only.
    const r = await ci.execute({
      session: 'esc',
      code: 'import sys\nsys.meta_path.pop(0)\nimport ctypes\nprint(ctypes.CDLL(None).system(b"id > /tmp/standin-ci-escape"))',
    });
    expect(r.status).toMatch(/^(exception|crashed)$/);
    expect(existsSync('/tmp/standin-ci-escape')).toBe(false);
  });

  it('allows ctypes, which reaches only the interpreter: no host library or file, no secret, no memory past the limit', async () => {
    const secret = `s3cr3t-${randomUUID()}`;
    process.env.STANDIN_CTYPES_SECRET = secret;
    const ct = (code: string) => ci.execute({ session: 'ct', code: `import ctypes, os\nlib = ctypes.CDLL(None)\n${code}` });
    // What numpy and pandas do with it works.
    const struct = await ct(
      "class S(ctypes.Structure):\n    _fields_ = [('a', ctypes.c_int), ('b', ctypes.c_double)]\ns = S(3, 2.5)\nprint(s.a, s.b, ctypes.sizeof(ctypes.c_void_p))",
    );
    expect(struct, struct.logs).toMatchObject({ status: 'ok', logs: '3 2.5 4\n' });
    // Host libraries and files: dlopen sees Emscripten's in-memory filesystem only.
    const host = ['/etc/passwd', 'libc.so.6', 'pyodide.asm.wasm', `${dirname(require.resolve('pyodide/package.json'))}/pyodide.asm.wasm`];
    const libs = await ct(
      `for name in ${JSON.stringify(host)}:\n    try:\n        ctypes.CDLL(name)\n        print('loaded', name)\n    except OSError as e:\n        print('refused')\n` +
        "print(lib.open(b'/etc/passwd', os.O_RDONLY), lib.open(b'/proc/self/environ', os.O_RDONLY))",
    );
    expect(libs, libs.logs).toMatchObject({ status: 'ok', logs: 'refused\nrefused\nrefused\nrefused\n-1 -1\n' });
    // Every byte of the interpreter's memory, read through ctypes: Standin's environment is not in it. The
    // secret is searched for shifted by one (the code's own text holds only the shifted form); the same
    // search finds it once the cell builds it, so the search works.
    const shifted = [...secret].map((c) => String.fromCharCode(c.charCodeAt(0) + 1)).join('');
    const scan =
      'lib.emscripten_get_heap_size.restype = ctypes.c_size_t\nend = lib.emscripten_get_heap_size()\n' +
      `needle = ${JSON.stringify(shifted)}.encode()\nshift = bytes((i + 1) % 256 for i in range(256))\n` +
      'print(sum(needle in ctypes.string_at(a, min((1 << 20) + 64, end - a)).translate(shift) for a in range(0, end, 1 << 20)) > 0)';
    expect(await ct(scan)).toMatchObject({ status: 'ok', logs: 'False\n' });
    expect(await ct(`built = ''.join(chr(ord(c) - 1) for c in ${JSON.stringify(shifted)})\n${scan}`)).toMatchObject({
      status: 'ok',
      logs: 'True\n',
    });
    // WebAssembly the code wrote (here a grow of the raw memory by 1 GiB, past every guard of the JS side) does not load.
    const grow = await ct(
      [
        'def leb(n):',
        '    out = bytearray()',
        '    while True:',
        '        b, n = n & 0x7F, n >> 7',
        '        out.append(b | 0x80 if n else b)',
        '        if not n:',
        '            return bytes(out)',
        'sec = lambda i, body: bytes([i]) + leb(len(body)) + body',
        'name = lambda s: leb(len(s)) + s',
        "wasm = b'\\0asm\\1\\0\\0\\0' + sec(0, name(b'dylink.0') + bytes([1, 4, 0, 0, 0, 0])) + sec(1, bytes([1, 0x60, 1, 0x7F, 1, 0x7F]))",
        "wasm += sec(2, bytes([1]) + name(b'env') + name(b'memory') + bytes([2, 0, 0])) + sec(3, bytes([1, 0]))",
        "wasm += sec(7, bytes([1]) + name(b'raw_grow') + bytes([0, 0])) + sec(10, bytes([1, 6, 0, 0x20, 0, 0x40, 0, 0x0B]))",
        "open('/tmp/grow.so', 'wb').write(wasm)",
        "print(ctypes.CDLL('/tmp/grow.so').raw_grow(16384))",
      ].join('\n'),
    );
    expect(grow.status).toBe('exception');
    expect(grow.logs).toContain('CompileError: WebAssembly code that no verified package provides is not available in the sandbox');
    // Emscripten's functions that reach JS: eval is refused, fatal to this kernel only; so is a write past memory.
    for (const code of ['lib.emscripten_run_script(b"process.exit(7)")', 'ctypes.memmove(0xFFFFFF00, b"x" * 512, 512)']) {
      const r = await ct(code);
      expect(r.status, r.logs).toBe('crashed');
      expect(r.logs).toContain('the session was reset');
      expect((await ct('print("next")')).logs).toBe('next\n');
    }
    delete process.env.STANDIN_CTYPES_SECRET;
  }, 120_000); // with -t, this is the file's first kernel: Pyodide's full load

  it('runs 20 executions at once across sessions, each with its own answer', async () => {
    const runs = Array.from({ length: 20 }, (_, i) =>
      ci.execute({ session: i % 2 ? 'a' : 'stub', code: `k = ${i}\nsum(range(k * 1000))` }).then((r) => ({ i, r })),
    );
    for (const { i, r } of await Promise.all(runs)) {
      expect(r.status).toBe('ok');
      expect(r.logs).toBe(`${(i * 1000 * (i * 1000 - 1)) / 2}\n`);
    }
    expect(ci.stats().sessions).toBeLessThanOrEqual(4);
  });

  it('closes a session idle longer than the limit (Standin clock) and starts the next call afresh', async () => {
    expect((await ci.execute({ session: 'a', code: 'k' })).status).toBe('ok');
    now += 3600 * 1000 + 1;
    const r = await ci.execute({ session: 'a', code: 'k' });
    expect(r.status).toBe('exception');
    expect(r.logs).toContain("NameError: name 'k' is not defined");
    await ci.closeSession('a');
    expect(ci.stats().sessions).toBe(0);
    expect(warnings).toEqual([]);
  });

  it('refuses files outside /mnt/data before running anything', async () => {
    await expect(ci.execute({ session: 'a', code: '1', files: [{ path: '/mnt/data/../etc/x', bytes: new Uint8Array() }] })).rejects.toThrow(
      /under \/mnt\/data/,
    );
    await expect(ci.execute({ session: 'a', code: '1', files: [{ path: '/tmp/x', bytes: new Uint8Array() }] })).rejects.toThrow(
      /under \/mnt\/data/,
    );
  });
});
