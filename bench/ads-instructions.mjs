// Instructions a request, counted: the ads API's retrieve and list of 20 (BENCH_INSTR_OPS=…,create adds
// the create, not run for docs/operations.md) in Standin and in the bare Fastify route of bench/ads.mjs
// answering the same bodies, each process run under valgrind's callgrind. Instruction counts do not move
// with the machine's load as CPU time does, so one run on a busy shared machine compares two builds, or
// Standin and the bare route, to a few per cent.
//
// Each process serves WARMUP requests of every operation first (V8 optimizes what turns hot), then per
// operation: a window of no requests (IDLE_MS), then WINDOWS windows of N requests at C connections, each
// window's counts zeroed before (`callgrind_control -z`) and dumped after (`callgrind_control -d`), so the
// start and the warm-up are left out. Work a process does by the clock (Standin's change poll every 250
// ms, its job loop every second) runs ~50 times slower under valgrind, so the idle window's count (bar a
// collection or a compile that fell in it) is taken off each window in proportion to its wall time. Every
// thread counts, as CPU time does (V8's compiler and GC helpers too); the kernel's part of a system call
// does not. An operation's figure, the request path, is its median window without the GC and V8's
// compilers, which come in bursts: the compilers, still at work this soon after a start, are left out (a
// server's steady state has none of it); the GC is shown apart, in that window and as the mean over the
// windows (an old-generation collection falls in one window of several), and added back to the mean.
//
// With --perf-basic-prof, V8 names its code in /tmp/perf-<pid>.map; each function's own count (self) is
// named from there, placed through the bundle's source maps and put to the stages of bench/profile.mjs
// (a JavaScript function by its source; the rest by what it is: V8's builtins, the GC, Node's C++, libc).
// A builtin (an inline cache's miss, JSON.stringify) counts as itself, not for its caller. The tables:
// instructions a request by stage, each build and the bare route; then the functions whose own count is
// largest in the first build.
//
// Run: npm run build && node bench/ads-instructions.mjs [dist/main.js [another build's dist/main.js …]]
//   BENCH_INSTR_N=1000 BENCH_INSTR_WINDOWS=3 BENCH_INSTR_WARMUP=4000 BENCH_INSTR_CONNECTIONS=10
//   BENCH_INSTR_OPS=retrieve,list BENCH_INSTR_IDLE_MS=10000 BENCH_INSTR_TOP=25
//   BENCH_INSTR_KEEP=1 (keep the callgrind files, named in the output). Needs valgrind (apt-get install
//   valgrind); about 15 minutes for two builds and the bare route on a 2-core machine.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { bareAdsTargets, report, seedAdsTargets, startBaseline, startStandin } from './lib.mjs';
import { stageOf } from './profile.mjs';

const N = Number(process.env.BENCH_INSTR_N ?? 1000);
const WINDOWS = Number(process.env.BENCH_INSTR_WINDOWS ?? 3);
const WARMUP = Number(process.env.BENCH_INSTR_WARMUP ?? 4000);
const CONNECTIONS = Number(process.env.BENCH_INSTR_CONNECTIONS ?? 10);
const OPS = (process.env.BENCH_INSTR_OPS ?? 'retrieve,list').split(',');
const TOP = Number(process.env.BENCH_INSTR_TOP ?? 25);
const IDLE_MS = Number(process.env.BENCH_INSTR_IDLE_MS ?? 10000);
const mains = process.argv.length > 2 ? process.argv.slice(2) : ['dist/main.js'];

const main = process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1]);
if (main && spawnSync('valgrind', ['--version']).status !== 0) {
  console.log('bench/ads-instructions: valgrind is not installed (apt-get install valgrind); skipped.');
  process.exit(0);
}

