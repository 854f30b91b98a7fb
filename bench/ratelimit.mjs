// Rate-limit decisions per second and the latency each decision adds, in-process and on Redis, with
// baselines measured in the same run:
//   in-process: an empty async call (what a route pays without a limiter) vs admit() / admit()+release();
//   Redis:      a trivial EVALSHA returning 1 and PING, at the same concurrency, on the same connection kind.
// Every decision is a real one: 1,000 organizations × 3 models of the built-in catalog (tier_1..tier_5),
// RPM/RPD/TPM/TPD buckets, the monthly quota and the ramp detector, all checked atomically.
// Run: node bench/ratelimit.mjs   (BENCH_REDIS_URL, BENCH_DECISIONS to change the defaults)
import { build } from 'esbuild';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { report } from './lib.mjs';

const DECISIONS = Number(process.env.BENCH_DECISIONS ?? 300_000);
const REDIS_DECISIONS = Number(process.env.BENCH_REDIS_DECISIONS ?? 200_000);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.STANDIN_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

// Bundle Standin's limiter (TypeScript) for this run; packages stay external, resolved from the repo.
await build({
  stdin: {
    contents: `export * from './src/ratelimit/service.ts'; export * from './src/ratelimit/memory.ts'; export * from './src/ratelimit/redis.ts'; export * from './src/ratelimit/catalog.ts'; export * from './src/ratelimit/testing.ts'; export { createClock } from './src/core/clock.ts';`,
    resolveDir: process.cwd(),
    loader: 'ts',
  },
  outfile: 'dist/bench-ratelimit.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
const rl = await import(new URL('../dist/bench-ratelimit.mjs', import.meta.url).href);

const MODELS = ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1'];
const TIERS = ['tier_1', 'tier_2', 'tier_3', 'tier_4', 'tier_5'];
const ORGS = 1_000;

/** The built-in catalog with 1,000 organizations spread over the paid tiers and unlimited monthly usage. */
function benchConfig() {
  const organizations = {};
  for (let i = 0; i < ORGS; i++) organizations[`org_${i}`] = { tier: TIERS[i % TIERS.length], usage_limit_usd: 1e12 };
  return rl.mergeConfig(rl.defaultConfig(), { organizations });
}

const payers = Array.from({ length: ORGS }, (_, i) => ({ organizationId: `org_${i}`, projectId: `proj_${i}` }));
const input = (i) => ({ model: MODELS[i % MODELS.length], maxTokens: 64, inputChars: 400 });

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const us = (ms) => Math.round(ms * 1000 * 100) / 100;

/** Sequential decisions: throughput and per-call latency (µs), sampled every call. */
async function sequential(n, fn) {
  for (let i = 0; i < Math.min(20_000, n); i++) await fn(i); // warm up (JIT, template cache)
  const lat = new Float64Array(n);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await fn(i);
    lat[i] = performance.now() - s;
  }
  const total = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  lat.sort();
  return {
    perSec: Math.round(n / (total / 1000)),
    mean: us(total / n),
    p50: us(pct(lat, 50)),
    p99: us(pct(lat, 99)),
    cpu: us((cpu.user + cpu.system) / 1000 / n),
  };
}

/** `concurrency` callers in flight at once (what a busy server does); throughput and latency per decision. */
let serverUsec = null;
async function concurrent(n, concurrency, fn) {
  const lat = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const s = performance.now();
      await fn(i);
      lat.push(performance.now() - s);
    }
  };
  const cpu0 = process.cpuUsage();
  const server0 = serverUsec ? await serverUsec() : 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const total = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const server = serverUsec ? (await serverUsec()) - server0 : null;
  lat.sort((a, b) => a - b);
  return {
    perSec: Math.round(n / (total / 1000)),
    mean: us(lat.reduce((a, b) => a + b, 0) / lat.length),
    p50: us(pct(lat, 50)),
    p99: us(pct(lat, 99)),
    cpu: us((cpu.user + cpu.system) / 1000 / n),
    server: server === null ? '' : Math.round((server / n) * 100) / 100,
  };
}

