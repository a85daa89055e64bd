/**
 * The Waiting list in a real browser (Chromium) on a real hall with real
 * raider processes: every waiting mission of each numbered slot and binding
 * in order, with where it waits, its position, age and text (HTML shown as
 * text); Move to front and Drop; live as other faces queue; no buttons when
 * read-only.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runStarted } from '../support/hall-client.js';
import type { TestHall } from '../support/test-hall.js';
import { useBrowserBoard } from './browser-board.js';
import { skipBrowserTests } from './browser.js';
import { startBoardHall } from './dashboard-support.js';

if (skipBrowserTests !== null) console.warn(`dashboard browser tests skipped: ${skipBrowserTests}`);

describe.skipIf(skipBrowserTests !== null)('the Waiting list in Chromium', { timeout: 60_000 }, () => {
  const browserBoard = useBrowserBoard();
  const { problems, loggedIn } = browserBoard;
  let hall: TestHall;
  beforeAll(() => {
    hall = browserBoard.hall;
  });

  it('shows each waiting mission live, in order, with its queue, position, age and text; Move to front and Drop act', async () => {
    const page = await loggedIn();
    const list = page.getByRole('list', { name: 'Waiting' });
    // Empty, the list is in the page but takes no room.
    await list.waitFor({ state: 'attached' });
    const running = await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'wait 600' });
    await runStarted(running.events_path);
    const a = await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'answer first' });
    const html = 'answer <img src=x onerror="document.title=\'owned\'"><b id="bold">second</b>';
    const b = await hall.request({ cmd: 'spawn', name: '1ivar', mission: html });
    const items = list.getByRole('listitem');
    await expect.poll(() => items.count()).toBe(2);
    const first = items.nth(0);
    await first.getByText('answer first', { exact: true }).waitFor();
    expect(await first.textContent()).toMatch(/slot 1ivar.*#1.*\d+ s/);
    await items.nth(1).getByText(html, { exact: true }).waitFor();
    expect(await page.locator('#bold').count()).toBe(0);
    expect(await page.locator('img').count()).toBe(0);

    await page.getByRole('button', { name: `Move to front ${b.mission_id}` }).click();
    await items.nth(0).getByText(html, { exact: true }).waitFor();
    expect(await items.nth(0).textContent()).toContain('#1');
    expect(await items.nth(1).textContent()).toContain(a.mission_id);
    expect(await page.getByRole('button', { name: `Move to front ${b.mission_id}` }).isDisabled()).toBe(true);

    await page.getByRole('button', { name: `Drop ${a.mission_id}` }).click();
    await expect.poll(() => items.count()).toBe(1);
    expect((await hall.request({ cmd: 'queue' })).queues[0].missions.map((m: { mission_id: string }) => m.mission_id)).toEqual([
      b.mission_id,
    ]);

    // A binding's queue shows with its binding.
    const held = await hall.request({ cmd: 'spawn', name: 'ivar', mission: 'wait 600', binding: 'cron:nightly' });
    await runStarted(held.events_path);
    const x = await hall.request({ cmd: 'spawn', name: 'ivar', mission: 'answer bound', binding: 'cron:nightly' });
    await list.getByRole('listitem').filter({ hasText: x.mission_id }).getByText('binding cron:nightly').waitFor();
    for (const id of [running.id, held.id]) await hall.request({ cmd: 'cancel', id });
    await expect.poll(() => items.count(), { timeout: 15_000 }).toBe(0);
    expect(await page.title()).toBe('Raider Hall');
  });

  it('shows no Drop or Move to front when read-only', async () => {
    const ro = await startBoardHall('dashboard: { listen: "127.0.0.1:0", read_only: true }\n');
    try {
      const running = await ro.hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
      await runStarted(running.events_path);
      const waiting = await ro.hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer later' });
      const page = await loggedIn(ro.board);
      const list = page.getByRole('list', { name: 'Waiting' });
      await list.getByText(waiting.mission_id).waitFor();
      expect(await list.getByRole('button').count()).toBe(0);
    } finally {
      await ro.hall.stop();
    }
  });

  it('ran without script errors or CSP violations', () => {
    expect(problems).toEqual([]);
  });
});
