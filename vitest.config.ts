import { defineConfig } from 'vitest/config';

/**
 * Test files that start no process, server or hall and leave no handle, env
 * variable or signal handler behind: they share worker processes and their
 * loaded modules (isolate: false). A fresh worker per file costs ~0.5 s of CPU
 * (Node and vitest starting, our modules loading again): measured on 27 such
 * files, 31 s of CPU isolated against 17 s shared. Every other file keeps a
 * worker of its own, as a hall test left running would leak into the next
 * file's processes and descriptors (the leak test counts both). A new file
 * belongs here only if it is as pure; by default it is isolated.
 */
const SHARED_WORKER_FILES = [
  'test/architecture.test.ts',
  'test/machines/**/*.test.ts',
  'test/protocol/**/*.test.ts',
  'test/domain/**/*.test.ts',
  'test/config/**/*.test.ts',
  'test/storage/disk-reserve.test.ts',
  'test/storage/group-commit.test.ts',
  'test/storage/serial-queue.test.ts',
  'test/storage/state-files.test.ts',
  'test/storage/write-ahead-log.test.ts',
  'test/telegram/telegram-rules.test.ts',
  'test/telegram/update-handler.test.ts',
  'test/cron/cron-rules.test.ts',
  'test/raider/args.test.ts',
  'test/raider/signals-unit.test.ts',
  'test/integration/render-status.test.ts',
  'test/postgres/database-settings.test.ts',
];

/**
 * Every Node process reads the file NODE_EXTRA_CA_CERTS names when it starts, used
 * or not: ~60 ms of CPU per start with the 220 kB system bundle, and a hall test starts
 * Node dozens of times (test/cli/client-commands.test.ts: 46 workers, halls, CLI calls
 * and raiders). No test speaks TLS
 * (remote APIs are local fakes over http), so test processes go without it.
 */
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
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
    projects: [
      { extends: true, test: { name: 'shared', include: SHARED_WORKER_FILES, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: SHARED_WORKER_FILES } },
    ],
  },
});
