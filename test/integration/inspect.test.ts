import fs from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyInspectEvent, inspectView, renderTree } from '../../src/cli/hall/inspect-view.js';
import { styleFor } from '../../src/cli/hall/render.js';
import type { InspectedActor } from '../../src/adapters/inspect/actor-inspection.js';
import { eventually, runCli, startTestHall, type Json, type TestHall } from '../support/test-hall.js';
import { hallLive } from '../cli/cli-helpers.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

const plain = styleFor({ isTTY: false } as NodeJS.WriteStream);

describe('the inspection stream (inspect.* events)', () => {
  it('gives a snapshot on subscribe, then the run appearing, escalating and going', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\ncancel_grace: 0.3\n' });
    const everything = await hall.events('');
    const tap = await hall.events('inspect.');
    const snapshot = await tap.waitFor((e) => e.type === 'inspect.snapshot');
    expect(snapshot.actors).toEqual([
      expect.objectContaining({ id: 'hall', parent: null, kind: 'hall', state: 'running', status: 'active' }),
    ]);
    const run = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'deaf 30' });
    const queued = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer later' });
    expect(queued.queued).toBe(1);
    await eventually(() => expect(fs.readFileSync(run.events_path, 'utf8')).toContain('run.started'));
    await hall.request({ cmd: 'cancel', id: run.id });
    const runId = `run:${run.id}`;
    await tap.waitFor((e) => e.type === 'inspect.stopped' && e.id === runId, 10_000);
    const about = tap.all.filter((e) => e.id === runId);
    expect(about[0]).toMatchObject({ type: 'inspect.actor', parent: 'slot:1bjorn', kind: 'run' });
    const states = about.filter((e) => e.type !== 'inspect.stopped').map((e) => e.state);
    expect(states).toEqual(expect.arrayContaining(['alive.running', 'alive.cancelling', 'alive.terminating', 'alive.killing']));
    expect(states.indexOf('alive.cancelling')).toBeLessThan(states.indexOf('alive.terminating'));
    expect(states.indexOf('alive.terminating')).toBeLessThan(states.indexOf('alive.killing'));
    expect(tap.all.find((e) => e.type === 'inspect.actor' && e.id === 'slot:1bjorn')).toMatchObject({ parent: 'hall', kind: 'slot' });
    // The waiting mission starts once the first run is gone: its run shows from its start,
    // not only once its raider runs.
    const next = await everything.waitFor((e) => e.type === 'raider.spawned' && e.id !== run.id, 10_000);
    const nextId = `run:${String(next.id)}`;
    await eventually(() => expect(tap.all.some((e) => e.id === nextId && e.state === 'alive.running')).toBe(true));
    expect(tap.all.find((e) => e.id === nextId)).toMatchObject({ type: 'inspect.actor', parent: 'slot:1bjorn', state: 'queued' });
    // Every actor has an id of its own (each run's process under its run), and XState's made-up ids do not show.
    const appeared = tap.all.filter((e) => e.type === 'inspect.actor');
    const ids = appeared.map((e) => String(e.id));
    expect(ids).toContain(`${runId}/process`);
    expect(ids).toContain(`${nextId}/prepareRun`);
    expect(ids.filter((id) => /(^|\/)\d+\./.test(id))).toEqual([]);
    expect(new Set(appeared.map((e) => `${e.id}<${e.parent}`)).size).toBe(new Set(ids).size);
    // Subscribers that did not ask for the stream do not get it.
    expect(everything.all.some((e) => String(e.type).startsWith('inspect.'))).toBe(false);
  });

  it('raider hall inspect --once prints the tree; --json the raw snapshot', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 5' });
    await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 5' });
    const once = await runCli(['hall', 'inspect', hall.root, '--once']);
    expect(once.code).toBe(0);
    const lines = once.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^hall\s+running\s+\d+s$/);
    expect(lines.some((l) => /^[├└]─ slot:1bjorn\s+busy \(1 waiting\)/.test(l))).toBe(true);
    // The waiting mission itself, under its slot, with the state queued and its real age.
    expect(lines.some((l) => /^\s+├─ m[0-9a-z]+-[0-9a-f]{12} \(1bjorn\)\s+queued\s+\d+s$/.test(l))).toBe(true);
    expect(lines.some((l) => /^\s+└─ run:1bjorn-\d+\s+alive\.running/.test(l))).toBe(true);
    const json = await runCli(['hall', 'inspect', hall.root, '--once', '--json']);
    const first = JSON.parse(json.stdout.split('\n')[0]!) as Json;
    expect(first).toMatchObject({ type: 'inspect.snapshot', version: 1 });
    const slot = (first.actors as Json[]).find((a) => a.id === 'slot:1bjorn');
    expect(slot?.missions).toEqual([
      { mission_id: expect.stringMatching(/^m/), name: '1bjorn', state: 'queued', since: expect.any(Number) },
    ]);
    expect(Date.now() - Number(slot?.missions[0].since)).toBeLessThan(60_000);
  });

  it('a run seen by a late subscriber is as old as its process, not as the subscription', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'wait 30' });
    await eventually(() => expect(fs.readFileSync(run.events_path, 'utf8')).toContain('run.started'));
    const seenRunning = Date.now();
    const tap = await hall.events('inspect.');
    const snapshot = await tap.waitFor((e) => e.type === 'inspect.snapshot');
    const node = (snapshot.actors as Json[]).find((a) => a.id === `run:${run.id}`);
    expect(node?.state).toBe('alive.running');
    expect(node?.since).toBeLessThan(seenRunning);
    tap.close();
    await hall.request({ cmd: 'kill', id: run.id });
  });

  it('ages count from when each actor entered its state, not from when the inspector attached', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const started = Date.now();
    const done = await hall.events('raider.done');
    await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer hi' });
    await done.waitFor((e) => e.type === 'raider.done');
    const ended = Date.now();
    done.close();
    // A process of its own attaches long after both: the hall running since its start, the slot free since the run's end.
    const json = await runCli(['hall', 'inspect', hall.root, '--once', '--json']);
    const actors = (JSON.parse(json.stdout.split('\n')[0]!) as Json).actors as Json[];
    const node = (id: string) => actors.find((a) => a.id === id);
    expect(node('hall')).toMatchObject({ state: 'running' });
    expect(node('hall')?.since).toBeLessThanOrEqual(started);
    expect(node('slot:bjorn')?.since).toBeGreaterThanOrEqual(started);
    expect(node('slot:bjorn')?.since).toBeLessThanOrEqual(ended);
  });

  it('the live view says when the hall stops and exits 1', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const live = hallLive(['inspect', hall.root], hall.root);
    await live.printed('hall');
    await hall.stop();
    hall = undefined;
    const end = await live.done;
    expect(end.code).toBe(1);
    expect(end.stderr).toContain('raider hall inspect: the hall stopped');
  });
});

