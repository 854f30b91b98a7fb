// Cold start: process start to the first 200, on a fresh data folder and an existing one, `standin exec --
// true` end to end, and what each part of a start costs, against node itself and a bare Fastify server
// started and asked in the same run. Run: npm run build && node bench/cold-start.mjs
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { serverBundle, serverSplitting } from '../scripts/bundle-options.mjs';
import { report, startBaseline, startStandin } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

// The parts probe is an ES module bundle (split, its chunks beside it), beside the repository's node_modules
// (the native addons stay external). It has no code cache: its first stage is the parse and compile a start
// pays without dist/standin.cjs.cache (src/core/code-cache.ts); the end-to-end figures below run dist/main.js.
const probeDir = 'bench/results/cold-start-parts';
rmSync(probeDir, { recursive: true, force: true });
mkdirSync(probeDir, { recursive: true });
const probe = `${probeDir}/parts.js`;
await build({
  entryPoints: { parts: 'bench/cold-start-parts.ts' },
  outdir: probeDir,
  ...serverBundle,
  ...serverSplitting,
  logLevel: 'warning',
});
// The schema a fresh folder gets at once (src/store/fresh-schema.ts) sits beside the bundle, as in dist/.
copyFileSync('dist/fresh-schema.json', `${probeDir}/fresh-schema.json`);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// Each measure gives wall time and the CPU time of the processes measured (user + system, all threads):
// on a shared machine the CPU time is the steadier of the two.
/** A running process's CPU time so far, ms (Linux /proc; clock ticks of 10 ms). */
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
/** Runs node with `args` to its end under bash, whose `times` reports the CPU time of its children: { ms, cpu }. */
const timedRun = (args, env = {}) =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    const line = [process.execPath, ...args].map((a) => `'${a}'`).join(' ');
    const child = spawn('bash', ['-c', `${line} >/dev/null || exit 1; times`], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${args.join(' ')} failed`));
      // `times`: the shell's own user and system time, then its children's (`0m0.412s 0m0.061s`).
      const [user, system] = out
        .trim()
        .split('\n')
        .pop()
        .split(' ')
        .map((t) => {
          const m = /(\d+)m([\d.]+)s/.exec(t);
          return (Number(m[1]) * 60 + Number(m[2])) * 1000;
        });
      resolve({ ms, cpu: user + system });
    });
  });
const run = (args, env = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited with ${code}`))));
  });
const firstOk = async (url) => {
  const r = await fetch(`${url}/healthz`).catch(() => null);
  if (r?.status !== 200 && (await fetch(url).catch(() => null))?.status !== 200) throw new Error(`${url} did not answer 200`);
};

const measures = {
  'node -e 0 (node itself)': () => timedRun(['-e', '0']),
  'bare Fastify: start → first 200': async () => {
    const t0 = performance.now();
    const b = await startBaseline();
    await firstOk(`${b.url}/item`);
    const ms = performance.now() - t0;
    const cpu = cpuOf(b.child.pid);
    await b.stop();
    return { ms, cpu };
  },
  'standin serve, fresh folder: start → first 200': async () => serveToFirst200(),
  // The first start after an install or a build: Node's compile cache (22.1 and later, src/start.ts) is empty.
  'standin serve, fresh folder, empty compile cache': async () => serveToFirst200(undefined, { NODE_COMPILE_CACHE: emptyCache() }),
  'standin serve, existing folder: start → first 200': async () => serveToFirst200(existing),
  'standin exec -- true (to its exit)': () => timedRun(['dist/main.js', 'exec', '--', 'true'], { STANDIN_LOG_LEVEL: 'error' }),
};

let existing;
const emptyCache = () => mkdtempSync(join(tmpdir(), 'standin-compile-cache-'));
async function serveToFirst200(data, env = {}) {
  const t0 = performance.now();
  const s = await startStandin({ ...(data ? { data } : {}), env });
  await firstOk(s.url);
  const ms = performance.now() - t0;
  const cpu = cpuOf(s.child.pid);
  await s.stop();
  existing ??= s.data;
  return { ms, cpu };
}

const times = Object.fromEntries(Object.keys(measures).map((k) => [k, []]));
const parts = { fresh: [], existing: [] };
for (let round = 0; round < ROUNDS; round++) {
  // Rounds alternate every measure, so a busy moment of the machine falls on all of them alike.
  for (const [name, fn] of Object.entries(measures)) times[name].push(await fn());
  const folder = mkdtempSync(join(tmpdir(), 'standin-cold-'));
  parts.fresh.push(JSON.parse(await run([probe, folder])));
  parts.existing.push(JSON.parse(await run([probe, folder])));
  rmSync(folder, { recursive: true, force: true });
}
if (existing) rmSync(existing, { recursive: true, force: true });

const ms = (x) => Math.round(x);
report(
  'cold-start',
  Object.entries(times).map(([what, xs]) => ({
    what,
    'median ms': ms(median(xs.map((x) => x.ms))),
    'min ms': ms(Math.min(...xs.map((x) => x.ms))),
    'max ms': ms(Math.max(...xs.map((x) => x.ms))),
    'median CPU ms': ms(median(xs.map((x) => x.cpu))),
  })),
  [
    `${ROUNDS} rounds, the measures alternating. Wall time from spawning the process to the first 200 on /healthz (the bare Fastify server: its one route), SQLite; exec and node -e 0 to their exit. CPU: the process's user + system time over the same span (10 ms ticks; exec: Standin's process and the command).`,
  ],
);
const names = Object.keys(parts.fresh[0].wall);
console.log(`Node ${process.version}${process.version < 'v22.1' ? ': no compile cache' : ''}.`);
const med = (list, kind, part) => ms(median(list.map((p) => p[kind][part])));
report(
  'cold-start-parts',
  names.map((part) => ({
    part,
    'fresh folder ms': med(parts.fresh, 'wall', part),
    'fresh folder CPU ms': med(parts.fresh, 'cpu', part),
    'existing folder ms': med(parts.existing, 'wall', part),
    'existing folder CPU ms': med(parts.existing, 'cpu', part),
  })),
  [
    `Medians of ${ROUNDS} starts of bench/cold-start-parts.ts (bundled like dist/main.js), each step timed in the process: wall time, and the process's CPU time (all its threads; steadier than wall time on a shared machine). The first row is from the process's time origin. Steps run one after another as \`standin serve\` runs them, except that the store is opened and migrated once on its own before the app is built (which opens it again).`,
  ],
);
