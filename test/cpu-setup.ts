import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

/**
 * A test file's CPU in seconds: its share of its worker process (which runs one file after another: the
 * config's `isolate: false`) and of the children the worker waited for.
 */
export interface FileCpu {
  self: number;
  children: number;
}

/** From /proc/self/stat (utime, stime, cutime, cstime, in clock ticks of 1/100 s); undefined off Linux. */
function cpuOfThisProcess(): FileCpu | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { self: (Number(f[11]) + Number(f[12])) / 100, children: (Number(f[13]) + Number(f[14])) / 100 };
}

// The worker's CPU before the file is imported (a setup file runs again before each file), and after its
// last hook (hooks end in reverse order): the difference is the file's. test/summary-reporter.ts lists
// the files that took most CPU.
const before = cpuOfThisProcess();
// (Vitest reads the first argument as fixtures: it must be a pattern; the file is the second.)
// eslint-disable-next-line no-empty-pattern
afterAll(({}, file) => {
  const cpu = cpuOfThisProcess();
  if (cpu && before) (file.meta as { cpu?: FileCpu }).cpu = { self: cpu.self - before.self, children: cpu.children - before.children };
});
