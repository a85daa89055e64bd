/**
 * The raider's version, read from the package's own package.json. The path
 * is the same from src/protocol (tests) and dist/protocol (the built command,
 * and the raider's bundle in dist/raider, one floor deep too).
 */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export const RAIDER_VERSION: string = readVersion();
