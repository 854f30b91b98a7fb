import type { Reporter, SerializedError, TestModule } from 'vitest/node';
import type { FileCpu } from './cpu-setup.js';

/** How many of the slowest files the summary names, so a run that grew slower shows where. */
const SLOWEST = 15;

/**
 * Ends the run with the plain line CI reads: `N passed, N failed, N skipped`, after the slowest files and
 * their seconds.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>) {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const m of testModules) {
      let failedHere = 0;
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') count.passed++;
        else if (state === 'failed') failedHere++;
        else count.skipped++;
      }
      // A file that failed outside its tests (an import, a hook) counts as one failure.
      count.failed += failedHere || (m.state() === 'failed' ? 1 : 0);
    }
    // An error no test caught (an unheard 'error' event, a rejection after a test ended) fails the run too.
    count.failed += unhandledErrors.length;
    process.stdout.write(`\nslowest files:\n${slowest(testModules)}`);
    const cpu = mostCpu(testModules);
    if (cpu) process.stdout.write(`\nfiles that took most CPU (seconds: all, its worker, the processes it started):\n${cpu}`);
    process.stdout.write(`\n${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}

function slowest(testModules: ReadonlyArray<TestModule>): string {
  return [...testModules]
    .map((m) => ({ file: m.moduleId, ms: m.diagnostic().duration }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, SLOWEST)
    .map(({ file, ms }) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file.replace(process.cwd() + '/', '')}\n`)
    .join('');
}

/** The files that took most CPU (test/cpu-setup.ts), with the run's total; empty when none was measured. */
function mostCpu(testModules: ReadonlyArray<TestModule>): string {
  const files = testModules
    .map((m) => ({ file: m.moduleId, cpu: (m.meta() as { cpu?: FileCpu }).cpu }))
    .filter((f): f is { file: string; cpu: FileCpu } => f.cpu !== undefined)
    .map((f) => ({ ...f, all: f.cpu.self + f.cpu.children }));
  if (!files.length) return '';
  const s = (n: number) => n.toFixed(1).padStart(7);
  const total = files.reduce((t, f) => ({ self: t.self + f.cpu.self, children: t.children + f.cpu.children }), { self: 0, children: 0 });
  return (
    files
      .sort((a, b) => b.all - a.all)
      .slice(0, SLOWEST)
      .map((f) => `  ${s(f.all)} ${s(f.cpu.self)} ${s(f.cpu.children)}  ${f.file.replace(process.cwd() + '/', '')}\n`)
      .join('') + `  ${s(total.self + total.children)} ${s(total.self)} ${s(total.children)}  all ${files.length} files\n`
  );
}