const outDir = main ? mkdtempSync(join(tmpdir(), 'standin-callgrind-')) : '';
const wrap = (name) => [
  'valgrind',
  '--tool=callgrind',
  '--smc-check=all-non-file',
  `--callgrind-out-file=${outDir}/${name}.%p`,
  `--log-file=${outDir}/${name}.%p.log`,
  '--dump-line=no',
];
const NODE_FLAGS = ['--perf-basic-prof', '--interpreted-frames-native-stack'];

const amount = (target, n) =>
  new Promise((res, rej) =>
    autocannon({ ...target, connections: CONNECTIONS, amount: n, timeout: 120 }, (err, r) =>
      err ? rej(err) : res(r.errors + r.timeouts + r.non2xx),
    ),
  );
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Zeroes `pid`'s counters, runs `work`, dumps them: the dump's file, and the window's wall ms. */
async function window(pid, work) {
  execFileSync('callgrind_control', ['-z', String(pid)], { stdio: 'ignore' });
  const before = new Set(readdirSync(outDir));
  const t0 = performance.now();
  const errors = await work();
  const ms = performance.now() - t0;
  execFileSync('callgrind_control', ['-d', String(pid)], { stdio: 'ignore' });
  for (let i = 0; i < 600; i++) {
    const file = readdirSync(outDir).find((f) => !before.has(f) && !f.endsWith('.log') && f.includes(`.${pid}.`));
    if (file) {
      await sleep(200); // the dump is written by then; callgrind_control returns once it is
      return { file: join(outDir, file), ms, errors };
    }
    await sleep(100);
  }
  throw new Error(`no callgrind dump for ${pid}`);
}

/**
 * A callgrind file's own (self) instructions by function, with the object (binary, library) each is in.
 * Names compressed as `(id) name` are resolved; a call's cost line (after `calls=`) is the callee's
 * inclusive count and is not the caller's own.
 */
export function selfCounts(file) {
  const text = readFileSync(file, 'utf8');
  const names = { fn: new Map(), ob: new Map() };
  const named = (kind, v) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(v);
    if (!m) return v;
    if (m[2] !== undefined) names[kind].set(m[1], m[2]);
    return names[kind].get(m[1]);
  };
  const self = new Map();
  let ob = '';
  let fn = '';
  let callLine = false;
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('ob=')) ob = named('ob', line.slice(3));
    else if (line.startsWith('fn=')) fn = named('fn', line.slice(3));
    else if (line.startsWith('cob=')) named('ob', line.slice(4));
    else if (line.startsWith('cfn=')) named('fn', line.slice(4));
    else if (line.startsWith('calls=')) callLine = true;
    else if (/^[0-9+\-*]/.test(line)) {
      const parts = line.split(' ');
      const cost = Number(parts[parts.length - 1]);
      if (callLine) callLine = false;
      else {
        const key = `${ob}\t${fn}`;
        self.set(key, (self.get(key) ?? 0) + cost);
        total += cost;
      }
    } else if (line.startsWith('summary:') || line.startsWith('totals:')) {
      total = Number(line.split(' ')[1]);
    }
  }
  return { self, total };
}

/** V8's code map of a process (--perf-basic-prof): sorted [start, end, name]. */
export function perfMap(pid) {
  let text = '';
  try {
    text = readFileSync(`/tmp/perf-${pid}.map`, 'utf8');
  } catch {
    return [];
  }
  const entries = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (m) entries.push([parseInt(m[1], 16), parseInt(m[1], 16) + parseInt(m[2], 16), m[3]]);
  }
  return entries.sort((a, b) => a[0] - b[0]);
}

function lookup(entries, addr) {
  let lo = 0;
  let hi = entries.length - 1;
  let found;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid][0] <= addr) {
      found = entries[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  // The latest code at an address wins (V8 reuses code space): a later line with the same start is newer,
  // and the sort is stable.
  return found && addr < found[1] ? found[2] : undefined;
}

const sourceMaps = new Map();
function originalSource(url, line, column) {
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  if (!sourceMaps.has(path)) {
    let map = null;
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      map = null;
    }
    sourceMaps.set(path, map);
  }
  const map = sourceMaps.get(path);
  const e = map?.findEntry(line - 1, column - 1);
  return e?.originalSource ? { source: e.originalSource, line: e.originalLine + 1 } : { source: path, line };
}

