/**
 * A Chromium whose pages no driver watches, as in a person's browser.
 * Playwright instruments every page it drives (the network events of each
 * streamed message travel to it and are parsed there), which costs the
 * machine more than some pages do themselves. This one speaks the DevTools
 * protocol on a pipe only to open tabs, to check once that each drew what it
 * should (attached for that check alone), and to close them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

interface Reply {
  id?: number;
  result?: Record<string, unknown>;
  error?: { message: string };
}

export class PlainBrowser {
  private next = 0;
  private readonly waiting = new Map<number, (reply: Reply) => void>();

  private constructor(
    private readonly child: ChildProcess,
    private readonly toBrowser: Writable,
    private readonly profile: string,
  ) {}

  /** `executable`: Chromium (Debian's /usr/bin/chromium script execs the browser in its own process: `pid` is the browser's). */
  static launch(executable: string): PlainBrowser {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'plain-browser-'));
    const args = ['--headless', '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'];
    if (process.getuid?.() === 0) args.unshift('--no-sandbox');
    const child = spawn(executable, args, { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
    const [, , , toBrowser, fromBrowser] = child.stdio;
    if (!isWritable(toBrowser) || !isReadable(fromBrowser)) throw new Error('Chromium started without its DevTools pipe');
    const browser = new PlainBrowser(child, toBrowser, profile);
    let pending = '';
    fromBrowser.setEncoding('utf8');
    fromBrowser.on('data', (chunk: string) => {
      pending += chunk;
      for (let end = pending.indexOf('\0'); end >= 0; end = pending.indexOf('\0')) {
        browser.take(JSON.parse(pending.slice(0, end)) as Reply);
        pending = pending.slice(end + 1);
      }
    });
    return browser;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  private take(reply: Reply): void {
    if (reply.id === undefined) return;
    this.waiting.get(reply.id)?.(reply);
    this.waiting.delete(reply.id);
  }

  private send(method: string, params: Record<string, unknown>, sessionId?: string): Promise<Record<string, unknown>> {
    const id = ++this.next;
    this.toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (reply) => (reply.error ? reject(new Error(`${method}: ${reply.error.message}`)) : resolve(reply.result ?? {})));
    });
  }

  /**
   * Opens `url` in a new window and waits (up to `timeoutMs`) until
   * `readyExpression` is true in it, then leaves it alone. Returns its id.
   */
  async open(url: string, readyExpression: string, timeoutMs = 30_000): Promise<string> {
    // A window each: a tab behind another is hidden, and a hidden page draws nothing (no animation frames).
    const { targetId } = await this.send('Target.createTarget', { url, newWindow: true });
    if (typeof targetId !== 'string') throw new Error('Target.createTarget gave no targetId');
    await this.waitFor(targetId, readyExpression, timeoutMs);
    return targetId;
  }

  /**
   * Attaches to the page for as long as it takes `expression` to be true in
   * it (up to `timeoutMs`; then the error says what `describe`, evaluated in
   * the page, gives).
   */
  async waitFor(
    targetId: string,
    expression: string,
    timeoutMs = 30_000,
    describe = 'document.body.innerText.slice(0, 2000)',
  ): Promise<void> {
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    if (typeof sessionId !== 'string') throw new Error('Target.attachToTarget gave no sessionId');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // The first page redirects (the token becomes a cookie): an evaluation may meet the navigation.
      const ready = await this.send('Runtime.evaluate', { expression, returnByValue: true }, sessionId).catch(() => null);
      const value = ready?.result;
      if (typeof value === 'object' && value !== null && 'value' in value && value.value === true) break;
      if (Date.now() > deadline) {
        const shown = await this.send('Runtime.evaluate', { expression: describe, returnByValue: true }, sessionId).catch(
          (err: unknown) => err,
        );
        throw new Error(`not so within ${timeoutMs} ms: ${expression}\nthe page: ${JSON.stringify(shown)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await this.send('Target.detachFromTarget', { sessionId });
  }

  async closeTab(targetId: string): Promise<void> {
    await this.send('Target.closeTarget', { targetId });
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await this.send('Browser.close', {}).catch(() => undefined);
    await exited;
    fs.rmSync(this.profile, { recursive: true, force: true });
  }
}

function isWritable(stream: unknown): stream is Writable {
  return typeof stream === 'object' && stream !== null && 'write' in stream;
}

function isReadable(stream: unknown): stream is Readable {
  return typeof stream === 'object' && stream !== null && 'setEncoding' in stream;
}
