/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, after the
 * default reporter: CI reads that line, not vitest's coloured summary.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file that failed outside its tests (an import, a beforeAll) has none failed, only skipped: count it.
      if (mod.state() === 'failed' && ![...mod.children.allTests()].some((test) => test.result().state === 'failed')) failed++;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
