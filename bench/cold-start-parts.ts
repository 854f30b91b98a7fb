// One cold start taken apart, for bench/cold-start.mjs: bundled with the server's dependencies inlined (as an
// ES module, without the code cache dist/main.js starts with), it times each step of what `standin serve`
// does and prints one JSON line. Usage (after bundling): node parts.js <data folder>
import { get } from 'node:http';
import { tuneV8ForStart } from '../src/core/v8-start.js';

// As src/start.ts does before it loads Standin (the instance's listen ends it).
tuneV8ForStart();
const { isSeeded, seedDemo, readSettings, createStandin, modules, openStore, migrate } = await import('./cold-start-parts-load.js');

// Evaluated once every import above is: node's own start plus loading and evaluating the bundle.
const loaded = performance.now();
const data = process.argv[2];
// Wall time, and this process's CPU time (every thread): on a shared machine the CPU time is the steadier.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const parts: Record<string, number> = { 'node start + bundle load': loaded };
const cpu: Record<string, number> = { 'node start + bundle load': cpuMs() };
let last = loaded;
let lastCpu = cpu['node start + bundle load'];
const mark = (name: string) => {
  const now = performance.now();
  const nowCpu = cpuMs();
  parts[name] = now - last;
  cpu[name] = nowCpu - lastCpu;
  last = now;
  lastCpu = nowCpu;
};

const store = openStore({ dataDir: data });
mark('store open');
await migrate(store, modules);
mark('migrations');
await store.close();
last = performance.now();
lastCpu = cpuMs();
const { settings } = readSettings(['--data', data, '--port', '0', '--log-level', 'error'], {});
const standin = await createStandin(settings);
mark('modules, routes, app ready (store reopened, migrations checked again)');
if (!(await isSeeded(standin.ctx))) await seedDemo(standin.ctx, standin.modules);
mark('demo seed (or the check that it is done)');
const url = await standin.listen();
mark('listen (and workers start)');
// node:http, not fetch: fetch's first call loads undici's internals, a cost of this client, not of Standin.
const status = await new Promise<number | undefined>((resolve, reject) =>
  get(`${url}/healthz`, (res) => {
    res.resume();
    resolve(res.statusCode);
  }).on('error', reject),
);
if (status !== 200) throw new Error(`/healthz answered ${status}`);
mark('first request (/healthz)');
parts['total to first 200'] = performance.now();
cpu['total to first 200'] = cpuMs();
// Printed before the stop: only the start is measured, and the data folder is kept for the next probe.
process.stdout.write(JSON.stringify({ wall: parts, cpu }) + '\n', () => process.exit(0));
