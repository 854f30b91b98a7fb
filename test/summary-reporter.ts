import type { Reporter, SerializedError, TestModule } from 'vitest/node';

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
