// What a large file read in one system call does to the server's thread (src/core/file-slices.ts). A
// worker thread reads a file of --mb MiB (default 800, about a saved index of a million chunks; written
// once, then in the page cache) into new memory, FILE_SLICE at a time now against 16 MiB at a time (stop
// 80's index-file.ts); the main thread, idle but for a 5 ms event-loop monitor (as a server waiting for
// requests), records its worst delay, and a busy loop in another process keeps the other core busy (an
// instance's searches, an ingestion). Rounds alternate the sizes. Then the same file read by another process
// synchronously, as an ingestion process reads a file (ingest-child.ts): in one readFileSync call, then a
// slice at a time. Last, a 12 MiB file read and hashed by the server's thread itself, as a code interpreter
// package (a wheel) is loaded (src/code-interpreter/packages.ts): by readFileSync, then by readFile.
// Run: node bench/file-slices.mjs [--mb 800] [--rounds 3] [--slices 16,1]   (sizes in MiB)
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { report } from './lib.mjs';

if (isMainThread) {
  const arg = (name, def) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : def;
  };
  const size = Number(arg('--mb', 800)) * 1048576;
  const rounds = Number(arg('--rounds', 3));
  const slices = arg('--slices', '16,1').split(',').map(Number);
  const file = join(tmpdir(), `standin-bench-file-slices-${size}.bin`);
  if (!existsSync(file) || statSync(file).size !== size) {
    const fh = await open(file, 'w');
    const block = Buffer.alloc(1 << 20, 7);
    for (let at = 0; at < size; at += block.length) await fh.write(block, 0, Math.min(block.length, size - at), at);
    await fh.close();
  }
  const wheel = join(tmpdir(), 'standin-bench-file-slices-wheel.bin');
  writeFileSync(wheel, Buffer.alloc(12 << 20, 3));
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const hash = (bytes) => createHash('sha256').update(bytes).digest('hex');
  const ON_THREAD = {
    'the server thread, a wheel: readFileSync, then its hash': async () => hash(readFileSync(wheel)),
    'the server thread, a wheel: readFile, then its hash': async () => hash(await readFile(wheel)),
  };
  const busy = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  /** An ingestion process's read: the file in one call, then a MiB at a time. */
  const SYNC = {
    'another process, one readFileSync': `require('node:fs').readFileSync(process.argv[1])`,
    'another process, 1 MiB readSync calls': `const fs = require('node:fs'); const fd = fs.openSync(process.argv[1]);
      const b = Buffer.allocUnsafe(fs.fstatSync(fd).size);
      for (let at = 0; at < b.length; at += 1 << 20) fs.readSync(fd, b, at, Math.min(1 << 20, b.length - at), at);`,
  };
  const runs = new Map();
  /** Runs `read` with the monitor on from 50 ms before to 50 ms after (a delay it causes is then recorded), and keeps the figures under `name`. */
  const measure = async (name, read) => {
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    await sleep(50);
    const t = performance.now();
    await read();
    const ms = performance.now() - t;
    await sleep(50);
    h.disable();
    if (!runs.has(name)) runs.set(name, []);
    runs.get(name).push({ ms, worst: h.max / 1e6, p99: h.percentile(99) / 1e6 });
  };
  try {
    for (let r = 0; r < rounds; r++) {
      for (const mb of slices) {
        const slice = Math.round(mb * 1048576);
        await measure(
          `a worker thread, ${mb} MiB a read`,
          () =>
            new Promise((resolve, reject) =>
              new Worker(new URL(import.meta.url), { workerData: { file, size, slice } }).once('message', resolve).once('error', reject),
            ),
        );
      }
      for (const [name, code] of Object.entries(SYNC)) {
        // Measured from the process's word that it starts reading (a process's start is not the read's).
        const child = spawn(process.execPath, ['-e', `process.stdout.write('go'); ${code}`, file], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        await new Promise((resolve) => child.stdout.once('data', resolve));
        await measure(name, () => new Promise((resolve) => child.once('exit', resolve)));
      }
      for (const [name, read] of Object.entries(ON_THREAD)) await measure(name, read);
    }
  } finally {
    busy.kill();
    rmSync(file, { force: true });
    rmSync(wheel, { force: true });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  report(
    'file-slices',
    [...runs].map(([name, xs]) => ({
      read: name,
      'in all, ms (median)': Math.round(median(xs.map((x) => x.ms))),
      'worst main-thread delay, ms (each round)': xs.map((x) => x.worst.toFixed(1)).join(', '),
      'p99 delay, ms (median)': median(xs.map((x) => x.p99)).toFixed(1),
    })),
    [`${size / 1048576} MiB read into new memory (a wheel: 12 MiB), ${rounds} rounds; the other core busy.`],
  );
} else {
  const { file, size, slice } = workerData;
  const fh = await open(file, 'r');
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at += slice) await fh.read(bytes, at, Math.min(slice, size - at), at);
  await fh.close();
  parentPort.postMessage(bytes[size - 1]);
}