describe('the tree renderer', () => {
  it('draws parents before children with their state and time in it', () => {
    const actors: InspectedActor[] = [
      { id: 'hall', parent: null, kind: 'hall', state: 'running', status: 'active', since: 0 },
      { id: 'slot:1bjorn', parent: 'hall', kind: 'slot', state: 'busy', status: 'active', since: 1000, waiting: 2 },
      { id: 'run:1bjorn-1', parent: 'slot:1bjorn', kind: 'run', state: 'alive.cancelling', status: 'active', since: 58_000 },
      { id: 'binding:telegram:ops:42', parent: 'hall', kind: 'bindingQueue', state: 'free', status: 'active', since: 0 },
    ];
    expect(renderTree(actors, 60_000, plain)).toBe(
      [
        'hall                        running           1m00s',
        '├─ slot:1bjorn              busy (2 waiting)  59s',
        '│  └─ run:1bjorn-1          alive.cancelling  2s',
        '└─ binding:telegram:ops:42  free              1m00s',
        '',
      ].join('\n'),
    );
  });

  it('follows snapshot, actor, state and stopped events', () => {
    const tree = new Map<string, InspectedActor>();
    applyInspectEvent(tree, {
      type: 'inspect.snapshot',
      actors: [{ id: 'hall', parent: null, kind: 'hall', state: 'running', status: 'active', since: 0 }],
    });
    applyInspectEvent(tree, {
      type: 'inspect.actor',
      id: 'slot:x',
      parent: 'hall',
      kind: 'slot',
      state: 'parallel',
      status: 'active',
      since: 5,
      seq: 3,
    });
    applyInspectEvent(tree, {
      type: 'inspect.state',
      id: 'slot:x',
      parent: 'hall',
      kind: 'slot',
      state: 'busy',
      status: 'active',
      since: 6,
    });
    expect(tree.get('slot:x')).toEqual({ id: 'slot:x', parent: 'hall', kind: 'slot', state: 'busy', status: 'active', since: 6 });
    // A change that does not read as its schema says (a state that is no string) leaves the tree as it was.
    applyInspectEvent(tree, { type: 'inspect.state', id: 'slot:x', parent: 'hall', kind: 'slot', state: 7, status: 'active', since: 7 });
    expect(tree.get('slot:x')?.state).toBe('busy');
    applyInspectEvent(tree, { type: 'inspect.stopped', id: 'slot:x' });
    expect([...tree.keys()]).toEqual(['hall']);
  });
});

describe('inspect without a terminal', () => {
  it('prints the tree once per change, not at every redraw tick', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const h = await startTestHall();
      const writes: string[] = [];
      const view = inspectView({
        socketPath: h.socket,
        once: false,
        json: false,
        style: styleFor({ isTTY: false }),
        out: { isTTY: false, write: (text: string) => writes.push(text) },
      });
      await eventually(() => {
        vi.advanceTimersByTime(250);
        expect(writes).toHaveLength(1);
      });
      vi.advanceTimersByTime(250 * 20);
      expect(writes).toHaveLength(1);
      await h.stop();
      // A live view whose hall stops says so and fails (see the test above).
      expect(await view).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
