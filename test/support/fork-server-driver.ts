/**
 * A fork server (libexec/raider-spawner.cjs) driven by hand, as the hall
 * drives it: requests in on stdin, its reports and its stderr collected.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { expect } from 'vitest';
import { FORK_SERVER_SCRIPT } from '../../src/adapters/os/fork-server.js';
import { readLines } from '../../src/protocol/line-reader.js';
import { eventually } from './hall-client.js';

export type Report = Record<string, unknown>;
type Id = number | string;

/** A request to run `true` in `root`, with no environment, writing to `root/out` and `root/err`: what most tests start. */
export function trueIn(root: string): Record<string, unknown> {
  return { command: 'true', args: [], env: {}, cwd: root, stdout: path.join(root, 'out'), stderr: path.join(root, 'err') };
}

export class ForkServerDriver {
  readonly reports: Report[] = [];
  stderr = '';
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly exited: Promise<unknown>;
  private nextId = 1;

  /** `node`: with `--node-spawn`; `script`: another copy of the fork server. */
  constructor(way: 'posix' | 'node' = 'posix', script = FORK_SERVER_SCRIPT) {
    // No hall pid (''): the test process is its parent, not a hall.
    this.child = spawn(process.execPath, [script, '', ...(way === 'node' ? ['--node-spawn'] : [])], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    this.exited = new Promise((resolve) => this.child.once('exit', resolve));
    readLines(this.child.stdout, (line) => this.reports.push(JSON.parse(line) as Report));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Writes raw text to its stdin. */
  send(text: string): void {
    this.child.stdin.write(text);
  }

  /** Sends a request; resolves with its first report (a pid or an error). */
  async start(request: Record<string, unknown>, id: Id = this.nextId++): Promise<{ id: Id; first: Report }> {
    this.send(`${JSON.stringify({ id, ...request })}\n`);
    const first = await eventually(() => {
      const found = this.reports.find((r) => r.id === id);
      expect(found).toBeDefined();
      return found as Report;
    });
    return { id, first };
  }

  /** Resolves with the exit report of request `id`. */
  exit(id: Id): Promise<Report> {
    return eventually(() => {
      const found = this.reports.find((r) => r.id === id && 'code' in r);
      expect(found).toBeDefined();
      return found as Report;
    });
  }

  /** Ends its stdin (the hall is gone); resolves with its exit code once it has exited. */
  endInput(): Promise<unknown> {
    this.child.stdin.end();
    return this.exited;
  }

  /** Ends the fork server, after killing what it started that still runs (a failed test's). */
  async close(): Promise<void> {
    for (const report of this.reports) {
      if (typeof report.pid !== 'number' || this.reports.some((r) => r.id === report.id && 'code' in r)) continue;
      try {
        process.kill(-report.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await this.endInput();
  }
}
