import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Both cores: most test time is spent waiting on real processes, not computing.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    setupFiles: ['./test/support/remove-temp-roots.ts'],
  },
});
