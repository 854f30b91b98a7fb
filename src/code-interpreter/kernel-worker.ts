import type { guardMemfs as GuardMemfs, EmscriptenFs } from './memfs-guard.js';
import type { KernelInbound, KernelOutbound, KernelWorkerData, WorkerFile } from './protocol.js';

/** The parts of Pyodide's internal API the kernel installs packages with (pyodide.asm.mjs, `API`). */
interface PyodideInternals {
  pyodide_code: { find_imports(code: string): { toJs(): string[]; destroy(): void } };
  package_loader: { get_install_dir(target: string): string };
  install(bytes: Uint8Array, fileName: string, installDir: string, metadata: Map<string, string>): Promise<void>;
}

/**
 * The kernel: one Pyodide interpreter in a worker thread, one session. Its source is handed to the Worker
 * as text (`String(kernelMain)`), so it must not use anything from outside its own body: no imports, no
 * helpers of this file. It loads modules with `req`, the eval'd script's `require`, passed in by name so
 * that no bundler mistakes it for an import of its own (esbuild rewrites free `require` calls).
 *
 * Order matters: Pyodide loads with every Node capability it wants (it reads its files with `fs`), then
 * the Python prelude runs, then `lockDown` takes the capabilities away from this thread for good, and only
 * then does the kernel say it is ready and accept user code.
 */
