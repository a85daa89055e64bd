/** errorMessage and errorCode: what a caller reads of anything thrown, without casting it. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCode, errorMessage } from '../../src/domain/error-message.js';

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('it did not throw');
}

describe('errors as values', () => {
  it("reads a system error's code, and nothing from what has none", () => {
    const missing = thrownBy(() => fs.readFileSync(path.join(os.tmpdir(), 'no-such-dir-raider-hall', 'x')));
    expect(errorCode(missing)).toBe('ENOENT');
    expect(errorMessage(missing)).toMatch(/^ENOENT: no such file or directory/);
    expect(errorCode(new Error('plain'))).toBeUndefined();
    expect(errorCode(Object.assign(new Error('odd'), { code: 42 }))).toBeUndefined();
    expect(errorCode({ code: 'ENOENT' })).toBeUndefined();
    expect(errorCode('ENOENT')).toBeUndefined();
    expect(errorMessage('just text')).toBe('just text');
  });
});
