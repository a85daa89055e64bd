/** Reads `ROOT/.raider-hall.yml` (seed 001 "CONFIG FILE"). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ConfigResult, defaultHallConfig, parseHallConfig } from './hall-config.js';

export const HALL_CONFIG_FILE = '.raider-hall.yml';

/** A missing file is an empty config (all defaults); an unreadable one is an error. */
export function loadHallConfig(root: string): ConfigResult {
  const file = join(root, HALL_CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return { ok: true, config: defaultHallConfig(), warnings: [] };
    return { ok: false, errors: [`${file}: cannot read: ${e.message}`] };
  }
  return parseHallConfig(text, file);
}