export function kernelMain(req: NodeJS.Require, guardMemfs: typeof GuardMemfs): void {
  const { parentPort, workerData } = req('node:worker_threads') as typeof import('node:worker_threads');
  const { createHash } = req('node:crypto') as typeof import('node:crypto');
  const data = workerData as KernelWorkerData;
  const port = parentPort!;
  const post = (m: KernelOutbound, transfer?: ArrayBuffer[]) => port.postMessage(m, transfer);

  // WASM memory is outside V8's heap, so resourceLimits do not bound it: refuse to grow it past the limit.
  // Emscripten's heap growth catches the error and malloc fails, which Python raises as MemoryError.
  // The files of the in-memory filesystem count too (memfs-guard.ts; zero until the guard is on).
  let growthRefused = false;
  let fileBytes = () => 0;
  const grow = WebAssembly.Memory.prototype.grow;
  Object.defineProperty(WebAssembly.Memory.prototype, 'grow', {
    configurable: false,
    writable: false,
    value: function (this: WebAssembly.Memory, pages: number) {
      if (this.buffer.byteLength + pages * 65536 + fileBytes() > data.memoryLimitBytes) {
        growthRefused = true;
        throw new RangeError('the sandbox memory limit is reached');
      }
      return grow.call(this, pages);
    },
  });

  // Logs: stdout and stderr interleaved as written, capped; past the cap Python is interrupted.
  const decoder = new TextDecoder();
  let logs = '';
  let logBytes = 0;
  let truncated = false;
  const interrupt = new Int32Array(data.interrupt);
  const write = (buf: Uint8Array): number => {
    if (truncated) return buf.length;
    if (logBytes + buf.length > data.outputLimitBytes) {
      logs += decoder.decode(buf.subarray(0, Math.max(0, data.outputLimitBytes - logBytes)), { stream: true });
      logBytes = data.outputLimitBytes;
      truncated = true;
      Atomics.store(interrupt, 1, data.interruptOutput);
      Atomics.store(interrupt, 0, 2); // SIGINT: stop the flood now rather than at the time limit
      return buf.length;
    }
    logBytes += buf.length;
    logs += decoder.decode(buf, { stream: true });
    return buf.length;
  };

  // Taken now, before any user code: Python holding JS objects through the bridge could replace a builtin's
  // method later (Set.prototype.has, a Hash's digest), but not these references.
  const apply = Reflect.apply;
  const hashMethods = Object.getPrototypeOf(createHash('sha256')) as { update: unknown; digest: unknown };
  const update = hashMethods.update as (b: Uint8Array) => unknown;
  const hexDigest = hashMethods.digest as (enc: string) => string;
  const setHas = Set.prototype.has as (v: string) => boolean;
  const digest = (bytes: Uint8Array) => {
    const h = createHash('sha256');
    apply(update, h, [bytes]);
    return apply(hexDigest, h, ['hex']);
  };

  /** SHA-256 of the WebAssembly binaries of the verified packages given to this kernel (wheel.ts). */
  const allowedWasm = new Set<string>();

  /**
   * After the start, WebAssembly is compiled only from binaries a verified package holds. Python can write a
   * wasm file and load it (ctypes.CDLL, or an extension module's import); its code would run in the
   * interpreter's memory with raw `memory.grow`, past the memory limit's guard on the JS side. Every way to
   * compile goes through here: the bytes are copied, hashed, and compiled only if the hash is allowed.
   */
  function gateWasm(): void {
    const W = WebAssembly as unknown as Record<string, unknown> & typeof WebAssembly;
    const refused = () => new W.CompileError('WebAssembly code that no verified package provides is not available in the sandbox');
    const checked = (source: unknown): Uint8Array => {
      let copy: Uint8Array;
      if (source instanceof ArrayBuffer || source instanceof SharedArrayBuffer) copy = new Uint8Array(source.slice(0));
      else if (ArrayBuffer.isView(source))
        copy = new Uint8Array(source.buffer.slice(source.byteOffset, source.byteOffset + source.byteLength));
      else throw new TypeError('WebAssembly: the first argument must be an ArrayBuffer or a typed array');
      if (!apply(setHas, allowedWasm, [digest(copy)])) throw refused();
      return copy;
    };
    const OriginalModule = W.Module;
    const compile = W.compile.bind(W);
    const instantiate = W.instantiate.bind(W) as (s: unknown, i?: WebAssembly.Imports) => Promise<unknown>;
    const GatedModule = new Proxy(OriginalModule, {
      construct: (target, args: unknown[]) => Reflect.construct(target, [checked(args[0]), ...args.slice(1)]) as object,
    });
    const fixed = (obj: object, key: string, value: unknown) =>
      Object.defineProperty(obj, key, { value, writable: false, configurable: false, enumerable: false });
    // An existing module's `constructor` must not lead back to the ungated one.
    fixed(OriginalModule.prototype, 'constructor', GatedModule);
    fixed(W, 'Module', GatedModule);
    fixed(W, 'compile', async (source: unknown) => compile(checked(source) as BufferSource));
    fixed(W, 'instantiate', async (source: unknown, imports?: WebAssembly.Imports) =>
      instantiate(source instanceof OriginalModule ? source : checked(source), imports),
    );
    for (const key of ['compileStreaming', 'instantiateStreaming'])
      fixed(W, key, async () => {
        throw refused();
      });
  }

  /** Takes away from this thread everything Python could reach through the JS bridge (see docs). */
  function lockDown(): void {
    const refuse = (what: string) =>
      function refused() {
        throw new Error(`${what} is not available in the sandbox`);
      };
    const neuter = (name: string, obj: Record<string, unknown>) => {
      for (const key of Object.getOwnPropertyNames(obj)) {
        const d = Object.getOwnPropertyDescriptor(obj, key);
        if (d && typeof d.value === 'function' && d.configurable !== false && d.writable !== false) obj[key] = refuse(`${name}.${key}`);
      }
    };
    const builtins = [
      'child_process',
      'cluster',
      'dgram',
      'dns',
      'dns/promises',
      'fs',
      'fs/promises',
      'http',
      'http2',
      'https',
      'inspector',
      'module',
      'net',
      'os',
      'repl',
      'tls',
      'trace_events',
      'v8',
      'vm',
      'wasi',
      'worker_threads',
    ];
    const mod = req('node:module') as typeof import('node:module');
    const sync = mod.syncBuiltinESMExports;
    for (const name of builtins) {
      let exports: Record<string, unknown>;
      try {
        exports = req(`node:${name}`) as Record<string, unknown>;
      } catch {
        continue;
      }
      neuter(name, exports);
      for (const value of Object.values(exports)) {
        // Classes (net.Socket, fs.ReadStream, worker_threads.Worker …): their methods too.
        if (typeof value === 'function' && value.prototype && typeof value.prototype === 'object')
          neuter(`${name}.${value.name}`, value.prototype as Record<string, unknown>);
      }
      if (exports.promises && typeof exports.promises === 'object') neuter(`${name}.promises`, exports.promises as Record<string, unknown>);
    }
    sync(); // ES module namespaces (what Pyodide imported) see the replacements too
    const proc = process as unknown as Record<string, unknown>;
    for (const key of [
      'abort',
      'binding',
      '_linkedBinding',
      'dlopen',
      'kill',
      '_kill',
      'reallyExit',
      'chdir',
      'loadEnvFile',
      'setuid',
      'setgid',
      'seteuid',
      'setegid',
      'setgroups',
      'initgroups',
      'setSourceMapsEnabled',
      'setUncaughtExceptionCaptureCallback',
      'openStdin',
      'cpuUsage',
      'resourceUsage',
    ])
      if (key in proc) proc[key] = refuse(`process.${key}`);
    if (proc.report && typeof proc.report === 'object') neuter('process.report', proc.report as Record<string, unknown>);
    for (const key of Object.keys(process.env)) delete process.env[key];
    const g = globalThis as Record<string, unknown>;
    for (const key of [
      'fetch',
      'WebSocket',
      'EventSource',
      'XMLHttpRequest',
      'require',
      'module',
      'Worker',
      'SharedWorker',
      'importScripts',
    ])
      delete g[key];
    // No code from strings: the Function constructors and eval are the way to `import()` anything, and
    // Emscripten's emscripten_run_script is a direct eval inside Pyodide's closure (where `require` lives).
    const evalRefused = refuse('eval');
    Object.defineProperty(g, 'eval', { value: evalRefused, writable: false, configurable: false });
    Object.defineProperty(g, 'Function', { value: refuse('Function'), writable: false, configurable: false });
    const ctors = [function () {}, async function () {}, function* () {}, async function* () {}].map(
      (f) => Object.getPrototypeOf(f) as object,
    );
    for (const proto of ctors)
      Object.defineProperty(proto, 'constructor', { value: refuse('Function'), writable: false, configurable: false });
    gateWasm();
  }

  async function start(): Promise<void> {
    const { loadPyodide } = req(`${data.indexURL}pyodide.js`) as typeof import('pyodide');
    const py = await loadPyodide({
      indexURL: data.indexURL,
      env: { HOME: '/mnt/data' },
      jsglobals: {},
      stdout: () => {},
      stderr: () => {},
      checkAPIVersion: true,
      // Pyodide's memory snapshots (experimental, underscored options): a kernel starts from the first one's
      // memory in a fraction of the full load.
      _makeSnapshot: data.makeSnapshot,
      _loadSnapshot: data.snapshot,
    });
    if (data.makeSnapshot) {
      const snap = py.makeMemorySnapshot().slice();
      post({ type: 'snapshot', bytes: snap }, [snap.buffer]);
    }
    py.setStdout({ write });
    py.setStderr({ write });
    py.setInterruptBuffer(interrupt);
    py.FS.mkdirTree('/mnt/data');
    py.runPython(data.prelude);
    const run = py.globals.get('__standin_run') as (code: string) => string;
    const takeImages = py.globals.get('__standin_take_images') as () => { toJs(): Uint8Array[]; destroy(): void };
    py.globals.delete('__standin_run');
    // Python's `import js` / `import pyodide_js` stay refused even if user code removes the prelude's blocker.
    py.unregisterJsModule('js');
    py.unregisterJsModule('pyodide_js');
    py.globals.delete('__standin_take_images');
    // Pyodide's own installer, held here before the lock-down: user code cannot reach it (no `pyodide`,
    // no `js`), and it only ever gets wheels the pool verified against the lock file.
    const api = (py as unknown as { _api: PyodideInternals })._api;
    const findImports = api.pyodide_code.find_imports;
    const installDir = api.package_loader.get_install_dir;
    const install = api.install;
    const invalidateCaches = (py.pyimport('importlib') as unknown as { invalidate_caches(): void }).invalidate_caches;
    const heap = (py as unknown as { _module: { HEAPU8: Uint8Array } })._module;
    const files = guardMemfs(py.FS as unknown as EmscriptenFs, data.memoryLimitBytes, data.maxFiles, () => heap.HEAPU8.buffer.byteLength);
    fileBytes = files.bytes;
    // Emscripten's getentropy loads `crypto` on its first call: make that call now, not after the lock-down
    // (a kernel started from a snapshot has not made it yet, and os.urandom would then end the kernel).
    py.runPython('__import__("os").urandom(1)');
    lockDown();

    const hashes = new Map<string, string>();
    const walk = (dir: string, out: string[]) => {
      for (const name of (py.FS.readdir(dir) as string[]).sort()) {
        if (name === '.' || name === '..') continue;
        const path = `${dir}/${name}`;
        const st = py.FS.lstat(path); // a symlink is not followed (one to a parent would never end)
        if (py.FS.isDir(st.mode)) walk(path, out);
        else if (py.FS.isFile(st.mode)) out.push(path);
      }
      return out;
    };
    // The file's bytes where MEMFS keeps them: FS.readFile would copy each file, outside the memory budget.
    const fs = py.FS as unknown as {
      lookupPath(path: string, opts: { follow: boolean }): { node: unknown };
      filesystems: { MEMFS: { getFileDataAsTypedArray(node: unknown): Uint8Array } };
    };
    const read = (path: string) => {
      const view = fs.filesystems.MEMFS.getFileDataAsTypedArray(fs.lookupPath(path, { follow: false }).node);
      return new Uint8Array(view.buffer, view.byteOffset, view.byteLength); // Int8Array when sliced from the heap
    };
    const putFile = (f: WorkerFile) => {
      const sum = digest(f.bytes);
      if (hashes.get(f.path) === sum) {
        try {
          if (py.FS.isFile(py.FS.stat(f.path).mode)) return; // same path and bytes: nothing to do
        } catch {
          // deleted by the code since: write it again
        }
      }
      const dir = f.path.slice(0, f.path.lastIndexOf('/'));
      py.FS.mkdirTree(dir);
      py.FS.writeFile(f.path, f.bytes);
      hashes.set(f.path, sum);
    };

    const importable = new Set(data.importable);
    const installed = new Set<string>(); // modules whose packages are installed
    let answer: ((m: Extract<KernelInbound, { type: 'packages' }>) => void) | undefined;
    const refuse = (id: number, status: 'exception' | 'memory', text: string) =>
      post({
        type: 'result',
        id,
        status,
        logs: text,
        truncated: false,
        filesRefused: false,
        omitted: [],
        files: [],
        images: [],
        durationMs: 0,
      });

    /** Installs the distribution's packages the code imports; false (and a result posted) when it cannot. */
    const loadPackages = async (id: number, code: string): Promise<boolean> => {
      let names: string[];
      try {
        const found = findImports(code);
        names = [...new Set(found.toJs().map((n) => n.split('.')[0]!))].filter((n) => importable.has(n) && !installed.has(n));
        found.destroy();
      } catch {
        names = []; // code Python cannot parse: running it reports the SyntaxError
      }
      if (names.length === 0) return true;
      const reply = await new Promise<Extract<KernelInbound, { type: 'packages' }>>((resolve) => {
        answer = resolve;
        post({ type: 'imports', id, names });
      });
      answer = undefined;
      if (reply.error !== undefined) {
        refuse(id, 'exception', `ModuleNotFoundError: ${reply.error}\n`);
        return false;
      }
      growthRefused = false;
      files.reset();
      files.installing(true);
      let current = '';
      try {
        for (const p of reply.packages) {
          current = p.name;
          for (const h of p.wasm) allowedWasm.add(h);
          await install(p.bytes, p.fileName, installDir(p.installDir), new Map([['INSTALLER', 'standin']]));
        }
      } catch (err) {
        const memory = growthRefused || files.refused() === 'memory';
        const why = memory ? 'the sandbox memory limit is reached' : String((err as Error)?.message ?? err);
        refuse(id, memory ? 'memory' : 'exception', `ModuleNotFoundError: package '${current}' could not be installed: ${why}\n`);
        return false;
      } finally {
        files.installing(false);
      }
      invalidateCaches();
      for (const n of names) installed.add(n);
      return true;
    };

    const onMessage = async (msg: KernelInbound) => {
      if (msg.type === 'packages') return answer?.(msg);
      if (msg.type === 'run' && (await loadPackages(msg.id, msg.code))) execute(msg);
    };
    port.on('message', (msg: KernelInbound) => void onMessage(msg));

    const execute = (msg: Extract<KernelInbound, { type: 'run' }>) => {
      const started = performance.now();
      logs = '';
      logBytes = 0;
      truncated = false;
      growthRefused = false;
      files.reset();
      Atomics.store(interrupt, 0, 0);
      Atomics.store(interrupt, 1, 0);
      let status: string;
      try {
        try {
          for (const f of msg.files) putFile(f);
        } catch (err) {
          // The input files do not fit in the memory limit: the code does not run; the session goes on.
          if (files.refused() !== 'memory') throw err;
          logs += 'OSError: the input files do not fit in the sandbox memory';
        }
        // Files present before the code runs that Standin has not seen (left by earlier code) count as known.
        for (const path of walk('/mnt/data', [])) if (!hashes.has(path)) hashes.set(path, digest(read(path)));
        status = files.refused() === 'memory' ? 'memory' : run(msg.code);
      } catch (err) {
        // Pyodide failed fatally (a refused capability inside a system call, for one): this kernel is done.
        logs += `\n[${String((err as Error)?.message ?? err)}]`;
        post({
          type: 'result',
          id: msg.id,
          status: 'crashed',
          logs: logs + decoder.decode(),
          truncated,
          filesRefused: false,
          omitted: [],
          files: [],
          images: [],
          durationMs: 0,
        });
        return;
      }
      logs += decoder.decode();
      const out: WorkerFile[] = [];
      const omitted: { path: string; size: number }[] = [];
      const transfer: ArrayBuffer[] = [];
      const seen = new Set<string>();
      let outBytes = 0;
      try {
        for (const path of walk('/mnt/data', [])) {
          seen.add(path);
          const bytes = read(path);
          const sum = digest(bytes);
          if (hashes.get(path) === sum) continue;
          hashes.set(path, sum);
          // Copies leave the sandbox's memory budget: their total is bounded on its own.
          if (outBytes + bytes.length > data.outputFilesLimitBytes) {
            omitted.push({ path, size: bytes.length });
            continue;
          }
          outBytes += bytes.length;
          const copy = bytes.slice();
          out.push({ path, bytes: copy });
          transfer.push(copy.buffer);
        }
      } catch (err) {
        logs += `\n[could not read /mnt/data: ${String((err as Error)?.message ?? err)}]`;
      }
      for (const path of [...hashes.keys()]) if (!seen.has(path)) hashes.delete(path);
      if (status === 'exception' && (growthRefused || files.refused() === 'memory')) status = 'memory';
      // KeyboardInterrupt: the pool's time limit, the output cap, or the code's own `raise KeyboardInterrupt`.
      if (status === 'interrupted') status = Atomics.load(interrupt, 1) === data.interruptTimeout ? 'timeout' : 'exception';
      const images: Uint8Array[] = [];
      try {
        const list = takeImages();
        images.push(...list.toJs().map((b) => new Uint8Array(b)));
        list.destroy();
      } catch (err) {
        logs += `\n[could not read the figures: ${String((err as Error)?.message ?? err)}]`;
      }
      post(
        {
          type: 'result',
          id: msg.id,
          status: status as 'ok',
          logs,
          truncated,
          filesRefused: files.refused() === 'files',
          omitted,
          files: out,
          images,
          durationMs: performance.now() - started,
        },
        transfer,
      );
    };
    post({ type: 'ready' });
  }

  start().catch((err: unknown) => post({ type: 'failed', message: String((err as Error)?.stack ?? err) }));
}
