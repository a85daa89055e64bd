/**
 * A run's page as a conversation and the charts people ask for, in Chromium
 * on real halls with real raider processes: the built-in raider playing a
 * script (a tool call, an edit shown as a diff, a permission the policy
 * refused, the answer), a cancel's escalation, and the charts' outcome
 * counts and queue waits of runs that happened.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardAdapter } from '../../src/adapters/dashboard/dashboard-adapter.js';
import { eventually, runStarted, tempRoot, type Json, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { startTestHall, type TestHall } from '../support/test-hall.js';
import { useBrowserBoard } from './browser-board.js';
import { skipBrowserTests } from './browser.js';
import { boardOf, runToEnd, type Board } from './dashboard-support.js';

if (skipBrowserTests !== null) console.warn(`dashboard run page browser tests skipped: ${skipBrowserTests}`);

const CONFIG = 'cancel_grace: 0.3\nraiders: { ivar: {} }\ndashboard: { listen: "127.0.0.1:0" }\n';

/** A listing, a long file read, an edit of notes.txt, a shell command the person is asked about, the answer. */
const SCRIPT = `replies:
  - steps:
      - tool: list_dir
        arguments: { path: "." }
      - tool: read_file
        arguments: { path: "long.txt" }
      - tool: edit_file
        arguments: { path: "notes.txt", old_string: "old line", new_string: "new line" }
      - tool: bash
        arguments: { command: "echo hi" }
      - message: "I looked: {{mission}}"
`;

