import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // One more worker than CI's two cores: a test file spends much of its time waiting on
    // real processes (raiders, halls, PostgreSQL, Chromium), so a third keeps both cores
    // busy (on an idle 2-core machine the suite took 316 s with 3 workers, using 1.8 cores;
    // with 2 it used 1.5).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    setupFiles: ['./test/support/remove-temp-roots.ts'],
  },
});
