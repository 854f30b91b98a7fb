import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

/** A test file's CPU in seconds: its worker process (one a file) and the children it waited for. */
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

// Last of the file's hooks (hooks end in reverse order): test/summary-reporter.ts lists the files that took most CPU.
// (Vitest reads the first argument as fixtures: it must be a pattern; the file is the second.)
// eslint-disable-next-line no-empty-pattern
afterAll(({}, file) => {
  const cpu = cpuOfThisProcess();
  if (cpu) (file.meta as { cpu?: FileCpu }).cpu = cpu;
});
