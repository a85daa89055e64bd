/**
 * The top-level `questions:` key: which faces take the permission questions
 * of runs no editor watches. On real halls with the default faces and real
 * (fake) raider processes asking on their permission channel: the socket
 * alone (`questions: { socket: true }`), the dashboard under the new key,
 * and the old `dashboard.questions` as an alias with its config warning.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseHallConfig } from '../../src/adapters/config/hall-config-schema.js';
import { defaultAdapters } from '../../src/actors/default-adapters.js';
import { startTestHall, type TestHall } from '../support/test-hall.js';
import { apiGet, boardOf } from '../dashboard/dashboard-support.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

async function questionsHall(config: string): Promise<TestHall> {
  hall = await startTestHall({ config: `raiders: { bjorn: {} }\npermission_timeout: 60\n${config}`, adapters: defaultAdapters });
  return hall;
}

describe('questions: { socket: true }', () => {
  it('gives a run no editor watches a permission channel with no dashboard, and the socket answers it', async () => {
    const hall = await questionsHall('questions: { socket: true }\n');
    const tap = await hall.events('');
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
    expect(await tap.waitFor((e) => e.type === 'permission.asked')).toMatchObject({ id: run.id, question: 'q1', tool: 'bash' });
    expect(await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'once' })).toEqual({
      answered: 1,
      run: run.id,
      question: 'q1',
      answer: 'once',
    });
    expect(await tap.waitFor((e) => e.type === 'permission.answered')).toMatchObject({ id: run.id, answer: 'once', by: 'socket' });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id)).response).toBe('["once"]');
    tap.close();
  });

  it('without any questions key such a run still gets no channel, and answer names the new key', async () => {
    const hall = await questionsHall('questions: { socket: false }\n');
    const tap = await hall.events('raider.done');
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
    expect((await tap.waitFor((e) => e.id === run.id)).response).toBe('["no channel"]');
    expect((await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'once' })).error).toMatch(
      /questions: \{ socket: true \}/,
    );
    tap.close();
  });
});

describe('questions: { dashboard: true }', () => {
  it('puts the questions on the dashboard, as dashboard.questions did', async () => {
    const hall = await questionsHall('dashboard: { listen: "127.0.0.1:0" }\nquestions: { dashboard: true }\n');
    const board = await boardOf(hall.root);
    const tap = await hall.events('');
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
    await tap.waitFor((e) => e.type === 'permission.asked');
    const listed = await apiGet(board, '/api/questions');
    expect(listed).toMatchObject({ status: 200, enabled: true });
    expect(listed.questions).toEqual([expect.objectContaining({ key: `${run.id}:q1` })]);
    expect(await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'no' })).toMatchObject({ answered: 1 });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id)).response).toBe('["no"]');
    tap.close();
  });
});

describe('the questions key in .raider-hall.yml', () => {
  const load = (text: string) => parseHallConfig(text, '.raider-hall.yml');

  it('defaults to no face; takes dashboard and socket', () => {
    expect(load('raiders: {}\n')).toMatchObject({ ok: true, config: { questions: { dashboard: false, socket: false } }, warnings: [] });
    const both = load('dashboard: { listen: "127.0.0.1:0" }\nquestions: { dashboard: true, socket: true }\n');
    expect(both).toMatchObject({ ok: true, config: { questions: { dashboard: true, socket: true }, dashboard: { questions: true } } });
    expect(both.ok && both.warnings).toEqual([]);
  });

  it('dashboard.questions still works, with a warning naming questions.dashboard', () => {
    const old = load('dashboard: { listen: "127.0.0.1:0", questions: true }\n');
    expect(old).toMatchObject({ ok: true, config: { questions: { dashboard: true, socket: false }, dashboard: { questions: true } } });
    expect(old.ok && old.warnings).toEqual(['.raider-hall.yml: dashboard.questions: moved to questions.dashboard (it still works here)']);
  });

  it('warns of questions.dashboard without a dashboard, and of a face it does not know; refuses a value that is no flag', () => {
    const alone = load('questions: { dashboard: true }\n');
    expect(alone.ok && alone.warnings).toEqual(['.raider-hall.yml: questions.dashboard: no dashboard: section, so no dashboard asks']);
    const unknown = load('questions: { pager: true }\n');
    expect(unknown.ok && unknown.warnings).toEqual([expect.stringMatching(/questions\.pager/)]);
    const bad = load('questions: { socket: maybe }\n');
    expect(bad.ok ? [] : bad.errors).toEqual([expect.stringMatching(/^\.raider-hall\.yml: questions\.socket: expected true or false/)]);
  });
});
