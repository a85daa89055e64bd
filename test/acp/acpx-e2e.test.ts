/** acpx (a real, independent ACP client) drives `raider acp --stdio` end to end. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acpAdapter } from '../../src/adapters/acp/acp-adapter.js';
import { hallEnv, RAIDER_BIN, REPO, startTestHall, tempRoot, type Json, type TestHall } from '../support/test-hall.js';

const ACPX = path.join(REPO, 'node_modules', 'acpx', 'dist', 'cli.js');

// The tests run concurrently (each mostly waits on acpx and its agent process): each has a hall of its own.
const halls: TestHall[] = [];
afterAll(async () => {
  await Promise.all(halls.splice(0).map((h) => h.stop()));
});

async function ownHall(): Promise<TestHall> {
  const hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n', adapters: [acpAdapter] });
  halls.push(hall);
  return hall;
}

function acpx(root: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const agentCommand = `${process.execPath} ${RAIDER_BIN} acp --stdio ${root}`;
    const child = spawn(process.execPath, [ACPX, '--agent', agentCommand, '--cwd', root, ...args], {
      env: hallEnv({ HOME: tempRoot('acpx-home-') }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.concurrent('acpx against raider acp --stdio', () => {
  it('--approve-all: the permission is granted and the turn ends end_turn', async () => {
    const hall = await ownHall();
    const run = await acpx(hall.root, ['--approve-all', 'exec', 'ask 1']);
    expect(run.code, `acpx exited ${String(run.code)}: ${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('["once"]');
    expect(run.stdout).toContain('[done] end_turn');
  });

  it('--deny-all: the raider is told no, the run goes on, acpx reports the denial', async () => {
    const hall = await ownHall();
    const run = await acpx(hall.root, ['--deny-all', 'exec', 'ask 1']);
    expect(run.stdout).toContain('["no"]');
    expect(run.stdout).toContain('[done] end_turn');
    // acpx exits 5 when it denied a permission.
    expect(run.code, `acpx exited ${String(run.code)}: ${run.stderr}`).toBe(5);
  });

  it('--format json shows a spec-conform exchange', async () => {
    const hall = await ownHall();
    const run = await acpx(hall.root, ['--format', 'json', '--approve-all', 'exec', 'answer hi']);
    expect(run.code, `acpx exited ${String(run.code)}: ${run.stderr}`).toBe(0);
    const frames = run.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Json);
    const prompt = frames.find((f) => f.method === 'session/prompt');
    const reply = frames.find((f) => f.id === prompt!.id && f.result);
    expect(reply!.result).toEqual({ stopReason: 'end_turn' });
    expect(frames.some((f) => f.params?.update?.sessionUpdate === 'agent_message_chunk' && f.params.update.content.text === 'hi')).toBe(
      true,
    );
  });
});