const rows = [];
const row = (backend, what, r) =>
  rows.push({
    backend,
    what,
    'decisions/s': r.perSec,
    'mean µs': r.mean,
    'p50 µs': r.p50,
    'p99 µs': r.p99,
    'client CPU µs': r.cpu,
    'Redis CPU µs': r.server ?? '',
  });

const ONLY = process.env.BENCH_ONLY; // 'memory' or 'redis' to run one half

// ---- in-process ----
if (ONLY !== 'redis') {
  const clock = rl.createClock();
  const limiter = rl.createRateLimiter({ backend: rl.createMemoryBackend(clock), clock, config: benchConfig() });
  const noop = async () => ({ headers: {} });
  const base = await sequential(DECISIONS, () => noop());
  row('none', 'baseline: empty async call', base);
  let refused = 0;
  const admit = await sequential(DECISIONS, (i) => limiter.admit(null, payers[i % ORGS], input(i)).catch(() => refused++));
  row('in-process', 'admit()', admit);
  const both = await sequential(DECISIONS, async (i) => {
    const a = await limiter.admit(null, payers[i % ORGS], input(i)).catch(() => null);
    if (a) await a.release({ inputTokens: 100, outputTokens: 20 });
    else refused++;
  });
  row('in-process', 'admit() + release()', both);
  if (refused) console.log(`(in-process: ${refused} decisions were refusals — also decisions)`);
}

// ---- Redis ----
if (ONLY !== 'memory') {
  const prefix = `standin-bench:${randomUUID()}:`;
  const backend = rl.createRedisBackend(REDIS_URL, { prefix });
  // Baselines on a connection of their own, with ioredis auto-pipelining (their best case).
  const redis = new Redis(REDIS_URL, { enableAutoPipelining: true });
  redis.defineCommand('benchOne', { numberOfKeys: 1, lua: 'return 1' });
  const clock = rl.createClock();
  const limiter = rl.createRateLimiter({ backend, clock, config: benchConfig() });
  await redis.ping();
  // The Redis process's own CPU time (INFO cpu): what each decision costs the server, whatever else runs on the machine.
  serverUsec = async () => {
    const text = await redis.info('cpu');
    return (Number(/used_cpu_sys:([\d.]+)/.exec(text)[1]) + Number(/used_cpu_user:([\d.]+)/.exec(text)[1])) * 1e6;
  };
  for (const c of [1, 64, 512]) {
    const n = c === 1 ? Math.min(20_000, REDIS_DECISIONS) : REDIS_DECISIONS;
    row('redis', `baseline: PING, ${c} in flight`, await concurrent(n, c, () => redis.ping()));
    row('redis', `baseline: EVALSHA 'return 1', ${c} in flight`, await concurrent(n, c, (i) => redis.benchOne(`${prefix}x${i % 100}`)));
    const r = await concurrent(n, c, (i) => limiter.admit(null, payers[i % ORGS], input(i)).catch(() => null));
    row('redis', `admit(), ${c} in flight`, r);
  }
  const both = await concurrent(REDIS_DECISIONS / 2, 512, async (i) => {
    const a = await limiter.admit(null, payers[i % ORGS], input(i)).catch(() => null);
    if (a) await a.release({ inputTokens: 100, outputTokens: 20 });
  });
  row('redis', 'admit() + release(), 512 in flight', both);
  await backend.reset();
  await backend.close();
  redis.disconnect();
}

report('ratelimit', rows, [
  `Node ${process.version}, ${DECISIONS} in-process and ${REDIS_DECISIONS} Redis decisions per row; Redis at ${REDIS_URL.replace(/\/\/[^@]*@/, '//')} (loopback).`,
  'Targets: in-process under 20 µs per decision; Redis at least 20,000 decisions/s.',
  "mean µs = wall time / decisions (includes time the process was descheduled); client CPU µs = this process's CPU time / decisions; Redis CPU µs = the Redis process CPU time (INFO cpu) / decisions, so 1e6 / Redis CPU µs is what one Redis core sustains when it gets a whole core.",
  'Redis: decisions requested in one event-loop turn go in one script call (at most 64), each decided atomically and all or nothing in turn, exactly as if sent one by one; a full batch is sent at once. The baselines use ioredis auto-pipelining.',
  `Load average during the run: ${(await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} on ${(await import('node:os')).cpus().length} cores (shared machine).`,
]);
