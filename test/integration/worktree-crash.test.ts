/**
 * A worktree raider's runs (docs/worktrees.md) across a `kill -9` of the hall,
 * through real hall processes and real git: the run's worktree is recorded
 * with it, so the hall that adopts it (or reports it) settles the worktree,
 * and `raider.done` carries the worktree's fields.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { crash, useCrashedHalls } from '../support/crashed-halls.js';
import { BACKENDS, useHallBackend } from '../support/hall-backends.js';
import { eventually, type Json, request, spawnHallProcess, tapEvents, tempRoot } from '../support/hall-client.js';

const processes = useCrashedHalls();

/** A hall process on the root, killed after the test if it still runs. */
async function start(root: string, env: Record<string, string>): Promise<ChildProcess> {
  return processes.hall(await spawnHallProcess(root, env));
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A repository with one commit, its hall's files ignored, and a worktree raider. */
function repoRoot(): string {
  const root = tempRoot();
  git(root, 'init', '--quiet', '--initial-branch=trunk');
  fs.writeFileSync(path.join(root, '.gitignore'), '.raider-hall*\n.raider/\n');
  fs.writeFileSync(path.join(root, 'README.md'), 'a project\n');
  git(root, 'add', '.');
  git(root, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '--quiet', '-m', 'first');
  fs.writeFileSync(path.join(root, '.raider-hall.yml'), 'raiders: { bjorn: { worktree: true } }\n');
  return root;
}

describe.each(BACKENDS)('a worktree run across a kill -9 of its hall, the state on %s', (backendName) => {
  const backend = useHallBackend(backendName);

  it('the next hall adopts the live run and settles its worktree when it ends', async () => {
    const root = repoRoot();
    const gate = path.join(tempRoot(), 'gate');
    const env = { ...(await backend.env()), FAKE_RAIDER_GATE: gate };
    const socket = path.join(root, '.raider-hall.socket');
    const first = await start(root, env);
    const run = await request(socket, { cmd: 'spawn', name: 'bjorn', mission: 'write notes.txt left behind' });
    processes.raider(run.pid);
    const worktree = path.join(root, '.raider-hall', 'worktrees', run.id);
    await eventually(() => expect(fs.readFileSync(path.join(worktree, 'notes.txt'), 'utf8')).toBe('left behind\n'));
    await crash(first);

    await start(root, env);
    const tap = await tapEvents(socket, 'raider.');
    expect((await request(socket, { cmd: 'ps' })).raiders.map((r: Json) => r.id)).toContain(run.id);
    fs.writeFileSync(gate, '');
    const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id);
    tap.close();
    expect(done).toMatchObject({
      status: 'completed',
      worktree,
      branch: `raider/${run.id}`,
      base: git(root, 'rev-parse', 'trunk').trim(),
      commits: 0,
      changed: ['notes.txt'],
      wip_commit: true,
      worktree_kept: false,
    });
    expect(git(root, 'show', `raider/${run.id}:notes.txt`)).toBe('left behind\n');
    expect(fs.existsSync(worktree)).toBe(false);
  });

  it('a run that ended while no hall ran is reported with its worktree settled', async () => {
    const root = repoRoot();
    const gate = path.join(tempRoot(), 'gate');
    const env = { ...(await backend.env()), FAKE_RAIDER_GATE: gate };
    const socket = path.join(root, '.raider-hall.socket');
    const first = await start(root, env);
    const run = await request(socket, { cmd: 'spawn', name: 'bjorn', mission: 'write notes.txt done alone' });
    processes.raider(run.pid);
    const worktree = path.join(root, '.raider-hall', 'worktrees', run.id);
    await eventually(() => expect(fs.existsSync(path.join(worktree, 'notes.txt'))).toBe(true));
    await crash(first);
    fs.writeFileSync(gate, '');
    await eventually(() => expect(fs.readFileSync(run.events_path, 'utf8')).toContain('run.finished'));

    await start(root, env);
    // Reported at the start, before a tap could subscribe: its result line, and the branch it left.
    await eventually(async () =>
      expect((await request(socket, { cmd: 'logs', id: run.id })).log).toContain(`[hall] raider ${run.id} completed`),
    );
    expect(git(root, 'show', `raider/${run.id}:notes.txt`)).toBe('done alone\n');
    expect(git(root, 'log', '-1', '--format=%s', `raider/${run.id}`)).toBe(`work in progress left by run ${run.id}\n`);
    expect(fs.existsSync(worktree)).toBe(false);
  });
  it("a binding's run adopted after the kill goes on in the binding's worktree, and so does the binding's next run", async () => {
    const root = repoRoot();
    const gate = path.join(tempRoot(), 'gate');
    const env = { ...(await backend.env()), FAKE_RAIDER_GATE: gate };
    const socket = path.join(root, '.raider-hall.socket');
    const first = await start(root, env);
    const run = await request(socket, { cmd: 'spawn', name: '1bjorn', mission: 'commit notes.txt before the kill' });
    processes.raider(run.pid);
    const worktree = path.join(root, '.raider-hall', 'worktrees', run.id);
    const branch = `raider/slot-1bjorn/${run.id}`;
    await eventually(() => expect(git(root, 'log', '--format=%s', `trunk..${branch}`)).toBe('fake raider wrote notes.txt\n'));
    await crash(first);

    await start(root, env);
    const tap = await tapEvents(socket, 'raider.');
    fs.writeFileSync(gate, '');
    const adopted = await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id);
    expect(adopted).toMatchObject({ worktree, branch, commits: 1, changed: ['notes.txt'], wip_commit: false, worktree_kept: true });
    const next = await request(socket, { cmd: 'spawn', name: '1bjorn', mission: 'write draft.txt after the kill' });
    const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === next.id);
    tap.close();
    expect(done).toMatchObject({ response: worktree, branch, commits: 0, changed: ['draft.txt', 'notes.txt'], worktree_kept: true });
  });
});

