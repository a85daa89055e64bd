/**
 * The Questions region in a real browser (Chromium) on a hall with
 * `dashboard.questions: true` and real raider processes asking on their
 * permission channel: each question with its title, tool, input, the rule
 * `Allow for session` adds and a countdown; the three answers reach the
 * raider; an answer that comes after another face's is shown as refused;
 * no buttons when read-only.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestHall } from '../support/test-hall.js';
import { useBrowserBoard } from './browser-board.js';
import { skipBrowserTests } from './browser.js';
import { startBoardHall } from './dashboard-support.js';

if (skipBrowserTests !== null) console.warn(`dashboard browser tests skipped: ${skipBrowserTests}`);

const CONFIG = 'dashboard: { listen: "127.0.0.1:0", questions: true }\npermission_timeout: 60\n';

describe.skipIf(skipBrowserTests !== null)('the Questions region in Chromium', { timeout: 60_000 }, () => {
  const browserBoard = useBrowserBoard(CONFIG);
  const { problems, loggedIn } = browserBoard;
  let hall: TestHall;
  beforeAll(() => {
    hall = browserBoard.hall;
  });

  it('shows each open question with its details; Allow once reaches the raider; a late answer is refused', async () => {
    const page = await loggedIn();
    const region = page.getByRole('region', { name: 'Questions' });
    await region.getByText('No raider is asking.').waitFor();
    const tap = await hall.events('');
    try {
      const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 2' });
      const first = region.locator('article').filter({ hasText: 'echo 1' });
      await first.getByRole('heading', { name: 'echo 1' }).waitFor();
      const text = (await first.textContent()) ?? '';
      expect(text).toContain(run.id);
      expect(text).toContain('bash');
      expect(text).toContain('Bash(echo *)');
      expect(text, text).toMatch(/Refused automatically in (5\d|60) s/);
      await first.getByRole('button', { name: 'Allow once' }).click();
      expect(await tap.waitFor((e) => e.type === 'permission.answered' && e.question === 'q1')).toMatchObject({
        answer: 'once',
        by: 'dashboard',
      });

      // The page holds its updates while another face answers q2: its Refuse comes second.
      const second = region.locator('article').filter({ hasText: 'echo 2' });
      await second.getByRole('button', { name: 'Refuse' }).waitFor();
      await page.getByRole('button', { name: 'Freeze' }).click();
      expect(await hall.request({ cmd: 'answer', run: run.id, question: 'q2', answer: 'session' })).toMatchObject({ answered: 1 });
      await second.getByRole('button', { name: 'Refuse' }).click();
      await expect.poll(() => second.getByRole('alert').textContent()).toMatch(/already answered \(session, from the socket\)/);
      expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id)).response).toBe('["once","session"]');
      await page.getByRole('button', { name: 'Freeze' }).click();
      await region.getByText('No raider is asking.').waitFor();
    } finally {
      tap.close();
    }
  });

  it('Allow for session covers the rest of the run; Refuse refuses', async () => {
    const page = await loggedIn();
    const region = page.getByRole('region', { name: 'Questions' });
    const tap = await hall.events('raider.done');
    try {
      const run = await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'ask 3' });
      await region.locator('article').filter({ hasText: run.id }).getByRole('button', { name: 'Allow for session' }).click();
      expect((await tap.waitFor((e) => e.id === run.id)).response).toBe('["session","session(remembered)","session(remembered)"]');
      const refused = await hall.request({ cmd: 'spawn', name: 'ivar', mission: 'ask 1' });
      await region.locator('article').filter({ hasText: refused.id }).getByRole('button', { name: 'Refuse' }).click();
      expect((await tap.waitFor((e) => e.id === refused.id)).response).toBe('["no"]');
    } finally {
      tap.close();
    }
  });

  it('shows questions without buttons when read-only', async () => {
    const ro = await startBoardHall(CONFIG.replace('questions: true', 'questions: true, read_only: true'));
    try {
      const tap = await ro.hall.events('permission.asked');
      await ro.hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
      await tap.waitFor(() => true);
      tap.close();
      const page = await loggedIn(ro.board);
      const region = page.getByRole('region', { name: 'Questions' });
      await region.getByRole('heading', { name: 'echo 1' }).waitFor();
      expect(await region.getByRole('button').count()).toBe(0);
    } finally {
      await ro.hall.stop();
    }
  });

  it('ran without script errors or CSP violations', () => {
    expect(problems).toEqual([]);
  });
});
