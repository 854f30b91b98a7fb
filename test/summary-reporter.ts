import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/** Ends the run with the plain line CI reads: `N passed, N failed, N skipped`. */
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
    process.stdout.write(`\n${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}
