// code_interpreter on /v1/responses against the executor alone (the baseline, measured in the same run,
// interleaved in blocks), both on a warm session: wall time per call (p50, p99) and CPU per call of the
// process that drives the executor (Standin for the responses; this process for the executor alone). The
// sandbox's own CPU (the bwrap python3, or Pyodide's worker thread for the baseline) is counted in neither
// for bwrap, so the CPU column compares what Standin adds around the same execution. Built-in model (no
// pacing), SQLite, one process, rate limits at tier 5; the code is `print(1)` in a container named by id.
// Run: npm run build && node bench/responses-code-interpreter.mjs   (BENCH_REQUESTS=200 of each;
// BENCH_EXECUTOR=bwrap|pyodide, default bwrap where it runs here)
import { build } from 'esbuild';
import { apiBench, cpuMs, report } from './lib.mjs';

const N = Number(process.env.BENCH_REQUESTS ?? 200);
const BLOCK = 20;
const ADMIN_KEY = 'sk-admin-bench-code-interpreter-0000000000';

const out = 'node_modules/.cache/standin-bench/code-interpreter-service.mjs';
await build({
  entryPoints: ['src/code-interpreter/service.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: out,
  logLevel: 'warning',
});
const bwrapOut = 'node_modules/.cache/standin-bench/bwrap.mjs';
await build({
  entryPoints: ['src/code-interpreter/bwrap.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: bwrapOut,
  logLevel: 'warning',
});
const { createCodeInterpreter } = await import(`../${out}`);
const { bwrapAvailable } = await import(`../${bwrapOut}`);
const executor = process.env.BENCH_EXECUTOR ?? (bwrapAvailable() ? 'bwrap' : 'pyodide');
const config = { executor, pool_size: 1, timeout_ms: 30_000 };

const alone = createCodeInterpreter(() => Date.now(), console, config);
const { standin, post } = await apiBench({
  adminKey: ADMIN_KEY,
  config: {
    rate_limits: { organizations: { org_demo: { tier: 'tier_5' } } },
    models: { '*': { provider: 'builtin' } },
    code_interpreter: config,
  },
  onStop: () => alone.close(),
});
const auth = { authorization: `Bearer ${standin.keys.platform}` };

// A container with a small file, as a session usually has one.
const container = await post('/v1/containers', { name: 'bench', expires_after: { anchor: 'last_active_at', minutes: 1440 } });
const form = new FormData();
form.append('file', new Blob(['a,b\n1,2\n']), 'data.csv');
await fetch(`${standin.url}/v1/containers/${container.id}/files`, { method: 'POST', headers: auth, body: form });
const files = [{ path: '/mnt/data/data.csv', bytes: new TextEncoder().encode('a,b\n1,2\n') }];

const execute = async () => (await alone.execute({ session: 'bench', code: 'print(1)', files })).logs === '1\n';
const respond = async () => {
  const r = await post('/v1/responses', {
    model: 'gpt-4.1',
    input: 'Run:\n\n```python\nprint(1)\n```',
    tools: [{ type: 'code_interpreter', container: container.id }],
    include: ['code_interpreter_call.outputs'],
  });
  return r.output[0]?.type === 'code_interpreter_call' && r.output[0].outputs?.[0]?.logs === '1\n';
};

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 100) / 100;
};
const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

for (let i = 0; i < 20; i++) {
  await execute();
  await respond();
}
const runs = { execute: { ms: [], cpu: 0 }, respond: { ms: [], cpu: 0 } };
let errors = 0;
for (let b = 0; b < N / BLOCK; b++) {
  // Blocks interleaved, the order flipped every round: neither gets the warmer machine.
  const order = b % 2 ? ['respond', 'execute'] : ['execute', 'respond'];
  for (const name of order) {
    const fn = name === 'execute' ? execute : respond;
    const cpu = name === 'execute' ? selfCpu : () => cpuMs(standin.child.pid);
    const cpu0 = cpu();
    for (let i = 0; i < BLOCK; i++) {
      const t0 = performance.now();
      if (!(await fn())) errors++;
      runs[name].ms.push(performance.now() - t0);
    }
    runs[name].cpu += cpu() - cpu0;
  }
}
await standin.stop();
await alone.close();

const row = (operation, r) => ({
  operation,
  'p50 ms': pct(r.ms, 50),
  'p99 ms': pct(r.ms, 99),
  'CPU ms/call': (r.cpu / r.ms.length).toFixed(2),
  n: r.ms.length,
});
const e = row(`executor alone (${executor}), warm session, print(1) (baseline)`, runs.execute);
const f = row('POST /v1/responses with code_interpreter, warm container (execution + 2 model calls + stored)', runs.respond);
report(
  'responses-code-interpreter',
  [
    e,
    f,
    {
      operation: 'overhead of a code_interpreter response over the executor alone',
      'p50 ms': `${(f['p50 ms'] / e['p50 ms']).toFixed(2)}x (+${(f['p50 ms'] - e['p50 ms']).toFixed(2)})`,
      'p99 ms': `${(f['p99 ms'] / e['p99 ms']).toFixed(2)}x`,
      'CPU ms/call': `+${(f['CPU ms/call'] - e['CPU ms/call']).toFixed(2)}`,
      n: '-',
    },
  ],
  [
    `Built-in model, SQLite, one process, tier 5; executor ${executor}; ${N} of each after 20 warm-up pairs, in interleaved blocks of ${BLOCK}.`,
    'CPU: Standin process for the responses, this process for the executor alone; the sandbox itself in neither (bwrap).',
    ...(errors ? [`errors: ${errors}`] : []),
  ],
);
process.exit(errors ? 1 : 0);
