// The raider's side of the permission channel against the hall's own
// implementation (src/actors/permission-channels.ts), so the two halves of
// docs/raider.md are checked against each other, not only against a stand-in.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermissionChannels } from '../../src/actors/permission-channels.js';
import { SOCKET_PATH_MAX } from '../../src/os/socket-path.js';
import type { PermissionQuestion } from '../../src/domain/permission.js';
import { cleanUp, ensureBuilt, makeProject, parseEvents, runRaider } from './helpers.js';

beforeAll(ensureBuilt, 120_000);
const dir = mkdtempSync(join(tmpdir(), 'raider-channels-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanUp();
});

const SCRIPT = `
replies:
  - steps:
      - tool: bash
        arguments: { command: "echo via hall" }
      - tool: write_file
        arguments: { path: "notes.txt", content: "x" }
      - message: "done"
`;

describe("the hall's permission channel", () => {
  it('gets the questions with their call ids; its answers allow and refuse', async () => {
    const warnings: string[] = [];
    const channels = new PermissionChannels(dir, (m) => warnings.push(m));
    const asked: PermissionQuestion[] = [];
    await channels.register('acp:test', async (q) => {
      asked.push(q);
      return { type: 'answer', id: q.id, answer: q.tool === 'bash' ? 'once' : 'no', reason: q.tool === 'bash' ? 'ok' : 'not today' };
    });
    const path = await channels.open('run-1', 'acp:test');
    expect(path).not.toBeNull();
    try {
      const root = makeProject(SCRIPT);
      const r = await runRaider(['--stream-json', '-e', 'scripted', '--permission-channel', path!, '-r', root, '--no-session', '--', 'go']);
      expect(r.code).toBe(0);
      expect(asked.map((q) => [q.id, q.call, q.tool, q.kind, q.rule])).toEqual([
        ['q1', 'c1', 'bash', 'execute', 'Bash(echo via hall)'],
        ['q2', 'c2', 'write_file', 'edit', 'Edit(/notes.txt)'],
      ]);
      const results = parseEvents(r.stdout).filter((e) => e.type === 'tool.result');
      expect(results.map((e) => [e.status, e.content])).toEqual([
        ['succeeded', 'via hall\n'],
        ['failed', 'permission refused: refused when asked: not today'],
      ]);
      expect(warnings).toEqual([]);
    } finally {
      channels.closeAll();
    }
  });

  it('works from a directory too long for a socket path: the raider gets a short path, and closing leaves nothing', async () => {
    const long = join(dir, 'x'.repeat(90), 'y'.repeat(90));
    mkdirSync(long, { recursive: true });
    const channels = new PermissionChannels(long, () => {});
    await channels.register('acp:test', async (q) => ({ type: 'answer', id: q.id, answer: 'once', reason: 'ok' }));
    const path = await channels.open('run-2', 'acp:test');
    try {
      expect(path).not.toBeNull();
      expect(Buffer.byteLength(path ?? '')).toBeLessThanOrEqual(SOCKET_PATH_MAX);
      expect(readlinkSync(join(long, 'run-2.sock'))).toBe(path);
      const r = await runRaider([
        '--stream-json',
        '-e',
        'scripted',
        '--permission-channel',
        path ?? '',
        '-r',
        makeProject(SCRIPT),
        '--no-session',
        '--',
        'go',
      ]);
      expect(r.code).toBe(0);
      expect(
        parseEvents(r.stdout)
          .filter((e) => e.type === 'tool.result')
          .map((e) => e.status),
      ).toEqual(['succeeded', 'succeeded']);
    } finally {
      channels.closeAll();
    }
    expect(readdirSync(long)).toEqual([]);
    expect(existsSync(dirname(path ?? '/'))).toBe(false);
  });
});
