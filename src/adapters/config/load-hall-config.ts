/** Reads `ROOT/.raider-hall.yml`. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ConfigResult, defaultHallConfig, parseHallConfig } from './hall-config-schema.js';
import { errorCode, errorMessage } from '../../domain/error-message.js';

export const HALL_CONFIG_FILE = '.raider-hall.yml';

/**
 * The hall's word when its root has no config: it runs all the same (with no
 * raiders configured, as an empty file would), and the operator learns why
 * nothing is set up and how to set it up.
 */
export function noConfigWarning(root: string): string {
  return (
    `no ${HALL_CONFIG_FILE} in ${root}: the hall runs with no raiders configured ` +
    "(a spawn of any name runs with the raider's defaults); to configure one: raider hall init --name NAME"
  );
}

/** A missing file is an empty config (all defaults), with a warning that says so; an unreadable one is an error. */
export function loadHallConfig(root: string): ConfigResult {
  const file = join(root, HALL_CONFIG_FILE);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return { ok: true, config: defaultHallConfig(), warnings: [noConfigWarning(root)] };
    return { ok: false, errors: [`${file}: cannot read: ${errorMessage(err)}`] };
  }
  // Decoding with replacement characters would turn a bad byte in a key into an unknown key, silently.
  const bad = firstInvalidUtf8(bytes);
  if (bad !== null)
    return { ok: false, errors: [`${file}: line ${bad.line}, column ${bad.column}: not valid UTF-8 (the file must be UTF-8)`] };
  return parseHallConfig(bytes.toString('utf8'), file);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Where the first byte that is not UTF-8 is (1-based line and byte column), or null. */
function firstInvalidUtf8(bytes: Buffer): { line: number; column: number } | null {
  try {
    strictUtf8.decode(bytes);
    return null;
  } catch {
    // Narrow it down line by line: a line break is never part of a multi-byte character.
    let start = 0;
    for (let line = 1; ; line++) {
      const nl = bytes.indexOf(0x0a, start);
      const end = nl < 0 ? bytes.length : nl;
      const text = bytes.subarray(start, end);
      const decoder = new TextDecoder('utf-8', { fatal: true });
      for (let i = 0; i <= text.length; i++) {
        try {
          if (i < text.length) decoder.decode(text.subarray(i, i + 1), { stream: true });
          else decoder.decode();
        } catch {
          return { line, column: Math.min(i, text.length - 1) + 1 };
        }
      }
      if (nl < 0) return { line, column: 1 };
      start = nl + 1;
    }
  }
}