describe.skipIf(skipBrowserTests !== null)("a run's page and the charts in Chromium", { timeout: 60_000 }, () => {
  const browserBoard = useBrowserBoard(CONFIG);
  const { problems, foreign, failedLoads } = browserBoard;
  let hall: TestHall;
  let scripted: { hall: TestHall; board: Board };
  beforeAll(async () => {
    ({ hall } = browserBoard);
    const root = tempRoot('dashboard-run-page-');
    fs.mkdirSync(path.join(root, '.raider'), { recursive: true });
    fs.writeFileSync(path.join(root, '.raider', 'script.yml'), SCRIPT);
    fs.writeFileSync(path.join(root, 'notes.txt'), 'old line\n');
    fs.writeFileSync(path.join(root, 'long.txt'), Array.from({ length: 40 }, (_v, i) => `line ${i + 1}`).join('\n'));
    const scriptedHall = await startTestHall({
      root,
      config:
        'permission_timeout: 60\nraiders:\n  bjorn: { engine: scripted, permission_mode: acceptEdits }\n' +
        `  astrid: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)} } }\n` +
        'questions: { dashboard: true }\ndashboard: { listen: "127.0.0.1:0" }\n',
      adapters: [dashboardAdapter],
      env: { RAIDER_HALL_RAIDER_BIN: undefined },
    });
    scripted = { hall: scriptedHall, board: await boardOf(root) };
  }, 60_000);
  afterAll(async () => {
    await scripted?.hall.stop();
  });

  async function loggedIn(hash: string, target: Board = browserBoard.board): Promise<Page> {
    const page = await browserBoard.loggedIn(target);
    await page.goto(`${target.url}${hash}`);
    return page;
  }

  it('shows the run as a conversation, live: mission, tool calls with input and result, an edit as a diff, a question and its answer, the end', async () => {
    const mission = 'look <b id="bold">around</b>';
    const run = await scripted.hall.request({ cmd: 'spawn', name: 'bjorn', mission });
    const page = await loggedIn(`#/runs/${run.id}`, scripted.board);
    const talk = page.getByRole('region', { name: 'Conversation' });
    // The run waits for the person: the page shows what it did so far, and the question.
    await talk.getByRole('article', { name: 'Tool call edit_file' }).waitFor();
    await talk
      .getByRole('status')
      .getByText(/Running/)
      .waitFor();
    const question = page.getByRole('region', { name: 'Questions' }).locator('article').filter({ hasText: run.id });
    await question.getByRole('button', { name: 'Allow once' }).click();
    await talk.getByRole('article', { name: 'End' }).getByText('completed').waitFor();
    const parts = await talk.getByRole('article').evaluateAll((all) => all.map((a) => a.getAttribute('aria-label')));
    expect(parts).toEqual([
      'Mission',
      'Tool call list_dir',
      'Tool call read_file',
      'Tool call edit_file',
      'Tool call bash',
      'Permission bash',
      'Agent message',
      'End',
    ]);
    await talk.getByRole('article', { name: 'Mission' }).getByText(mission, { exact: true }).waitFor();
    expect(await page.locator('#bold').count()).toBe(0);
    const listing = talk.getByRole('article', { name: 'Tool call list_dir' });
    expect(await listing.getByLabel('Input').textContent()).toContain('"path": "."');
    expect(await listing.getByLabel('Result').textContent()).toContain('notes.txt');
    await listing.getByText('succeeded').waitFor();
    // A long result starts collapsed behind its disclosure, whole once opened.
    const long = talk.getByRole('article', { name: 'Tool call read_file' }).locator('details');
    expect(await long.locator('summary').textContent()).toMatch(/^Result \(\d+ characters\)$/);
    expect(await long.getAttribute('open')).toBeNull();
    expect(await long.getByLabel('Result').isVisible()).toBe(false);
    await long.locator('summary').click();
    expect(await long.getByLabel('Result').textContent()).toMatch(/line 1\b[\s\S]*line 40/);
    const diff = talk.getByRole('article', { name: 'Tool call edit_file' }).getByLabel('Diff');
    expect((await diff.textContent())?.split('\n')).toEqual(['--- notes.txt', '+++ notes.txt', '-old line', '+new line', '']);
    // The question is shown in the call it is about.
    const permission = talk.getByRole('article', { name: 'Tool call bash' }).getByRole('article', { name: 'Permission bash' });
    await permission.getByRole('heading', { name: /Asked: may it run bash/ }).waitFor();
    expect(await permission.textContent()).toMatch(/allowed once/);
    const shell = talk.getByRole('article', { name: 'Tool call bash' });
    await shell.getByText('succeeded').waitFor();
    expect(await shell.getByLabel('Result').textContent()).toContain('hi');
    await talk.getByRole('article', { name: 'Agent message' }).getByText(`I looked: ${mission}`).waitFor();
    await talk.getByRole('status').waitFor({ state: 'detached' });
  });

  it("shows an ACP agent's run the same way: its streamed messages, a tool call with its title, kind, input and result, a question refused", async () => {
    const done = await runToEnd(scripted.hall, 'astrid', 'tool');
    expect(done.status).toBe('completed');
    const page = await loggedIn(`#/runs/${done.id}`, scripted.board);
    const talk = page.getByRole('region', { name: 'Conversation' });
    await talk.getByRole('article', { name: 'End' }).getByText('completed').waitFor();
    const parts = await talk.getByRole('article').evaluateAll((all) => all.map((a) => a.getAttribute('aria-label')));
    expect(parts).toEqual(['Mission', 'Agent message', 'Tool call Read README.md', 'Agent message', 'End']);
    const read = talk.getByRole('article', { name: 'Tool call Read README.md' });
    expect(await read.getByRole('heading').textContent()).toMatch(/Read README\.md\s+read\s+succeeded/);
    expect(await read.getByLabel('Input').textContent()).toContain('"path": "README.md"');
    expect(await read.getByLabel('Result').textContent()).toBe('# the readme');
    expect(await talk.getByRole('article', { name: 'Agent message' }).allTextContents()).toEqual([
      expect.stringContaining('Let me read it.'),
      expect.stringContaining('all read'),
    ]);

    const asking = await scripted.hall.request({ cmd: 'spawn', name: 'astrid', mission: 'ask' });
    const live = await loggedIn(`#/runs/${asking.id}`, scripted.board);
    const question = live.getByRole('region', { name: 'Questions' }).locator('article').filter({ hasText: asking.id });
    await question.getByRole('button', { name: 'Refuse' }).click();
    const liveTalk = live.getByRole('region', { name: 'Conversation' });
    await liveTalk.getByRole('article', { name: 'End' }).getByText('completed').waitFor();
    const call = liveTalk.getByRole('article', { name: 'Tool call rm -rf build' });
    expect(await call.getByRole('article', { name: 'Permission rm -rf build' }).textContent()).toMatch(
      /Asked: may it run rm -rf build\?refused/,
    );
    await liveTalk.getByRole('article', { name: 'Agent message' }).getByText('refused', { exact: true }).waitFor();
  });

  it("shows an agent's plan, thought, streamed message and usage, and counts its tokens and cost on the charts", async () => {
    const done = await runToEnd(hall, 'ivar', 'report 1234 0.25');
    const page = await loggedIn(`#/runs/${done.id}`);
    const talk = page.getByRole('region', { name: 'Conversation' });
    await talk.getByRole('article', { name: 'End' }).waitFor();
    const parts = await talk.getByRole('article').evaluateAll((all) => all.map((a) => a.getAttribute('aria-label')));
    expect(parts).toEqual(['Mission', 'Plan', 'Agent thought', 'Agent message', 'Usage', 'Plan', 'End']);
    // The two chunks are one message, and the final message that repeats them is not shown again.
    await talk.getByRole('article', { name: 'Agent message' }).getByText('reported', { exact: true }).waitFor();
    expect(await talk.getByRole('article', { name: 'Usage' }).textContent()).toMatch(/1234 of 200000 tokens.*0\.2500 USD/);
    const plan = talk.getByRole('article', { name: 'Plan' }).last().getByRole('listitem');
    expect(await plan.allTextContents()).toEqual([
      expect.stringMatching(/read the notes \(completed, high\)/),
      expect.stringMatching(/write the summary \(pending, medium\)/),
    ]);

    await runToEnd(hall, 'ivar', 'report 1000');
    const charts = await loggedIn('#/charts');
    const row = charts
      .getByRole('table', { name: 'Usage per day' })
      .getByRole('row')
      .filter({ has: charts.getByRole('cell', { name: 'ivar', exact: true }) });
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells[0]).toBe(new Date().toISOString().slice(0, 10));
    expect(Number(cells[3])).toBe(2);
    expect(Number(cells[4])).toBe(2234);
    expect(cells[5]).toBe('0.2500 USD');
  });

  it("draws a cancelled run's escalation in its conversation: SIGINT at t, SIGTERM a grace later, SIGKILL, then the end", async () => {
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'deaf 30' });
    await runStarted(run.events_path);
    const page = await loggedIn(`#/runs/${run.id}`);
    const talk = page.getByRole('region', { name: 'Conversation' });
    await talk
      .getByRole('status')
      .getByText(/Running/)
      .waitFor();
    await page.getByRole('button', { name: `Cancel ${run.id}` }).click();
    await talk.getByRole('article', { name: 'End' }).getByText('failed').waitFor();
    const escalation = talk.getByRole('article', { name: 'Cancel escalation' });
    await escalation.getByText(/Cancel asked at/).waitFor();
    const signals = await escalation.getByRole('list', { name: 'Signals' }).getByRole('listitem').allTextContents();
    expect(signals.map((s) => /^SIG\w+/.exec(s)?.[0])).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL']);
    expect(signals[0]).toMatch(/at t = \d\d:\d\d:\d\d/);
    const termAt = Number(/t \+ (\d+\.\d\d) s/.exec(signals[1] ?? '')?.[1]);
    expect(termAt).toBeGreaterThanOrEqual(0.29);
    const killAt = Number(/t \+ (\d+\.\d\d) s/.exec(signals[2] ?? '')?.[1]);
    expect(killAt).toBeGreaterThanOrEqual(termAt);
    expect(await talk.getByRole('article', { name: 'End' }).textContent()).toMatch(/killed by signal 9/);
  });

  it('counts the runs by outcome and the queue waits per slot, median and p90, on the charts page', async () => {
    const gate = path.join(hall.root, 'gate');
    const events = await hall.events('raider.');
    let waiting: Json;
    try {
      const first = await hall.request({ cmd: 'spawn', name: '1ivar', mission: `until ${gate}` });
      waiting = await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'answer after the first' });
      expect(waiting.queued).toBe(1);
      await events.waitFor((e) => e.type === 'raider.spawned' && e.id === first.id);
      fs.writeFileSync(gate, '');
      await events.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === waiting.mission_id);
      await runToEnd(hall, 'bjorn', 'fail on purpose');
      await eventually(() => expect(events.all.filter((e) => e.type === 'raider.done' && e.slot === '1ivar').length).toBe(2));
    } finally {
      events.close();
    }
    const page = await loggedIn('#/charts');
    const charts = page.getByRole('region', { name: 'Charts' });
    for (const name of ['Runs by outcome', 'Queue wait per slot', 'Tokens per day'])
      await charts.getByRole('figure', { name }).locator('canvas').first().waitFor();
    const outcomes = charts.getByRole('table', { name: 'Outcomes' });
    const heads = await outcomes.getByRole('columnheader').allTextContents();
    const counts = (await outcomes.getByRole('cell').allTextContents()).map(Number);
    const count = (outcome: string) => counts[heads.indexOf(outcome)] ?? -1;
    expect(count('completed')).toBeGreaterThanOrEqual(2);
    expect(count('failed')).toBeGreaterThanOrEqual(1);
    const slot = charts.getByRole('table', { name: 'Queue wait' }).getByRole('row').filter({ hasText: '1ivar' });
    const cells = await slot.getByRole('cell').allTextContents();
    expect(cells[1]).toBe('1');
    expect(Number.parseFloat(cells[2] ?? '')).toBeGreaterThan(0);
    expect(cells[3]).toBe(cells[2]);
  });

  it('ran without script errors, CSP violations, failed loads or requests outside its origin', () => {
    expect(problems).toEqual([]);
    expect(failedLoads).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
