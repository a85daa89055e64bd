/**
 * Temporary directories for tests, removed after each test file
 * (test/support/remove-temp-roots.ts is a vitest setup file), so that
 * repeated runs do not fill /tmp with thousands of hall roots.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];

export function tempRoot(prefix = 'hall-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every directory tempRoot made so far; a process still writing into one may leave it behind. */
export function removeTempRoots(): void {
  for (const dir of made.splice(0)) {
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      /* a raider that outlived its test still writes there */
    }
  }
}
