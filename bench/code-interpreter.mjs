// The code_interpreter executor (Pyodide in worker threads), in-process: the first execution (cold: Pyodide's
// full load and its memory snapshot), a new session once the snapshot exists, warm `print(1)` p50/p99, 20
// concurrent executions over 4 sessions, and memory per kernel (RSS delta) — against the same run's bare
// worker-thread round trip (postMessage echo). Then data work: `import pandas` and `df.describe()` on a
// 10,000-row CSV, first use and warm, memory of a kernel with pandas, on the bwrap executor (Debian's pandas)
// against the same code in a bare python3 process of the same run. Pyodide's pandas cannot be fetched on a
// machine without the internet: that row says so (BENCH_PYODIDE_PACKAGES=<mirror or folder> measures it).
// Last, the cost of the kernel's WebAssembly gate: listing the wasm inside a large wheel, against its SHA-256.
// Run: node bench/code-interpreter.mjs   (builds the executor from src with esbuild; no server needed)
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { report } from './lib.mjs';

const WARM_RUNS = Number(process.env.BENCH_WARM_RUNS ?? 200);
const KERNELS = Number(process.env.BENCH_KERNELS ?? 4);

const out = 'node_modules/.cache/standin-bench/code-interpreter.mjs';
await build({
  entryPoints: ['src/code-interpreter/service.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: out,
  logLevel: 'warning',
});
const { createCodeInterpreter } = await import(`../${out}`);
const wheelOut = 'node_modules/.cache/standin-bench/wheel.mjs';
await build({
  entryPoints: ['src/code-interpreter/wheel.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  outfile: wheelOut,
  logLevel: 'warning',
});
const { wasmHashes } = await import(`../${wheelOut}`);

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const rssMb = () => process.memoryUsage().rss / 1e6;
const rows = [];

// Baseline: a bare worker thread answering postMessage.
{
  const w = new Worker(
    "require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m))",
    { eval: true },
  );
  const ask = (m) => new Promise((resolve) => (w.once('message', resolve), w.postMessage(m)));
  for (let i = 0; i < 50; i++) await ask({ code: 'print(1)' });
  const times = [];
  for (let i = 0; i < WARM_RUNS; i++) {
    const t0 = performance.now();
    await ask({ code: 'print(1)', files: [] });
    times.push(performance.now() - t0);
  }
  await w.terminate();
  rows.push({
    case: 'baseline: bare worker postMessage round trip',
    p50_ms: round(pct(times, 50), 3),
    p99_ms: round(pct(times, 99), 3),
    note: `${WARM_RUNS} round trips`,
  });
}

const ci = createCodeInterpreter(() => Date.now(), console, {
  executor: 'pyodide',
  pool_size: 0,
  max_sessions: KERNELS + 1,
  timeout_ms: 60_000,
});
const run = async (session, code) => {
  const t0 = performance.now();
  const r = await ci.execute({ session, code });
  if (r.status !== 'ok') throw new Error(`${session}: ${r.status} ${r.logs}`);
  return { r, ms: performance.now() - t0 };
};

// Cold: the first execution of all, then a new session's first once the snapshot exists.
const rss0 = rssMb();
const cold = await run('cold', 'print(1)');
rows.push({ case: 'cold: first execution (full Pyodide load + snapshot)', p50_ms: round(cold.ms, 0), p99_ms: '', note: 'one run' });
const second = await run('second', 'print(1)');
rows.push({ case: 'new session from the snapshot (pool empty)', p50_ms: round(second.ms, 0), p99_ms: '', note: 'one run' });

// Warm print(1) in one session.
{
  for (let i = 0; i < 20; i++) await run('cold', 'print(1)');
  const times = [];
  for (let i = 0; i < WARM_RUNS; i++) times.push((await run('cold', 'print(1)')).ms);
  rows.push({
    case: 'warm print(1), one session',
    p50_ms: round(pct(times, 50), 2),
    p99_ms: round(pct(times, 99), 2),
    note: `${WARM_RUNS} runs; goal p50 < 50 ms`,
  });
}

// Memory per kernel: start KERNELS - 2 more sessions (KERNELS in all), RSS delta over all of them.
for (let i = 2; i < KERNELS; i++) await run(`k${i}`, 'print(1)');
const perKernel = (rssMb() - rss0) / KERNELS;

// 20 concurrent executions over 4 warm sessions.
{
  const sessions = ['cold', 'second', ...Array.from({ length: Math.max(0, KERNELS - 2) }, (_, i) => `k${i + 2}`)].slice(0, 4);
  const t0 = performance.now();
  const times = await Promise.all(
    Array.from({ length: 20 }, (_, i) => run(sessions[i % sessions.length], `sum(range(${i} * 10000))`).then((x) => x.ms)),
  );
  const wall = performance.now() - t0;
  rows.push({
    case: `20 concurrent executions over ${sessions.length} sessions`,
    p50_ms: round(pct(times, 50), 1),
    p99_ms: round(pct(times, 99), 1),
    note: `all 20 done in ${round(wall, 0)} ms`,
  });
}
rows.push({
  case: 'memory per kernel (RSS delta / kernels)',
  p50_ms: '',
  p99_ms: '',
  note: `${round(perKernel, 0)} MB each over ${KERNELS} kernels`,
});
await ci.close();

// Data work: pandas on a 10,000-row CSV.
{
  const csv = ['id,city,temp,rain']
    .concat(Array.from({ length: 10_000 }, (_, i) => `${i},c${i % 50},${(i * 7) % 40},${(i * 13) % 100}`))
    .join('\n');
  const describe = "import pandas as pd\ndf = pd.read_csv('/mnt/data/data.csv')\nd = df.describe()\nprint(d.shape)";
  const again = "d = pd.read_csv('/mnt/data/data.csv').describe()\nprint(d.shape)";
  const maxrss = 'import resource\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)';
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(`${tmpdir()}/standin-bench-ci-`);
  writeFileSync(`${dir}/data.csv`, csv);
  // Baseline: a bare python3 process, the same code (its path rewritten), cold process then warm in it.
  const bare = spawnSync(
    '/usr/bin/python3',
    [
      '-c',
      `import time, resource\nt0 = time.perf_counter()\n${describe.replaceAll('/mnt/data', dir)}\nt1 = time.perf_counter()\n` +
        `ws = []\nfor _ in range(20):\n    a = time.perf_counter()\n    ${again.replaceAll('/mnt/data', dir).replace('\n', '\n    ')}\n    ws.append(time.perf_counter() - a)\n` +
        `ws.sort()\nprint('BENCH', (t1 - t0) * 1000, ws[10] * 1000, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1000)`,
    ],
    { encoding: 'utf8' },
  );
  const bareOk = bare.status === 0;
  if (bareOk) {
    const [, first, warm, mem] = bare.stdout.trim().split('\n').pop().split(' ').map(Number);
    rows.push({ case: 'bare python3: import pandas + describe (in the process)', p50_ms: round(first, 0), p99_ms: '', note: 'one run' });
    rows.push({
      case: 'bare python3: describe warm',
      p50_ms: round(warm, 1),
      p99_ms: '',
      note: `median of 20; max RSS ${round(mem, 0)} MB`,
    });
  } else rows.push({ case: 'bare python3 with pandas', p50_ms: '', p99_ms: '', note: 'not measured: /usr/bin/python3 has no pandas' });
  const auto = createCodeInterpreter(() => Date.now(), console, { pool_size: 0 });
  const here = auto.describe();
  await auto.close();
  if (bareOk && here.executor === 'bwrap' && here.packages.includes('pandas')) {
    const bw = createCodeInterpreter(() => Date.now(), console, { executor: 'bwrap', pool_size: 0, memory_mb: 1024, timeout_ms: 120_000 });
    const files = [{ path: '/mnt/data/data.csv', bytes: new TextEncoder().encode(csv) }];
    const t0 = performance.now();
    const first = await bw.execute({ session: 'p', code: describe, files });
    const coldMs = performance.now() - t0;
    if (first.status !== 'ok') throw new Error(first.logs);
    const times = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      await bw.execute({ session: 'p', code: again });
      times.push(performance.now() - t);
    }
    const mem = Number((await bw.execute({ session: 'p', code: maxrss })).logs.trim()) / 1000;
    await bw.close();
    rows.push({
      case: 'bwrap: new kernel + import pandas + describe',
      p50_ms: round(coldMs, 0),
      p99_ms: '',
      note: 'one run: cold start of a kernel with the stack',
    });
    rows.push({
      case: 'bwrap: describe warm',
      p50_ms: round(pct(times, 50), 1),
      p99_ms: round(pct(times, 99), 1),
      note: `20 runs; kernel max RSS ${round(mem, 0)} MB with pandas`,
    });
  } else rows.push({ case: 'bwrap with pandas', p50_ms: '', p99_ms: '', note: 'not measured: bubblewrap or Debian pandas missing' });
  rows.push({
    case: 'pyodide: import pandas + describe',
    p50_ms: '',
    p99_ms: '',
    note: process.env.BENCH_PYODIDE_PACKAGES ? 'see below' : "not measured: Pyodide's wheels cannot be fetched here",
  });
  if (process.env.BENCH_PYODIDE_PACKAGES) {
    const py = createCodeInterpreter(
      () => Date.now(),
      console,
      { executor: 'pyodide', pool_size: 0, memory_mb: 1024, timeout_ms: 300_000, packages: process.env.BENCH_PYODIDE_PACKAGES },
      { cacheDir: `${dir}/cache` },
    );
    const files = [{ path: '/mnt/data/data.csv', bytes: new TextEncoder().encode(csv) }];
    for (const [label, session] of [
      ['first use (download + cache)', 'a'],
      ['new kernel, cached', 'b'],
    ]) {
      const t0 = performance.now();
      const r = await py.execute({ session, code: describe, files });
      if (r.status !== 'ok') throw new Error(r.logs);
      rows.push({ case: `pyodide: ${label}`, p50_ms: round(performance.now() - t0, 0), p99_ms: '', note: 'one run' });
    }
    const times = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      await py.execute({ session: 'b', code: again });
      times.push(performance.now() - t);
    }
    rows.push({ case: 'pyodide: describe warm', p50_ms: round(pct(times, 50), 1), p99_ms: round(pct(times, 99), 1), note: '20 runs' });
    await py.close();
  }
}

