/**
 * Claude Code under the hall, end to end and offline: the `claude` preset
 * runs Claude Code's own ACP adapter (the devDependency
 * @agentclientprotocol/claude-agent-acp, with the Claude Code binary it
 * brings), and the adapter talks to a local stand-in of the Anthropic
 * Messages API instead of the network (docs/agents.md, "Claude Code").
 * The stand-in plays the model: a mission `create file NAME` asks for a Bash
 * tool call `touch NAME`, then answers with the tool's result; a mission
 * `keep thinking` streams a little and then waits, a turn to cancel.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AnthropicStandIn, lastToolResult, startAnthropicStandIn, userText } from '../support/anthropic-stand-in.js';
import { type EventTap, REPO, tapEvents, tempRoot } from '../support/hall-client.js';
import { commandLine, groupAlive } from '../support/processes.js';
import {
  doneOf,
  doneTap,
  eventsFile,
  eventually,
  type HallProcess,
  hallRoot,
  removeRoots,
  request,
  socketOf,
  startHallProcess,
} from './cli-helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const BIN = path.join(REPO, 'node_modules', '.bin');
const ADAPTER = path.join(BIN, 'claude-agent-acp');
const CREATE = /create file (\S+)/;
/** The Claude Code program the adapter starts, from its npm package. */
const CLAUDE_CODE = path.join(REPO, 'node_modules', '@anthropic-ai');

let standIn: AnthropicStandIn | undefined;
let hallProcess: HallProcess | undefined;
let tap: EventTap | undefined;
let root = '';

beforeAll(async () => {
  // A missing adapter is a broken install, not a reason to skip: npm ci installs it.
  if (!fs.existsSync(ADAPTER))
    throw new Error(`${ADAPTER} is missing: npm ci installs the devDependency @agentclientprotocol/claude-agent-acp`);
  standIn = await startAnthropicStandIn((req) => {
    const file = CREATE.exec(userText(req))?.[1];
    if (file === undefined) return { hang: 'thinking it over' };
    const result = lastToolResult(req);
    if (result !== undefined) return { text: `${result.isError ? 'could not' : 'did'} create ${file}: ${result.text}` };
    return { tool: { name: 'Bash', input: { command: `touch ${file}`, description: `create ${file}` } } };
  });
  root = hallRoot(
    'raiders:\n  claude: { agent: claude, permission_mode: default }\n' +
      'dashboard: { listen: "127.0.0.1:0", questions: true }\npermission_timeout: 60\ncancel_grace: 10\n',
  );
  // The preset's command is found on PATH, as for a user who installed the adapter; Claude Code
  // reads its API and home from the environment the hall passes on. IS_SANDBOX is what a root
  // user in a container sets (docs/agents.md, "Claude Code").
  hallProcess = await startHallProcess(root, {
    PATH: `${BIN}:${process.env.PATH ?? ''}`,
    HOME: tempRoot('claude-home-'),
    ANTHROPIC_BASE_URL: standIn.url,
    ANTHROPIC_API_KEY: 'sk-ant-offline-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}),
  });
  tap = await doneTap(root);
});

afterAll(async () => {
  tap?.close();
  expect((await hallProcess?.stop())?.code).toBe(0);
  await standIn?.close();
  removeRoots();
});

function done(id: string) {
  if (!tap) throw new Error('no hall');
  return doneOf(tap, id);
}

/** Live processes of this checkout's adapter or Claude Code (a zombie is gone). */
function claudeProcesses(): string[] {
  const found: string[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const command = commandLine(Number(name));
      const state = /\) (\S)/.exec(fs.readFileSync(`/proc/${name}/stat`, 'utf8'))?.[1];
      if (state !== 'Z' && (command.includes(CLAUDE_CODE) || command.includes(ADAPTER))) found.push(`${name}: ${command}`);
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

function runEvents(id: string, type: string): Array<Record<string, unknown>> {
  const lines = fs.readFileSync(eventsFile(root, id), 'utf8').trim().split('\n');
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.type === type);
}

describe.concurrent('Claude Code as a raider, offline', () => {
  const cases: Array<[answer: 'once' | 'no', file: string, decision: string, response: string]> = [
    ['once', 'allowed.txt', 'allowed', 'did create allowed.txt: (Bash completed with no output)'],
    ['no', 'refused.txt', 'refused', 'could not create refused.txt: User refused permission to run tool'],
  ];
  for (const [answer, file, decision, response] of cases) {
    it(`its Bash tool call asks; answered ${answer} on the socket, the command ${answer === 'once' ? 'really runs' : 'does not run'}`, async () => {
      const questions = await tapEvents(socketOf(root), 'permission.');
      try {
        const run = await request(socketOf(root), { cmd: 'spawn', name: 'claude', mission: `create file ${file}` });
        const asked = await questions.waitFor((e) => e.type === 'permission.asked' && e.id === run.id, 45_000);
        expect(asked).toMatchObject({ title: `touch ${file}`, kind: 'execute' });
        expect(fs.existsSync(path.join(root, file))).toBe(false);
        expect(await request(socketOf(root), { cmd: 'answer', run: run.id, question: asked.question, answer })).toMatchObject({
          answered: 1,
        });
        expect(await done(String(run.id))).toMatchObject({ status: 'completed', response });
        expect(fs.existsSync(path.join(root, file))).toBe(answer === 'once');
        expect(runEvents(String(run.id), 'permission')).toEqual([expect.objectContaining({ decision, asked: true, answer })]);
        expect(runEvents(String(run.id), 'tool.result')).toEqual([
          expect.objectContaining({ kind: 'execute', status: answer === 'once' ? 'succeeded' : 'failed' }),
        ]);
      } finally {
        questions.close();
      }
    });
  }

  it('a cancel mid-turn: Claude Code ends the turn, the run is cancelled, the model request is dropped', async () => {
    if (!standIn) throw new Error('no stand-in');
    const run = await request(socketOf(root), { cmd: 'spawn', name: 'claude', mission: 'keep thinking' });
    await standIn.hanging();
    await request(socketOf(root), { cmd: 'cancel', id: run.id });
    expect(await done(String(run.id))).toMatchObject({ status: 'cancelled' });
    await eventually(() => expect(standIn?.abandoned).toBe(1), 10_000, 20);
    // The bridge leads the run's process group: the adapter and Claude Code ended with it.
    await eventually(() => expect(groupAlive(Number(run.pid))).toBe(false), 10_000, 20);
  });
});

it('once its runs are over, no Claude Code process is left, not even one that left the group', async () => {
  await eventually(() => expect(claudeProcesses()).toEqual([]), 10_000, 20);
});
