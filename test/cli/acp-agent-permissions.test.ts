import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type EventTap, type Json, readJsonLines, tapEvents, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { apiGet, apiPost, boardOf } from '../dashboard/dashboard-support.js';
import { doneOf, eventsFile, type FileHall, hall, hallForFile, removeRoots, request, socketOf } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const RAIDERS = `raiders:\n  scripted: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)} } }\n`;
const ASKING = 'dashboard: { listen: "127.0.0.1:0" }\nquestions: { dashboard: true }\n';
const file = hallForFile(`${RAIDERS}${ASKING}permission_timeout: 60\n`);
const impatient = hallForFile(`${RAIDERS}${ASKING}permission_timeout: 1\n`);

/**
 * Spawns `mission` of the scripted agent on `on`, waits until the hall has
 * asked its question, and hands the run, the question's event and the tap of
 * `permission.*` events to `then`.
 */
async function whenAsked(on: FileHall, mission: string, then: (run: Json, asked: Json, tap: EventTap) => Promise<void>): Promise<void> {
  const tap = await tapEvents(socketOf(on.root), 'permission.');
  try {
    const run = await request(socketOf(on.root), { cmd: 'spawn', name: 'scripted', mission });
    const asked = await tap.waitFor((e) => e.type === 'permission.asked' && e.id === run.id, 60_000);
    await then(run, asked, tap);
  } finally {
    tap.close();
  }
}

const answer = (run: Json, word: string) => request(socketOf(file.root), { cmd: 'answer', run: run.id, question: 'q1', answer: word });

function runEvents(id: string, root = file.root): Json[] {
  return readJsonLines(eventsFile(root, id));
}

function permissionEvents(id: string, root = file.root): Json[] {
  return runEvents(id, root).filter((e) => e.type === 'permission');
}

describe.concurrent("an ACP agent's permission question", () => {
  const cases: Array<[string, string, string]> = [
    ['once', 'allowed', 'allowed'],
    ['no', 'refused', 'refused'],
  ];
  for (const [word, response, decision] of cases) {
    it(`answered ${word} on the socket: the agent gets its ${decision === 'allowed' ? 'allow_once' : 'reject_once'} option`, () =>
      whenAsked(file, 'ask', async (run, asked) => {
        expect(asked).toMatchObject({ question: 'q1', title: 'rm -rf build', kind: 'execute' });
        expect(await answer(run, word)).toMatchObject({ answered: 1 });
        expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response });
        expect(permissionEvents(run.id)).toEqual([expect.objectContaining({ call: 't1', decision, asked: true, answer: word })]);
      }));
  }

  it('answered session: the question names a rule, and the agent gets its allow_always option', () =>
    whenAsked(file, 'ask allow_once,allow_always,reject_once', async (run, asked) => {
      expect(asked).toMatchObject({ question: 'q1', rule: 'execute(rm -rf build)' });
      expect(await answer(run, 'session')).toMatchObject({ answered: 1 });
      expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: 'allowed always' });
      expect(permissionEvents(run.id)).toEqual([
        expect.objectContaining({ call: 't1', decision: 'allowed', asked: true, answer: 'session', rule: 'execute(rm -rf build)' }),
      ]);
    }));

  it("a question naming the agent's call by its id alone shows the call as the agent announced it, and its rule names the agent's kind", () => {
    const target = path.join(file.root, 'bare.txt');
    return whenAsked(file, `askbare ${target}`, async (run, asked) => {
      // The agent announced `e1` with its title, kind and input, then asked about { toolCallId: 'e1' } alone.
      const title = `Edit ${target}`;
      const rule = `edit(${title})`;
      const named = { title, tool: title, kind: 'edit', input: { file_path: target }, rule };
      expect(asked).toMatchObject({ question: 'q1', ...named });
      const listed = await apiGet(await boardOf(file.root), '/api/questions');
      // The file's runs share one hall and go at once: the list holds their questions too.
      const ours = listed.questions.filter((q: Json) => q.run === run.id);
      expect(ours).toEqual([expect.objectContaining({ key: `${run.id}:q1`, ...named })]);
      expect(await answer(run, 'session')).toMatchObject({ answered: 1 });
      expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: 'edited always' });
      expect(permissionEvents(run.id)).toEqual([
        expect.objectContaining({ call: 'e1', name: title, decision: 'allowed', asked: true, answer: 'session', rule }),
      ]);
    });
  });

  it('a question giving some fields of an announced call: each given replaces, the rest stay as announced or updated', () => {
    const target = path.join(file.root, 'part.txt');
    return whenAsked(file, `askpart ${target}`, async (run, asked) => {
      // Announced with title, kind and input; an update gave a new input; the question gives a new title alone.
      const title = `Edit ${target} at line 3`;
      expect(asked).toMatchObject({ title, tool: title, kind: 'edit', input: { file_path: target, line: 3 }, rule: `edit(${title})` });
      expect(await answer(run, 'once')).toMatchObject({ answered: 1 });
      expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: 'edited' });
      expect(permissionEvents(run.id)).toEqual([expect.objectContaining({ call: 'e1', name: title, decision: 'allowed', answer: 'once' })]);
      // The turn goes on knowing the call by the title the question gave it.
      const results = runEvents(run.id).filter((e) => e.type === 'tool.result' && e.call === 'e1');
      expect(results).toEqual([expect.objectContaining({ title, kind: 'edit' })]);
    });
  });

  it('an answer the agent offers no option for is refused, with the reason', () =>
    whenAsked(file, 'ask allow_always,reject_once', async (run) => {
      await answer(run, 'once');
      expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: 'refused' });
      expect(permissionEvents(run.id)).toEqual([
        expect.objectContaining({
          decision: 'refused',
          answer: 'no',
          reason: 'the agent offers no option for the answer once (it offers allow_always, reject_once); refused',
        }),
      ]);
    }));

  it("answered once on the dashboard's HTTP answer endpoint", () =>
    whenAsked(file, 'ask', async (run, _asked, tap) => {
      const board = await boardOf(file.root);
      const posted = await apiPost(board, `/api/questions/${encodeURIComponent(`${run.id}:q1`)}/answer`, { answer: 'once' });
      expect(posted).toMatchObject({ status: 200, answered: 1, answer: 'once' });
      expect(await tap.waitFor((e) => e.type === 'permission.answered' && e.id === run.id, 60_000)).toMatchObject({ by: 'dashboard' });
      expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: 'allowed' });
      expect(permissionEvents(run.id)).toEqual([expect.objectContaining({ decision: 'allowed', asked: true, answer: 'once' })]);
    }));

  it('a cancel withdraws the open question: the agent gets the outcome cancelled, the hall answers it by: hall', () =>
    whenAsked(file, 'ask', async (run, _asked, tap) => {
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
    }));

  it('unanswered within permission_timeout: refused, by: timeout', () =>
    whenAsked(impatient, 'ask', async (run, _asked, tap) => {
      expect(await tap.waitFor((e) => e.type === 'permission.answered' && e.id === run.id, 60_000)).toMatchObject({
        answer: 'no',
        by: 'timeout',
      });
      expect(await doneOf(impatient.tap, run.id)).toMatchObject({ status: 'completed', response: 'refused' });
      expect(permissionEvents(run.id, impatient.root)).toEqual([
        expect.objectContaining({ decision: 'refused', asked: true, answer: 'no' }),
      ]);
    }));
});
