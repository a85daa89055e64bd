/**
 * `raider hall dashboard [DIR] [--json] [--open]`: the running hall's
 * dashboard URL with its login token (from the hall's 0600 dashboard file),
 * or why there is none. Exit 1 when the hall is not running or has no
 * dashboard; the message names the key to set.
 */
import { spawn } from 'node:child_process';
import type { Command } from '../commonjs-libraries.js';
import { hallPaths } from '../../ports/hall-paths.js';
import { onlyDir } from './dir-args.js';
import { CodedError, failureCode } from './error-report.js';
import { HallClientError, hallRequest } from '../../protocol/hall-client.js';

async function dashboardUrl(dir: string): Promise<string> {
  const paths = hallPaths(dir);
  let status: Record<string, unknown>;
  try {
    status = await hallRequest(paths.socket, 'status', {});
  } catch (err) {
    if (!(err instanceof HallClientError)) throw err;
    throw new CodedError(`${err.message}: start the hall first (raider hall start ${dir})`, failureCode(err));
  }
  if (status.dashboard === undefined) {
    throw new Error(
      `The hall in ${dir} has no dashboard: set dashboard.listen in ${paths.config} ` +
        `(for example: dashboard: { listen: "127.0.0.1:7420" }) and restart the hall`,
    );
  }
  const section = status.dashboard;
  if (typeof section === 'object' && section !== null && 'url' in section && section.url === null) {
    throw new Error(
      `The hall's dashboard is not listening (dashboard.listen in ${paths.config}); the hall log says why, e.g. the address is in use`,
    );
  }
  // Loaded here: the bundle every `raider hall` call loads stays without zod.
  const { readDashboardFile } = await import('../../adapters/dashboard/dashboard-file.js');
  const file = readDashboardFile(paths.root);
  if ('error' in file) throw new Error(file.error);
  return `${file.url}?token=${encodeURIComponent(file.token)}`;
}

/** Hands the URL to the desktop's browser; a desktop without one is told, not an error. */
function openInBrowser(url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
  child.on('error', (err) => process.stderr.write(`cannot open a browser (${opener}: ${err.message}); open the URL above\n`));
  child.unref();
}

export function registerDashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description("the URL of the hall's web dashboard, with its login token")
    .argument('[dir]')
    .option('--json', 'print {"url": ...}')
    .option('--open', 'open it in the browser')
    .action(async (dir: string | undefined, opts: { json?: boolean; open?: boolean }) => {
      const url = await dashboardUrl(onlyDir(dir ? [dir] : []));
      process.stdout.write(opts.json ? `${JSON.stringify({ url })}\n` : `${url}\n`);
      if (opts.open) openInBrowser(url);
    });
}
