// What a fault costs the requests it does not match, and what a claim costs the ones it does: GET /v1/models
// on one Standin (SQLite), measured in the same run with no fault (the baseline), with a live fault on
// another path (a request that matches none must pay nothing), and with a fault every request matches (each
// one claims a use in the store: one conditional UPDATE, then the 503). The last row also checks the count:
// the requests that failed are exactly the uses the store counted down.
// Run: npm run build && node bench/faults.mjs   (BENCH_SECONDS to change the default of 3)
import { load, report, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = 20;
const COUNT = 100_000; // the most a fault takes

const standin = await startStandin();
const { url, keys } = standin;
const admin = (method, path, body) =>
  fetch(`${url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${keys.admin}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  }).then(async (r) => {
    const body = await r.json();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(body)}`);
    return body;
  });
const run = () =>
  load({ url: `${url}/v1/models`, headers: { authorization: `Bearer ${keys.platform}` }, connections: CONNECTIONS, duration: DURATION });

try {
  await run(); // warm up
  const baseline = await run();
  await admin('POST', '/faults', { path: '/v1/responses', status: 503, count: COUNT });
  const elsewhere = await run();
  await admin('DELETE', '/faults');
  const fault = await admin('POST', '/faults', { path: '/v1/models', method: 'GET', status: 503, count: COUNT });
  const matching = await run();
  const left = (await admin('GET', `/faults/${fault.id}`)).remaining;
  await admin('DELETE', '/faults');
  await admin('POST', '/faults', { path: '/v1/models', method: 'GET', latency_ms: 1, count: COUNT });
  const delayed = await run();
  await admin('DELETE', '/faults');
  const failing = await load({
    url: `${url}/v1/models`,
    headers: { authorization: 'Bearer sk-wrong-key-0000000000000000000' },
    connections: CONNECTIONS,
    duration: DURATION,
  });
  const rows = [
    { case: 'no fault (baseline)', 'req/s': baseline.rps, 'p50 ms': baseline.p50, 'p99 ms': baseline.p99, failed: baseline.errors },
    { case: 'a fault on another path', 'req/s': elsewhere.rps, 'p50 ms': elsewhere.p50, 'p99 ms': elsewhere.p99, failed: elsewhere.errors },
    {
      case: 'a fault every request matches (claims)',
      'req/s': matching.rps,
      'p50 ms': matching.p50,
      'p99 ms': matching.p99,
      failed: matching.errors,
    },
    {
      case: 'a delay-only fault (1 ms) every request matches',
      'req/s': delayed.rps,
      'p50 ms': delayed.p50,
      'p99 ms': delayed.p99,
      failed: delayed.errors,
    },
    {
      case: 'no fault, a wrong key (the 4xx path)',
      'req/s': failing.rps,
      'p50 ms': failing.p50,
      'p99 ms': failing.p99,
      failed: failing.errors,
    },
  ];
  report('faults', rows, [
    `Another path: ${Math.round((elsewhere.rps / baseline.rps) * 100)} % of the baseline's throughput. ` +
      `Claims: ${Math.round((matching.rps / baseline.rps) * 100)} %. Uses counted down by the store: ${COUNT - left} for ${matching.errors} failed requests (autocannon does not count the up to ${CONNECTIONS} requests in flight when it stops).`,
  ]);
} finally {
  await standin.stop();
}
