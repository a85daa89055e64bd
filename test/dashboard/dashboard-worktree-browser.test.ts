/**
 * A worktree run's page in a real browser (Chromium) on a real hall with a
 * real git: its branch, base, commits and changed files with the diff stat
 * the hall's git counts (docs/worktrees.md).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { commitProject } from '../support/git-repo.js';
import type { Json } from '../support/hall-client.js';
import { useBrowserBoard } from './browser-board.js';
import { skipBrowserTests } from './browser.js';

if (skipBrowserTests !== null) console.warn(`dashboard worktree browser tests skipped: ${skipBrowserTests}`);

const CONFIG = 'raiders: { bjorn: { worktree: true } }\ndashboard: { listen: "127.0.0.1:0" }\n';

describe.skipIf(skipBrowserTests !== null)("a worktree run's page in Chromium", { timeout: 60_000 }, () => {
  const browserBoard = useBrowserBoard(CONFIG);
  let base = '';
  beforeAll(() => {
    // The hall's root becomes a repository: worktrees are made when a run starts.
    base = commitProject(browserBoard.hall.root, 'one\ntwo\nthree\n');
  });

  async function ended(mission: string, name = 'bjorn'): Promise<Json> {
    const hall = browserBoard.hall;
    const tap = await hall.events('raider.done');
    try {
      const reply = await hall.request({ cmd: 'spawn', name, mission });
      return await tap.waitFor((e) => e.id === reply.id);
    } finally {
      tap.close();
    }
  }

  it('shows the branch, the base, the commits and each changed file with its lines added and removed', async () => {
    const done = await ended('write README.md replaced');
    expect(done).toMatchObject({ changed: ['README.md'], wip_commit: true });
    const id = done.id as string;
    const page = await browserBoard.loggedIn();
    await page.goto(`${browserBoard.board.url}#/runs/${id}`);
    const branch = page.getByRole('region', { name: 'Branch' });
    await branch.getByText(`raider/${id}`, { exact: true }).waitFor();
    expect(await branch.getByText(base.slice(0, 12), { exact: true }).getAttribute('title')).toBe(base);
    await branch.getByText('0 by the raider, and one work-in-progress commit by the hall').waitFor();
    const row = branch.getByRole('table', { name: 'Changed files' }).getByRole('row').filter({ hasText: 'README.md' });
    expect(await row.getByRole('cell').allTextContents()).toEqual(['README.md', '+1', '−3']);
    await branch.getByText('1 file changed, 1 insertion(+), 3 deletions(-)').waitFor();
    await branch.getByText(`git merge --squash raider/${id}`).waitFor();
    expect(browserBoard.problems).toEqual([]);
  });

  it("a binding's later run shows the binding's branch, raider/BINDING/RUN_ID of the run that made it", async () => {
    const first = await ended('commit first.txt one', '1bjorn');
    const second = await ended('commit second.txt two', '1bjorn');
    const branchName = `raider/slot-1bjorn/${first.id}`;
    expect(second).toMatchObject({ branch: branchName, commits: 1 });
    const page = await browserBoard.loggedIn();
    await page.goto(`${browserBoard.board.url}#/runs/${second.id}`);
    const branch = page.getByRole('region', { name: 'Branch' });
    await branch.getByText(branchName, { exact: true }).waitFor();
    const table = branch.getByRole('table', { name: 'Changed files' });
    for (const file of ['first.txt', 'second.txt']) await table.getByRole('row').filter({ hasText: file }).waitFor();
    expect(browserBoard.problems).toEqual([]);
  });

  it('says the branch is gone when the run changed nothing', async () => {
    const done = await ended('answer nothing');
    const id = done.id as string;
    const page = await browserBoard.loggedIn();
    await page.goto(`${browserBoard.board.url}#/runs/${id}`);
    const branch = page.getByRole('region', { name: 'Branch' });
    await branch.getByText(/gone: the run changed nothing/).waitFor();
    expect(await branch.getByRole('table').count()).toBe(0);
  });

  it('shows no branch for a run of a raider without a worktree', async () => {
    const hall = browserBoard.hall;
    const tap = await hall.events('raider.done');
    const reply = await hall.request({ cmd: 'spawn', name: 'ivar', mission: 'answer plain' });
    await tap.waitFor((e) => e.id === reply.id);
    tap.close();
    const page = await browserBoard.loggedIn();
    await page.goto(`${browserBoard.board.url}#/runs/${reply.id}`);
    await page.getByRole('region', { name: 'Output' }).getByText('completed: plain').first().waitFor();
    expect(await page.getByRole('region', { name: 'Branch' }).count()).toBe(0);
  });
});
