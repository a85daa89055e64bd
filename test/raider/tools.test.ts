// The file and shell tools in-process: what they do, what they refuse, and
// how `bash` ends its process group on a timeout and on a cancel.
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bashTool } from '../../src/raider/tools/bash.js';
import { editFileTool } from '../../src/raider/tools/edit-file.js';
import { ProcessGroups } from '../../src/raider/tools/process-groups.js';
import type { Tool, ToolContext, ToolResult } from '../../src/raider/tools/tool.js';
import { writeFileTool } from '../../src/raider/tools/write-file.js';
import { groupAlive } from '../support/processes.js';
import { cleanUp, makeProject } from './helpers.js';

afterAll(cleanUp);

function ctx(root: string, signal: AbortSignal = new AbortController().signal): ToolContext {
  return { root, signal, processes: new ProcessGroups(), env: { ...process.env, SECRET_API_KEY: undefined } };
}

/** A tool's result, with a throw turned into a failed result the way the loop does. */
async function run(tool: Tool, args: Record<string, unknown>, c: ToolContext): Promise<ToolResult> {
  try {
    return await tool.run(args, c);
  } catch (err) {
    return { ok: false, content: (err as Error).message };
  }
}

/** Living (not zombie) members of a process group, as ps sees them. */
async function waitForFile(path: string): Promise<string> {
  for (let i = 0; i < 200 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 25));
  for (let i = 0; i < 40; i++) {
    const text = readFileSync(path, 'utf8');
    if (text.endsWith('\n')) return text.trim();
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${path} never got a line`);
}

describe('write_file', () => {
  it('creates parents and writes the content', async () => {
    const root = makeProject();
    expect(await run(writeFileTool, { path: 'a/b/c.txt', content: 'héllo\n' }, ctx(root))).toEqual({
      ok: true,
      content: 'wrote 7 bytes to a/b/c.txt',
    });
    expect(readFileSync(join(root, 'a/b/c.txt'), 'utf8')).toBe('héllo\n');
  });

  it('refuses paths outside the root, also through a symlinked directory that does not hold the file yet', async () => {
    const root = makeProject();
    const outside = makeProject();
    symlinkSync(outside, join(root, 'escape'));
    for (const path of ['../x.txt', '/tmp/x.txt', 'escape/new.txt', 'escape/deeper/new.txt']) {
      const r = await run(writeFileTool, { path, content: 'x' }, ctx(root));
      expect(r, path).toMatchObject({ ok: false, content: expect.stringMatching(/outside the project root/) });
    }
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'deeper'))).toBe(false);
  });
});

describe('edit_file', () => {
  it('replaces exactly one occurrence, or all with replace_all, and says when it cannot', async () => {
    const root = makeProject(undefined, { 'f.txt': 'a $1 b a\n' });
    const c = ctx(root);
    expect(await run(editFileTool, { path: 'f.txt', old_string: 'b', new_string: '$&x' }, c)).toMatchObject({ ok: true });
    expect(readFileSync(join(root, 'f.txt'), 'utf8')).toBe('a $1 $&x a\n'); // no replacement patterns
    expect(await run(editFileTool, { path: 'f.txt', old_string: 'a', new_string: 'z' }, c)).toEqual({
      ok: false,
      content: 'old_string occurs 2 times in f.txt; give more context or set replace_all',
    });
    expect(await run(editFileTool, { path: 'f.txt', old_string: 'a', new_string: 'z', replace_all: true }, c)).toEqual({
      ok: true,
      content: 'replaced 2 occurrence(s) in f.txt',
    });
    expect(await run(editFileTool, { path: 'f.txt', old_string: 'nope', new_string: 'z' }, c)).toEqual({
      ok: false,
      content: 'old_string does not occur in f.txt',
    });
    expect(await run(editFileTool, { path: 'missing.txt', old_string: 'a', new_string: 'b' }, c)).toMatchObject({
      ok: false,
      content: expect.stringMatching(/ENOENT/),
    });
  });
});

describe('bash', () => {
  it('runs in the root with stdout and stderr, reports a non-zero exit, and sees no API keys', async () => {
    const root = makeProject(undefined, { 'here.txt': '' });
    const c = ctx(root);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion run by the bash tool, not a JS template
    const r = await run(bashTool, { command: 'ls; echo err >&2; echo "key=${SECRET_API_KEY:-none}"; echo err2 >&2' }, c);
    expect(r).toEqual({ ok: true, content: 'here.txt\nerr\nkey=none\nerr2\n' });
    expect(await run(bashTool, { command: 'exit 3' }, c)).toEqual({ ok: false, content: '\n[exit status 3]' });
  });

  it('stops a command at its timeout, with its whole group', async () => {
    const root = makeProject();
    const started = Date.now();
    const r = await run(bashTool, { command: 'echo $$ > pid; echo begun; sleep 30 & sleep 30', timeout: 0.5 }, ctx(root));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/^begun\n[\s\S]*\[timed out after 0.5 s; the command was stopped\]$/);
    expect(groupAlive(Number(readFileSync(join(root, 'pid'), 'utf8')))).toBe(false);
  });

  it('does not wait for a background job that keeps the output open, and ends it', async () => {
    const root = makeProject();
    const started = Date.now();
    const r = await run(bashTool, { command: 'echo $$ > pid; sleep 30 & echo done' }, ctx(root));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r).toEqual({ ok: true, content: 'done\n' });
    expect(groupAlive(Number(readFileSync(join(root, 'pid'), 'utf8')))).toBe(false);
  });

  it('on cancel, a group that ignores SIGTERM is killed and gone within 2 s', async () => {
    const root = makeProject();
    const controller = new AbortController();
    const c = ctx(root, controller.signal);
    const pending = run(bashTool, { command: "trap '' TERM; echo $$ > pid; sleep 30 & sleep 30 & wait" }, c);
    const pgid = Number(await waitForFile(join(root, 'pid')));
    expect(groupAlive(pgid)).toBe(true);
    const cancelled = Date.now();
    controller.abort();
    await c.processes.terminateAll();
    expect(Date.now() - cancelled).toBeLessThan(2000);
    expect(groupAlive(pgid)).toBe(false);
    expect(await pending).toMatchObject({ ok: false, content: expect.stringMatching(/\[cancelled\]$/) });
  });
});