/** The name and stage of a function callgrind counted: JIT code through V8's map, the rest by symbol. */
export function classify(ob, fn, code) {
  const addr = /^0x[0-9a-f]+$/i.test(fn) ? parseInt(fn, 16) : undefined;
  const jit = addr !== undefined ? lookup(code, addr) : undefined;
  if (jit) {
    // "JS:*name file:///…/chunk.js:12:34", "JS:^name …" (baseline), "JS:~name …" (interpreted),
    // "Builtin:Name", "BytecodeHandler:Name", "RegExp:…", "Stub:…"
    const m = /^JS:([*^~+]?)(\S*) (.+):(\d+):(\d+)$/.exec(jit);
    if (m) {
      const at = originalSource(m[3], Number(m[4]), Number(m[5]));
      const short = at.source.replace(/^.*?node_modules\//, '').replace(/^(\.\.\/)+/, '');
      const stage = at.source.startsWith('node:') ? 'node (http, net, streams)' : stageOf(at.source, m[2]);
      return { name: `${m[2] || '(anonymous)'} ${short}:${at.line}`, stage: stage ?? 'other dependencies' };
    }
    if (/^JS:/.test(jit)) return { name: jit, stage: 'other dependencies' };
    if (/^RegExp:/.test(jit)) return { name: jit, stage: 'V8: regular expressions' };
    return { name: jit, stage: 'V8: builtins' };
  }
  if (addr !== undefined) return { name: `${fn} (JIT, unnamed)`, stage: 'V8: JIT code, unnamed' };
  const obj = ob.replace(/^.*\//, '');
  if (/^Builtins_/.test(fn)) {
    if (/Handler/.test(fn) || /InterpreterEntryTrampoline/.test(fn)) return { name: fn, stage: 'V8: interpreter' };
    if (/RegExp/.test(fn)) return { name: fn, stage: 'V8: regular expressions' };
    return { name: fn, stage: 'V8: builtins' };
  }
  if (/Heap|Scaveng|MarkCompact|Sweeper|Evacuat|Marking|GCTracer|MemoryAllocator|PagedSpace|Worklist|Concurrent(Marking|Sweep)/.test(fn))
    return { name: fn, stage: 'GC' };
  if (/sqlite3/i.test(fn + obj)) return { name: fn, stage: 'store' };
  if (
    /v8::internal::(compiler|maglev|baseline)|Turbofan|OptimizingCompile|v8::internal::Compiler|Parser|BytecodeGenerator|Zone::|interpreter::Bytecode/.test(
      fn,
    )
  )
    return { name: fn, stage: 'V8: compilers' };
  if (/^v8::|^Builtin_|^v8_|Runtime_/.test(fn)) return { name: fn, stage: 'V8: runtime (ICs, objects, strings)' };
  if (/^node::|^llhttp|^napi|better_sqlite3|^Statement|^Database/.test(fn) || /better_sqlite3/.test(obj))
    return { name: fn, stage: /sqlite/i.test(fn + obj) ? 'store' : 'node C++ (http parser, streams, napi)' };
  if (/^sqlite3/.test(fn)) return { name: fn, stage: 'store' };
  if (/^uv_|^uv__/.test(fn)) return { name: fn, stage: 'libuv' };
  if (/libc|ld-linux|libstdc|libm\b|libpthread/.test(obj)) return { name: `${fn} (${obj})`, stage: 'libc, kernel calls' };
  if (obj === 'node') return { name: fn, stage: 'V8, node: other' };
  return { name: `${fn} (${obj})`, stage: 'other native' };
}

/** Stages that come in bursts rather than with each request: kept out of the idle work, counted apart. */
const BURSTS = new Set(['GC', 'V8: compilers']);

/**
 * A dump's instructions a request by stage and by function. The idle window's work by the clock (its
 * stages but the bursts: a collection or a compile that happened to fall in it is not work of every
 * second) is taken off in proportion to the windows' wall time. `total`: every stage but V8's compilers,
 * which are still at work this soon after a start (a few thousand requests under valgrind), and not a
 * cost of a request in a server's steady state (reported apart, `compilers`).
 */
function perRequest(pid, measured, idle, n) {
  const code = perfMap(pid);
  const m = selfCounts(measured.file);
  const i = selfCounts(idle.file);
  const scale = measured.ms / idle.ms;
  const byStage = new Map();
  const byFn = new Map();
  const add = (map, k, v) => map.set(k, (map.get(k) ?? 0) + v);
  let idleWork = 0;
  for (const [key, cost] of i.self) {
    const [ob, fn] = key.split('\t');
    if (!BURSTS.has(classify(ob, fn, code).stage)) idleWork += cost;
  }
  for (const [key, cost] of m.self) {
    const [ob, fn] = key.split('\t');
    const c = classify(ob, fn, code);
    const own = (cost - (BURSTS.has(c.stage) ? 0 : (i.self.get(key) ?? 0) * scale)) / n;
    add(byStage, c.stage, own);
    add(byFn, c.name, own);
  }
  const compilers = byStage.get('V8: compilers') ?? 0;
  const gc = byStage.get('GC') ?? 0;
  const all = [...byStage.values()].reduce((a, b) => a + b, 0);
  for (const name of [...byFn.keys()]) if (BURSTS.has(classify('', name, []).stage)) byFn.delete(name);
  return { total: all - compilers - gc, compilers, gc, idlePerRequest: (idleWork * scale) / n, ms: measured.ms, byStage, byFn };
}

/**
 * Measures one process: every op warmed up first (V8 optimizes the request path they share), then for each
 * op an idle window and WINDOWS windows of N requests. The op's figure is its median window (one window
 * may hold an old-generation collection or a late optimization; the mean of the windows is given beside).
 */
async function measureProcess(pid, targets) {
  const out = {};
  const ops = OPS.filter((op) => targets[op]);
  for (const op of ops) await amount(targets[op], WARMUP);
  await sleep(3000); // what the warm-up left to V8's compiler threads and the GC
  for (const op of ops) {
    // The idle window first: right after a measured one, it would count what that left running.
    const idle = await window(pid, () => sleep(IDLE_MS).then(() => 0));
    const windows = [];
    for (let w = 0; w < WINDOWS; w++) {
      const measured = await window(pid, () => amount(targets[op], N));
      windows.push({ ...perRequest(pid, measured, idle, N), errors: measured.errors });
    }
    const sorted = [...windows].sort((a, b) => a.total - b.total);
    out[op] = {
      ...sorted[Math.floor(sorted.length / 2)],
      totals: windows.map((w) => w.total),
      mean: windows.reduce((n, w) => n + w.total, 0) / windows.length,
      compilersMean: windows.reduce((n, w) => n + w.compilers, 0) / windows.length,
      gcMean: windows.reduce((n, w) => n + w.gc, 0) / windows.length,
      errors: windows.reduce((n, w) => n + w.errors, 0),
    };
  }
  return out;
}

async function run() {
  const columns = {};
  const processes = [];
  try {
    let seeded;
    let seededTargets;
    for (const [i, main] of mains.entries()) {
      const name = mains.length > 1 ? `standin ${String.fromCharCode(65 + i)}` : 'standin';
      const s = await startStandin({ main: resolve(main), wrap: wrap(`standin${i}`), env: { BENCH_NODE_ARGS: NODE_FLAGS.join(' ') } });
      processes.push(s);
      const { targets, bodies } = await seedAdsTargets(s);
      seeded ??= bodies;
      seededTargets ??= targets;
      columns[name] = await measureProcess(s.child.pid, targets);
      await s.stop();
    }
    const b = await startBaseline(seeded, NODE_FLAGS, wrap('bare'));
    processes.push(b);
    columns.bare = await measureProcess(b.child.pid, bareAdsTargets(b.url, seededTargets));
    await b.stop();
  } finally {
    for (const p of processes) await p.stop();
  }

  const k = (x) => (Math.abs(x) >= 1000 ? `${(x / 1000).toFixed(1)}k` : x.toFixed(0));
  const names = Object.keys(columns);
  for (const op of OPS) {
    const stages = [...new Set(names.flatMap((n) => [...(columns[n][op]?.byStage.keys() ?? [])]))];
    stages.sort((a, b) => (columns[names[0]][op].byStage.get(b) ?? 0) - (columns[names[0]][op].byStage.get(a) ?? 0));
    const rows = stages
      .map((stage) => ({ stage, ...Object.fromEntries(names.map((n) => [n, k(columns[n][op].byStage.get(stage) ?? 0)])) }))
      .filter((r) => !BURSTS.has(r.stage) && names.some((n) => Math.abs(columns[n][op].byStage.get(r.stage) ?? 0) >= 500));
    const row = (stage, f) => rows.push({ stage, ...Object.fromEntries(names.map((n) => [n, f(columns[n][op])])) });
    row('**the request path** (GC and V8: compilers apart)', (c) => `**${k(c.total)}**`);
    row('GC, this window', (c) => k(c.gc));
    row('GC, mean of the windows', (c) => k(c.gcMean));
    row('**with GC** (mean of the windows)', (c) => `**${k(c.total + c.gcMean)}**`);
    row('V8: compilers, mean of the windows (left out)', (c) => k(c.compilersMean));
    rows.push({ stage: 'idle work taken off, a request', ...Object.fromEntries(names.map((n) => [n, k(columns[n][op].idlePerRequest)])) });
    const first = names[0];
    const bare = columns.bare[op];
    const notes = [
      `${op}: instructions a request (callgrind), the median of ${WINDOWS} windows of ${N} requests at ${CONNECTIONS} connections, after ${WARMUP} of warm-up of each operation; ` +
        names.map((n) => `${n} ${(columns[n][op].total / 1000).toFixed(1)}k`).join(', ') +
        `; ${names
          .filter((n) => n !== 'bare')
          .map(
            (n) =>
              `${n} / bare = ${(columns[n][op].total / bare.total).toFixed(2)} (with GC ${((columns[n][op].total + columns[n][op].gcMean) / (bare.total + bare.gcMean)).toFixed(2)})`,
          )
          .join(', ')}.` +
        ` Windows (k instructions a request): ${names.map((n) => `${n} ${columns[n][op].totals.map((t) => (t / 1000).toFixed(1)).join(' / ')} (mean ${(columns[n][op].mean / 1000).toFixed(1)})`).join('; ')}.` +
        ` Errors: ${names.map((n) => columns[n][op].errors).join(' / ')}.`,
    ];
    report(`ads-instructions-${op}`, rows, notes);
    const fns = [...columns[first][op].byFn.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP);
    report(
      `ads-instructions-${op}-functions`,
      fns.map(([fn]) => ({ function: fn, ...Object.fromEntries(names.map((n) => [n, k(columns[n][op].byFn.get(fn) ?? 0)])) })),
      [`${op}: the ${TOP} functions with the largest own count a request in ${first}.`],
    );
  }
  if (process.env.BENCH_INSTR_KEEP) console.log(`\ncallgrind files: ${outDir}`);
  else {
    rmSync(outDir, { recursive: true, force: true });
    // V8's code maps (--perf-basic-prof), read above.
    for (const p of processes) rmSync(`/tmp/perf-${p.child.pid}.map`, { force: true });
  }
}

if (main) await run();
