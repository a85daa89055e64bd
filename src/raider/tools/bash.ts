/**
 * `bash {command, timeout?}`: run a shell command in the project root, in
 * its own process group (so a cancel reaches everything it started), with
 * a timeout. The result is the combined output and the exit status.
 */
import { spawn } from 'node:child_process';
import { peekString, stringArg, ToolError, type Tool, type ToolResult } from './tool.js';

export const DEFAULT_TIMEOUT_S = 120;
const MAX_TIMEOUT_S = 600;
/** What the model gets back at most: the head and the tail of long output. */
const KEEP_HEAD = 10_000;
const KEEP_TAIL = 20_000;

function timeoutArg(args: Record<string, unknown>): number {
  const v = args.timeout;
  if (v === undefined) return DEFAULT_TIMEOUT_S;
  if (typeof v !== 'number' || !(v > 0)) throw new ToolError(`argument 'timeout' must be a positive number of seconds`);
  return Math.min(v, MAX_TIMEOUT_S);
}

/** Long output keeps its beginning and its end, where errors usually are. */
export function clipOutput(text: string): string {
  if (text.length <= KEEP_HEAD + KEEP_TAIL) return text;
  const cut = text.length - KEEP_HEAD - KEEP_TAIL;
  return `${text.slice(0, KEEP_HEAD)}\n[... ${cut} characters cut ...]\n${text.slice(-KEEP_TAIL)}`;
}

export const bashTool: Tool = {
  spec: {
    name: 'bash',
    description:
      'Run a bash command in the project root and return its output (stdout and stderr together) and exit status. ' +
      `Non-interactive: stdin is empty. Times out after ${DEFAULT_TIMEOUT_S} s unless timeout is given (at most ${MAX_TIMEOUT_S}).`,
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'the command line, run with bash -c' },
        timeout: { type: 'number', description: 'seconds before the command is stopped' },
      },
      required: ['command'],
    },
  },
  access(args) {
    const command = peekString(args, 'command');
    return { category: 'execute', kind: 'execute', title: `Run: ${command}`, family: 'Bash', subject: { type: 'command', command } };
  },
  async run(args, ctx): Promise<ToolResult> {
    const command = stringArg(args, 'command');
    const timeoutS = timeoutArg(args);
    // One stream for both, in the order they were written: an error next to the output
    // that led to it. (Two pipes would interleave by chance.) Costs "line 2" in bash's messages.
    const child = spawn('bash', ['-c', `exec 2>&1\n${command}`], {
      cwd: ctx.root,
      env: ctx.env,
      detached: true, // its own process group
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    ctx.processes.add(child);
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));

    let stoppedBy: 'timeout' | 'cancel' | undefined;
    const stop = (why: 'timeout' | 'cancel'): void => {
      stoppedBy ??= why;
      if (child.pid !== undefined) void ctx.processes.terminate(child.pid);
    };
    const onAbort = (): void => stop('cancel');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => stop('timeout'), timeoutS * 1000);

    try {
      const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
      const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (c, s) => resolve({ code: c, signal: s }));
      });
      // A background job (`cmd &`) holding the pipes must not hold the call: give the
      // output a moment to drain, then end whatever the command left behind.
      await Promise.race([closed, new Promise((r) => setTimeout(r, 100))]);
      // An exit event means the spawn succeeded, so the child has a pid.
      if (child.pid !== undefined) await ctx.processes.terminate(child.pid, 200);
      const text = clipOutput(output);
      if (stoppedBy === 'timeout') return { ok: false, content: `${text}\n[timed out after ${timeoutS} s; the command was stopped]` };
      if (stoppedBy === 'cancel') return { ok: false, content: `${text}\n[cancelled]` };
      if (signal !== null) return { ok: false, content: `${text}\n[killed by ${signal}]` };
      return code === 0 ? { ok: true, content: text } : { ok: false, content: `${text}\n[exit status ${code}]` };
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  },
};
