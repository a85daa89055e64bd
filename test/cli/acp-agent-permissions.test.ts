/**
 * An ACP agent's permission question (`session/request_permission`) is the
 * hall's question: asked on the run's permission channel, answered from the
 * hall's faces (the socket's `answer` and the dashboard's HTTP answer, with
 * `dashboard.questions`) or refused by `permission_timeout`, and the answer
 * is the agent's matching option (docs/agents.md). A cancel withdraws a
 * question still open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { REPO, tapEvents } from '../support/hall-client.js';
import { apiPost, boardOf } from '../dashboard/dashboard-support.js';
import { doneOf, eventsFile, hall, hallForFile, removeRoots, request, socketOf } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const AGENT = path.join(REPO, 'test', 'fixtures', 'scripted-acp-agent.mjs');

const RAIDERS = `raiders:\n  scripted: { acp: { command: ${JSON.stringify(AGENT)} } }\n`;
const file = hallForFile(`${RAIDERS}dashboard: { listen: "127.0.0.1:0", questions: true }\npermission_timeout: 60\n`);
const impatient = hallForFile(`${RAIDERS}dashboard: { listen: "127.0.0.1:0", questions: true }\npermission_timeout: 1\n`);

function permissionEvents(id: string, root = file.root): Array<Record<string, unknown>> {
  const lines = fs.readFileSync(eventsFile(root, id), 'utf8').trim().split('\n');
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.type === 'permission');
}

describe.concurrent("an ACP agent's permission question", () => {
  const cases: Array<[string, string, string]> = [
    ['once', 'allowed', 'allowed'],
    ['no', 'refused', 'refused'],
  ];
  for (const [answer, response, decision] of cases) {
    it(`answered ${answer} on the socket: the agent gets its ${decision === 'allowed' ? 'allow_once' : 'reject_once'} option`, async () => {
      const tap = await tapEvents(socketOf(file.root), 'permission.');
      try {
        const run = await request(socketOf(file.root), { cmd: 'spawn', name: 'scripted', mission: 'ask' });
        const asked = await tap.waitFor((e) => e.type === 'permission.asked' && e.id === run.id, 60_000);
        expect(asked).toMatchObject({ question: 'q1', title: 'rm -rf build', kind: 'execute' });
        expect(await request(socketOf(file.root), { cmd: 'answer', run: run.id, question: 'q1', answer })).toMatchObject({ answered: 1 });
        expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response });
        expect(permissionEvents(run.id)).toEqual([expect.objectContaining({ call: 't1', decision, asked: true, answer })]);
      } finally {
        tap.close();
      }
    });
  }

  it('answered session: the question names a rule, and the agent gets its allow_always option', async () => {
    const tap = await tapEvents(socketOf(file.root), 'permission.');
    try {
      const run = await request(socketOf(file.root), {
        cmd: 'spawn',
        name: 'scripted',
        mission: 'ask allow_once,allow_always,reject_once',
      });
      const asked = await tap.waitFor((e) => e.type === 'permission.asked' && e.id === run.id, 60_000);
      expect(asked).toMatchObject({ question: 'q1', rule: 'execute(rm -rf build)' });
      expect(await request(socketOf(file.root), { cmd: 'answer', run: run.id, question: 'q1', answer: 'session' })).toMatchObject({
        answered: 1,
      });
      expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: 'allowed always' });
      expect(permissionEvents(run.id)).toEqual([
        expect.objectContaining({ call: 't1', decision: 'allowed', asked: true, answer: 'session', rule: 'execute(rm -rf build)' }),
      ]);
    } finally {
      tap.close();
    }
  });

  it('an answer the agent offers no option for is refused, with the reason', async () => {
    const tap = await tapEvents(socketOf(file.root), 'permission.');
    try {
      const run = await request(socketOf(file.root), { cmd: 'spawn', name: 'scripted', mission: 'ask allow_always,reject_once' });
      await tap.waitFor((e) => e.type === 'permission.asked' && e.id === run.id, 60_000);
      await request(socketOf(file.root), { cmd: 'answer', run: run.id, question: 'q1', answer: 'once' });
      expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: 'refused' });
      expect(permissionEvents(run.id)).toEqual([
        expect.objectContaining({
          decision: 'refused',
          answer: 'no',
          reason: 'the agent offers no option for the answer once (it offers allow_always, reject_once); refused',
        }),
      ]);
    } finally {
      tap.close();
    }
  });

  it("answered once on the dashboard's HTTP answer endpoint", async () => {
    const tap = await tapEvents(socketOf(file.root), 'permission.');
    try {
      const board = await boardOf(file.root);
      const run = await request(socketOf(file.root), { cmd: 'spawn', name: 'scripted', mission: 'ask' });
      await tap.waitFor((e) => e.type === 'permission.asked' && e.id === run.id, 60_000);
      const posted = await apiPost(board, `/api/questions/${encodeURIComponent(`${run.id}:q1`)}/answer`, { answer: 'once' });
      expect(posted).toMatchObject({ status: 200, answered: 1, answer: 'once' });
      expect(await tap.waitFor((e) => e.type === 'permission.answered' && e.id === run.id, 60_000)).toMatchObject({ by: 'dashboard' });
      expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: 'allowed' });
      expect(permissionEvents(run.id)).toEqual([expect.objectContaining({ decision: 'allowed', asked: true, answer: 'once' })]);
    } finally {
      tap.close();
    }
  });

  it('a cancel withdraws the open question: the agent gets the outcome cancelled, the hall answers it by: hall', async () => {
    const tap = await tapEvents(socketOf(file.root), 'permission.');
    try {
      const run = await request(socketOf(file.root), { cmd: 'spawn', name: 'scripted', mission: 'ask' });
      await tap.waitFor((e) => e.type === 'permission.asked' && e.id === run.id, 60_000);
      await request(socketOf(file.root), { cmd: 'cancel', id: run.id });
      expect(await tap.waitFor((e) => e.type === 'permission.answered' && e.id === run.id, 60_000)).toMatchObject({
        question: 'q1',
        answer: 'no',
        by: 'hall',
      });
      expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'cancelled' });
      expect(permissionEvents(run.id)).toEqual([
        expect.objectContaining({
          call: 't1',
          decision: 'refused',
          withdrawn: true,
          reason: 'the run was cancelled: the question was withdrawn',
        }),
      ]);
      expect((await hall(['logs', run.id], file.root)).stdout).toContain('scripted agent: permission outcome cancelled');
    } finally {
      tap.close();
    }
  });

  it('unanswered within permission_timeout: refused, by: timeout', async () => {
    const tap = await tapEvents(socketOf(impatient.root), 'permission.');
    try {
      const run = await request(socketOf(impatient.root), { cmd: 'spawn', name: 'scripted', mission: 'ask' });
      expect(await tap.waitFor((e) => e.type === 'permission.answered' && e.id === run.id, 60_000)).toMatchObject({
        answer: 'no',
        by: 'timeout',
      });
      expect(await doneOf(impatient.tap, run.id)).toMatchObject({ status: 'completed', response: 'refused' });
      expect(permissionEvents(run.id, impatient.root)).toEqual([
        expect.objectContaining({ decision: 'refused', asked: true, answer: 'no' }),
      ]);
    } finally {
      tap.close();
    }
  });
});
