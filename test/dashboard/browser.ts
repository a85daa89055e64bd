/**
 * The browser for the dashboard's browser tests: Debian's Chromium driven by
 * playwright-core, found through CHROMIUM_PATH or /usr/bin/chromium. Without
 * one the tests are skipped with the reason, except under CI=true, where a
 * missing browser is a failure (CI installs it: .ci/run).
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium'].filter((p): p is string => p !== undefined && p !== '');

export const chromiumPath: string | undefined = CANDIDATES.find((p) => fs.existsSync(p));

/** Why the browser tests cannot run here, or null when they must run. */
export const skipBrowserTests: string | null =
  chromiumPath !== undefined || process.env.CI === 'true'
    ? null
    : `no Chromium (set CHROMIUM_PATH or install the chromium package; looked at ${CANDIDATES.join(', ')})`;

export async function launchBrowser(): Promise<Browser> {
  if (chromiumPath === undefined)
    throw new Error(`no Chromium at ${CANDIDATES.join(', ')}: install the chromium package or set CHROMIUM_PATH`);
  // Chromium's sandbox does not run as root (containers, CI).
  return chromium.launch({ executablePath: chromiumPath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
}