// The kernel's WebAssembly gate: listing the wasm binaries of a verified wheel (inflate + SHA-256 of each), once
// per wheel and process, against the SHA-256 check every wheel gets anyway. A wheel larger than pandas' (about
// 17 MB deflated): 8 wasm libraries of 4 MB, half random, half zeros, and 200 modules, by Python's zipfile.
{
  const { mkdtempSync, readFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { createHash } = await import('node:crypto');
  const dir = mkdtempSync(`${tmpdir()}/standin-bench-wheel-`);
  const made = spawnSync(
    '/usr/bin/python3',
    [
      '-c',
      'import os, sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:\n' +
        '    for i in range(8):\n        z.writestr(f"pkg/lib{i}.so", b"\\0asm\\1\\0\\0\\0" + os.urandom(2 << 20) + bytes(2 << 20))\n' +
        '    for i in range(200):\n        z.writestr(f"pkg/m{i}.py", "x = 1\\n" * 500)',
      `${dir}/big.whl`,
    ],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(made.stderr);
  const bytes = readFileSync(`${dir}/big.whl`);
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  // Wall time, and the longest the event loop was held (what Standin's other requests wait at most meanwhile).
  const time = async (f) => {
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    await new Promise((resolve) => setTimeout(resolve, 20)); // the monitor's timer is running before `f` starts
    const t0 = performance.now();
    await f();
    const ms = performance.now() - t0;
    await new Promise((resolve) => setTimeout(resolve, 20)); // the last stall is recorded on the next turn
    h.disable();
    return { ms, stall: h.max / 1e6 };
  };
  const hash = await time(async () => createHash('sha256').update(bytes).digest('hex'));
  const listed = await time(async () => {
    if ((await wasmHashes(bytes)).length !== 8) throw new Error('wasmHashes missed a library');
  });
  const again = await time(() => wasmHashes(bytes));
  const row = (name, t, note) =>
    rows.push({ case: name, p50_ms: round(t.ms, 1), p99_ms: '', note: `${note}; event loop held at most ${round(t.stall, 0)} ms` });
  row(`baseline: SHA-256 of a ${round(bytes.length / 1e6, 1)} MB wheel (the lock file check)`, hash, 'one run, synchronous');
  row("wasm gate: list the wheel's 8 wasm libraries (first time)", listed, 'one run; once per wheel and process');
  row('wasm gate: the same wheel again (remembered)', again, "one run: the archive's hash only");
}

report('code-interpreter', rows, [
  'Per-execution times are the wait of `execute()` (queueing behind the same session included). Numbers on a shared machine are noisy.',
]);
