/**
 * An ACP agent's permission question (`session/request_permission`) is the
 * hall's question: asked on the run's permission channel, answered from the
 * hall's faces (here the socket's `answer`, with `dashboard.questions`), and
 * the answer is the agent's matching option (docs/agents.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { REPO, tapEvents } from '../support/hall-client.js';
import { doneOf, eventsFile, hallForFile, removeRoots, request, socketOf } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const AGENT = path.join(REPO, 'test', 'fixtures', 'scripted-acp-agent.mjs');

const file = hallForFile(
  `raiders:\n  scripted: { acp: { command: ${JSON.stringify(AGENT)} } }\n` +
    'dashboard: { listen: "127.0.0.1:0", questions: true }\npermission_timeout: 60\n',
);

function permissionEvents(id: string): Array<Record<string, unknown>> {
  const lines = fs.readFileSync(eventsFile(file.root, id), 'utf8').trim().split('\n');
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
});
