/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, after the
 * default reporter: CI reads that line, not vitest's coloured summary. Above
 * it, in plain text, what failed: each failed test with the first lines of
 * its error, and each error that escaped a test (an unhandled rejection, an
 * error event nobody listened to) with the file it came from and its stack.
 * CI shows the end of the output; the default reporter prints these far above.
 */
import type { SerializedError } from '@vitest/utils';
import type { Reporter, TestModule } from 'vitest/node';

const STACK_LINES = 8;

function brief(error: SerializedError | undefined): string {
  if (error === undefined) return '';
  const head = `${error.name ?? 'Error'}: ${error.message}`.split('\n').slice(0, 6).join('\n    ');
  const stack = (error.stack ?? '').split('\n').filter((line) => line.trim().startsWith('at '));
  // Our frames say where; vitest's own say nothing (unless there are no others).
  const ours = stack.filter((line) => !line.includes('/node_modules/'));
  return [head, ...(ours.length > 0 ? ours : stack).slice(0, STACK_LINES).map((line) => line.trim())].join('\n    ');
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const failures: string[] = [];
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const result = test.result();
        if (result.state === 'passed') passed++;
        else if (result.state === 'failed') {
          failed++;
          failures.push(`failed: ${mod.moduleId} > ${test.fullName}\n    ${brief(result.errors?.[0])}`);
        } else skipped++;
      }
      // A file that failed outside its tests (an import, a beforeAll) has none failed, only skipped: count it.
      if (mod.state() === 'failed' && ![...mod.children.allTests()].some((test) => test.result().state === 'failed')) {
        failed++;
        failures.push(`failed: ${mod.moduleId}\n    ${brief(mod.errors()[0])}`);
      }
    }
    for (const error of unhandledErrors) {
      const file = typeof error.VITEST_TEST_PATH === 'string' ? ` in ${error.VITEST_TEST_PATH}` : '';
      failures.push(`unhandled error${file}:\n    ${brief(error)}`);
    }
    if (failures.length > 0) process.stdout.write(`\n${failures.join('\n')}\n`);
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
