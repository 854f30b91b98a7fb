import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: true,
    // A worker runs one file after another and keeps its modules: a fresh one for each file imported the
    // whole module graph again, a third of the workers' CPU (docs/contributing.md, "The suite's time").
    isolate: false,
    // Three on two cores: two left the machine idle a quarter of the run (the tests wait on the processes they
    // start); four were not faster, and slow each file more (docs/contributing.md, "The suite's time").
    maxWorkers: 3,
    reporters: ['default', './test/summary-reporter.ts'],
    // Each file's CPU, which the summary's last lines list (test/cpu-setup.ts).
    setupFiles: ['./test/cpu-setup.ts'],
    globalSetup: ['./test/global-setup.ts'],
  },
});
