/**
 * A run an ACP client watches, with `dashboard.questions: true`: its
 * question goes to the client and to the dashboard at once; the first answer
 * wins, whichever face gives it; the client's question is withdrawn when the
 * dashboard answers first, and the dashboard is told when the client did.
 */
import { describe, expect, it } from 'vitest';
import { acpAdapter } from '../../src/adapters/acp/acp-adapter.js';
import { dashboardAdapter } from '../../src/adapters/dashboard/dashboard-adapter.js';
import type { Json, TestHall } from '../support/test-hall.js';
import { acpScope, prompt, updatesOf, type AcpTestClient } from '../acp/acp-support.js';
import { bearer, boardOf, httpRequest, json, type Board } from './dashboard-support.js';

const opened = acpScope();

async function setup(): Promise<{ hall: TestHall; acp: AcpTestClient; board: Board; sessionId: string }> {
  const config = 'raiders: { bjorn: {} }\ndashboard: { listen: "127.0.0.1:0", questions: true }\npermission_timeout: 60\n';
  const started = await opened.session(config, {}, [acpAdapter, dashboardAdapter]);
  return { ...started, board: await boardOf(started.hall.root) };
}

async function answer(board: Board, key: string, value: string): Promise<Json> {
  const reply = await httpRequest(board, `/api/questions/${encodeURIComponent(key)}/answer`, {
    method: 'POST',
    headers: { ...bearer(board), ...json },
    body: JSON.stringify({ answer: value }),
  });
  return { status: reply.status, ...(JSON.parse(reply.body) as Json) };
}

function answers(sessionId: string, a: AcpTestClient): unknown {
  const chunks = updatesOf(a, sessionId).filter((u) => u.sessionUpdate === 'agent_message_chunk');
  return JSON.parse(String(chunks.at(-1)?.content.text));
}

describe('a question of a run an ACP client watches, with dashboard.questions: true', () => {
  it('the dashboard answers first: the raider gets its answer and the client its question withdrawn', async () => {
    const { hall: h, acp: a, board, sessionId } = await setup();
    const tap = await h.events('permission.');
    const withdrawn: Promise<unknown>[] = [];
    a.onPermission = (_params, signal) => {
      withdrawn.push(new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true })));
      return new Promise(() => {});
    };
    const turn = prompt(a, sessionId, 'ask 1');
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    await expect.poll(() => a.permissions.length).toBe(1);
    expect(await answer(board, `${asked.id}:q1`, 'once')).toMatchObject({ status: 200, answered: 1 });
    expect(await turn).toEqual({ stopReason: 'end_turn' });
    expect(answers(sessionId, a)).toEqual(['once']);
    await withdrawn[0];
    expect((await tap.waitFor((e) => e.type === 'permission.answered')).by).toBe('dashboard');
    tap.close();
  });

  it('the client answers first: the dashboard and the socket are told it was already answered', async () => {
    const { hall: h, acp: a, board, sessionId } = await setup();
    const tap = await h.events('permission.');
    a.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    expect(await prompt(a, sessionId, 'ask 1')).toEqual({ stopReason: 'end_turn' });
    expect(answers(sessionId, a)).toEqual(['once']);
    const answered = await tap.waitFor((e) => e.type === 'permission.answered');
    expect(answered).toMatchObject({ answer: 'once', by: 'acp' });
    const late = await answer(board, `${answered.id}:q1`, 'no');
    expect(late.status).toBe(409);
    expect(late.error).toMatch(/already answered \(once, from the ACP client\)/);
    expect((await h.request({ cmd: 'answer', run: answered.id, question: 'q1', answer: 'no' })).error).toMatch(/already answered/);
    tap.close();
  });
});