describe('a starting hall reconciles the worktrees it made', () => {
  it('a kill -9 while a worktree was being made: the next start removes it and its branch, and touches nothing not its own', async () => {
    const root = repoRoot();
    const marks = tempRoot();
    const started = path.join(marks, 'hook-started');
    const gate = path.join(marks, 'hook-gate');
    // Not the hall's: a worktree under its directory, and one elsewhere whose directory is gone.
    const mine = path.join(root, '.raider-hall', 'worktrees', 'mine');
    git(root, 'worktree', 'add', '--quiet', '-b', 'raider/mine', mine);
    const elsewhere = path.join(tempRoot(), 'gone');
    git(root, 'worktree', 'add', '--quiet', '-b', 'elsewhere', elsewhere);
    fs.rmSync(elsewhere, { recursive: true });
    // git runs this while it makes the worktree: the hall is killed meanwhile.
    fs.writeFileSync(
      path.join(root, '.git', 'hooks', 'post-checkout'),
      `#!/bin/sh\ntouch "${started}"\nwhile [ ! -e "${gate}" ]; do sleep 0.05; done\n`,
      { mode: 0o755 },
    );

    const socket = path.join(root, '.raider-hall.socket');
    let branch: string | undefined;
    try {
      const first = await start(root, {});
      const spawning = request(socket, { cmd: 'spawn', name: 'bjorn', mission: 'answer never' }).catch(() => null);
      await eventually(() => expect(fs.existsSync(started)).toBe(true));
      const branches = git(root, 'branch', '--list', 'raider/*', '--format=%(refname:short)').split('\n');
      branch = branches.find((b) => b.startsWith('raider/bjorn-'));
      expect(branch).toBeDefined();
      await crash(first);
      await spawning;
    } finally {
      // git goes on without its hall and finishes the worktree: the record still says it was being made.
      // Also when the test failed before the crash: the hook (and its git) would wait for ever.
      fs.writeFileSync(gate, '');
    }
    const made = path.join(root, '.raider-hall', 'worktrees', (branch ?? '').slice('raider/'.length));
    await eventually(() => expect(git(root, 'worktree', 'list', '--porcelain')).toContain(made));

    const second = await start(root, {});
    expect(fs.existsSync(made)).toBe(false);
    expect(git(root, 'branch', '--list', 'raider/*', '--format=%(refname:short)')).toBe('raider/mine\n');
    const listed = git(root, 'worktree', 'list', '--porcelain');
    expect(listed).not.toContain(made);
    expect(listed).toContain(mine);
    expect(listed).not.toContain(elsewhere);
    expect(fs.readdirSync(path.join(root, '.raider-hall', 'state', 'worktrees'))).toEqual([]);
    second.kill('SIGTERM');
  });

  it('a binding reset while its worktree waits: the next start settles it, its change committed to its branch', async () => {
    const root = repoRoot();
    const socket = path.join(root, '.raider-hall.socket');
    const first = await start(root, {});
    const tap = await tapEvents(socket, 'raider.');
    const run = await request(socket, { cmd: 'spawn', name: '1bjorn', mission: 'write draft.txt unfinished' });
    const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id);
    tap.close();
    expect(done).toMatchObject({ worktree_kept: true, changed: ['draft.txt'] });
    await request(socket, { cmd: 'session_reset', binding: 'slot:1bjorn' });
    await crash(first);

    await start(root, {});
    const branch = `raider/slot-1bjorn/${run.id}`;
    expect(fs.existsSync(done.worktree as string)).toBe(false);
    expect(git(root, 'show', `${branch}:draft.txt`)).toBe('unfinished\n');
    expect(git(root, 'log', '-1', '--format=%s', branch)).toBe(`work in progress left by run ${run.id}\n`);
  });
});
