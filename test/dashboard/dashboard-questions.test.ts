/**
 * Permission questions of runs that no ACP client watches, with
 * `dashboard.questions: true`, on real halls with real (fake) raider
 * processes asking on their permission channel: on the bus
 * (`permission.asked`, `permission.answered`), in `GET /api/questions`,
 * answered from the dashboard or the socket's `answer` (the first wins, the
 * other is told), `no` after permission_timeout, and today's behaviour
 * without the key.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/hall-client.js';
import type { TestHall } from '../support/test-hall.js';
import { startBoardHall } from './dashboard-support.js';
import { apiGet as get, apiPost as post } from './dashboard-support.js';

const halls: TestHall[] = [];
afterEach(async () => {
  for (const hall of halls.splice(0)) await hall.stop();
});

const QUESTIONS = 'dashboard: { listen: "127.0.0.1:0", questions: true }\npermission_timeout: 1\n';

describe('dashboard.questions: true', () => {
  it('puts each question on the bus and the API; the first answer wins, from the dashboard or the socket', async () => {
    const { hall, board } = await startBoardHall(QUESTIONS.replace('permission_timeout: 1', 'permission_timeout: 60'));
    halls.push(hall);
    const tap = await hall.events('');
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 2' });
    const asked = await tap.waitFor((e) => e.type === 'permission.asked' && e.question === 'q1');
    expect(asked).toMatchObject({
      id: run.id,
      title: 'echo 1',
      tool: 'bash',
      kind: 'execute',
      input: { command: 'echo 1' },
      rule: 'Bash(echo *)',
      deadline: expect.any(Number),
    });
    expect(asked.deadline - asked.time * 1000).toBeGreaterThan(55_000);
    const listed = await get(board, '/api/questions');
    expect(listed).toMatchObject({ status: 200, enabled: true });
    expect(listed.questions).toEqual([expect.objectContaining({ key: `${run.id}:q1`, run: run.id, question: 'q1', rule: 'Bash(echo *)' })]);
    expect((await hall.request({ cmd: 'status' })).dashboard.questions).toBe(1);
    // The live tree shows the open question under its run.
    const tree = await get(board, '/api/tree');
    const treeRun = tree.queues
      .flatMap((q: { runs: Array<{ id: string; questions: unknown[] }> }) => q.runs)
      .find((r: { id: string }) => r.id === run.id);
    expect(treeRun.questions).toEqual([expect.objectContaining({ id: run.id, question: 'q1', title: 'echo 1' })]);

    const first = await post(board, `/api/questions/${encodeURIComponent(`${run.id}:q1`)}/answer`, { answer: 'once' });
    expect(first).toEqual({ status: 200, answered: 1, run: run.id, question: 'q1', answer: 'once' });
    const late = await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'no' });
    expect(late.error).toMatch(/already answered \(once, from the dashboard\)/);
    expect(late.code).toBe('question_answered');
    const answered = await tap.waitFor((e) => e.type === 'permission.answered' && e.question === 'q1');
    expect(answered).toMatchObject({ id: run.id, answer: 'once', by: 'dashboard' });
    const treeAfter = await get(board, '/api/tree');
    const answeredRun = treeAfter.queues
      .flatMap((q: { runs: Array<{ id: string; questions: Array<{ question: string }> }> }) => q.runs)
      .find((r: { id: string }) => r.id === run.id);
    expect(answeredRun?.questions.some((q: { question: string }) => q.question === 'q1') ?? false).toBe(false);
    expect(tap.all.some((e) => e.type === 'dashboard.answer' && e.source === 'dashboard' && e.question === 'q1')).toBe(true);

    await tap.waitFor((e) => e.type === 'permission.asked' && e.question === 'q2');
    // The CLI is the socket's answer.
    const cli = await runCli(['hall', 'answer', hall.root, run.id, 'q2', 'no']);
    expect(cli.stdout).toBe(`Answered no to question q2 of ${run.id}.\n`);
    expect(cli.code).toBe(0);
    const cliLate = await runCli(['hall', 'answer', hall.root, run.id, 'q2', 'once']);
    expect(cliLate.code).toBe(1);
    expect(cliLate.stderr).toMatch(/already answered \(no, from the socket\)/);
    expect((await runCli(['hall', 'answer', hall.root, run.id, 'q2', 'always'])).code).toBe(2);
    const again = await post(board, `/api/questions/${encodeURIComponent(`${run.id}:q2`)}/answer`, { answer: 'once' });
    expect(again.status).toBe(409);
    expect(again.error).toMatch(/already answered \(no, from the socket\)/);
    const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id);
    expect(done.response).toBe('["once","no"]');
    expect((await get(board, '/api/questions')).questions).toEqual([]);
    tap.close();
  });

  it('answers no when nobody answers within permission_timeout, and refuses malformed answers', async () => {
    const { hall, board } = await startBoardHall(QUESTIONS);
    halls.push(hall);
    const tap = await hall.events('');
    const run = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'ask 1' });
    await tap.waitFor((e) => e.type === 'permission.asked' && e.id === run.id);
    const key = encodeURIComponent(`${run.id}:q1`);
    expect((await post(board, `/api/questions/${key}/answer`, { answer: 'always' })).status).toBe(400);
    expect((await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'maybe' })).error).toMatch(/once, session or no/);
    expect(await post(board, '/api/questions/nobody-1%3Aq9/answer', { answer: 'no' })).toMatchObject({
      status: 404,
      code: 'question_not_open',
    });
    const answered = await tap.waitFor((e) => e.type === 'permission.answered' && e.id === run.id);
    expect(answered).toMatchObject({ answer: 'no', by: 'timeout', reason: expect.stringMatching(/permission_timeout/) });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id)).response).toBe('["no"]');
    const late = await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'once' });
    expect(late.error).toMatch(/already answered \(no, no answer within permission_timeout\)/);
    tap.close();
  });

  it('a read-only dashboard lists questions but refuses answers (403); the socket still answers', async () => {
    const { hall, board } = await startBoardHall(
      QUESTIONS.replace('questions: true', 'questions: true, read_only: true').replace('1\n', '60\n'),
    );
    halls.push(hall);
    const tap = await hall.events('permission.');
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
    await tap.waitFor((e) => e.type === 'permission.asked');
    expect((await get(board, '/api/questions')).questions).toHaveLength(1);
    expect((await post(board, `/api/questions/${encodeURIComponent(`${run.id}:q1`)}/answer`, { answer: 'once' })).status).toBe(403);
    expect(await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'session' })).toMatchObject({ answered: 1 });
    expect((await tap.waitFor((e) => e.type === 'permission.answered')).by).toBe('socket');
    tap.close();
  });
});

describe('without dashboard.questions', () => {
  it('gives such runs no permission channel (as before), and answer says which key to set', async () => {
    const { hall, board } = await startBoardHall();
    halls.push(hall);
    const tap = await hall.events('raider.done');
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
    expect((await tap.waitFor((e) => e.id === run.id)).response).toBe('["no channel"]');
    expect((await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'once' })).error).toMatch(
      /questions: \{ socket: true \}/,
    );
    expect(await get(board, '/api/questions')).toEqual({ status: 200, enabled: false, questions: [] });
    expect((await post(board, '/api/questions/x%3Aq1/answer', { answer: 'no' })).status).toBe(404);
    tap.close();
  });
});
