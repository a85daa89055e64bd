/**
 * Warm ACP bridges (`acp.keep_warm`, docs/agents.md "Warm bridges"), through
 * real halls and processes: a run is handed to a bridge the hall started
 * ahead, which is then the run's raider in every way (its pid, events file,
 * slot log lines, cancel, adoption by the next hall after a crash); an
 * unused bridge never outlives its hall nor its idle time. The agent is
 * test/fixtures/scripted-acp-agent.mjs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { tapEvents, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { alive, eventsFile, eventually, hall, hallRoot, removeRoots, request, socketOf, startHallProcess } from './cli-helpers.js';
import { commandLine } from '../support/processes.js';
import { BACKENDS, useHallBackend } from '../support/hall-backends.js';
import { readySpare, warmSpares } from '../support/warm-bridges.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

function config(acp: string, extra = ''): string {
  return `raiders:\n  warm: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_PID_FILE: agent.pid }, ${acp} } }\n${extra}`;
}

function agentPid(root: string): number {
  return Number(fs.readFileSync(path.join(root, 'agent.pid'), 'utf8').split(' ')[0]);
}

describe('acp.keep_warm: runs handed to bridges started ahead', () => {
  it('a run goes to the warm bridge status showed, completes as any run, and the next one runs too', async () => {
    const root = hallRoot(config('keep_warm: 1'));
    // A hall started by a run of a Telegram binding: its chat is that run's, not its raiders'.
    const h = await startHallProcess(root, { RAIDER_HALL_TELEGRAM_BOT: 'parents-bot' });
    try {
      const tap = await tapEvents(socketOf(root), 'raider.');
      const sparePid = await readySpare(root);
      expect(commandLine(sparePid)).toContain('acp-client --spare');
      // A warm bridge has of the hall's environment what any raider has.
      const environment = fs.readFileSync(`/proc/${sparePid}/environ`, 'utf8').split('\0');
      expect(environment).toContain(`RAIDER_HALL_ROOT=${root}`);
      expect(environment.filter((v) => v.startsWith('RAIDER_HALL_TELEGRAM_'))).toEqual([]);
      expect((await hall(['status'], root)).stdout).toMatch(new RegExp(`^warm +${sparePid} +\\d+s +ready$`, 'm'));
      const run = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: 'answer from a warm bridge' });
      // The run's raider is the warm bridge: the pid the reply, raider.spawned and ps say.
      expect(run.pid).toBe(sparePid);
      const started = await tap.waitFor((e) => e.type === 'raider.spawned' && e.id === run.id, 30_000);
      expect(started.pid).toBe(sparePid);
      const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id, 60_000);
      expect(done).toMatchObject({ status: 'completed', response: 'from a warm bridge' });
      // The pool hears of the run's end (raider.done): the replacement is under way as soon as it is
      // out (or 2 s after the take, were the run slower). The order is warm-bridges-exit.test.ts's.
      expect(await warmSpares(root)).toHaveLength(1);
      const events = fs
        .readFileSync(eventsFile(root, String(run.id)), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(events[0]).toMatchObject({ type: 'run.started', engine: 'acp', agent: SCRIPTED_ACP_AGENT });
      expect(events.at(-1)).toMatchObject({ type: 'run.finished', status: 'completed', response: 'from a warm bridge' });
      // The agent's stderr is in the slot log with the run id in front, as for a bridge started for the run.
      const log = fs.readFileSync(path.join(root, '.raider-hall', 'logs', 'warm.log'), 'utf8');
      expect(log).toContain(`[${run.id}] scripted agent: session in ${root}`);
      expect((await hall(['logs', String(run.id)], root)).stdout).toContain(`scripted agent: session in ${root}`);

      // A replacement was started, and the next run goes to it (or, not yet ready, to a bridge of its own).
      const next = await readySpare(root, sparePid);
      const second = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: 'answer again' });
      expect(second.pid).toBe(next);
      const third = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: 'answer and again' });
      for (const r of [second, third]) {
        expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === r.id, 60_000)).toMatchObject({ status: 'completed' });
      }
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('a cancel of a handed run to a deaf agent escalates as for any raider, and the agent ends', async () => {
    const root = hallRoot(config('keep_warm: 1'), 'hall-cli-');
    // Long enough for the bridge to end its agent and itself after the SIGTERM on a loaded machine, not to be SIGKILLed.
    fs.appendFileSync(path.join(root, '.raider-hall.yml'), 'cancel_grace: 1.5\n');
    const h = await startHallProcess(root);
    try {
      const tap = await tapEvents(socketOf(root), 'raider.done');
      const sparePid = await readySpare(root);
      const run = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: 'deaf' });
      expect(run.pid).toBe(sparePid);
      await eventually(() => expect(fs.readFileSync(eventsFile(root, String(run.id)), 'utf8')).toContain('"message.chunk"'), 30_000, 20);
      const agent = agentPid(root);
      await request(socketOf(root), { cmd: 'cancel', id: run.id });
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id, 60_000)).toMatchObject({
        status: 'interrupted',
        signaled: 1,
        hall_stop: 'cancelled by the hall, escalated to SIGTERM (SIGINT, SIGTERM)',
      });
      await eventually(() => expect(alive(agent)).toBe(false), 10_000, 20);
      expect(alive(sparePid)).toBe(false);
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('kill -9 of the hall with a warm bridge idle: the bridge ends by itself (its stdin ends)', async () => {
    const root = hallRoot(config('keep_warm: 2'));
    const h = await startHallProcess(root);
    await eventually(async () => expect((await warmSpares(root)).filter((s) => s.ready)).toHaveLength(2), 30_000, 20);
    const pids = (await warmSpares(root)).map((s) => s.pid ?? 0);
    h.child.kill('SIGKILL');
    await h.exited;
    for (const pid of pids) await eventually(() => expect(alive(pid)).toBe(false), 10_000, 20);
  });

  it('warm_idle: an unused bridge is ended after it and another started; hall stop ends the last', async () => {
    const root = hallRoot(config('keep_warm: 1, warm_idle: 1'));
    const h = await startHallProcess(root);
    const firstPid = await readySpare(root);
    await eventually(() => expect(alive(firstPid)).toBe(false), 30_000, 20);
    const nextPid = await readySpare(root, firstPid);
    expect((await hall(['stop'], root)).code).toBe(0);
    expect((await h.exited).code).toBe(0);
    await eventually(() => expect(alive(nextPid)).toBe(false), 10_000, 20);
  });

  it('behind the fork server the hall keeps none, and runs start their own bridges', async () => {
    const root = hallRoot(config('keep_warm: 1'));
    const h = await startHallProcess(root, { RAIDER_HALL_SPAWNER: 'fork-server' });
    try {
      const tap = await tapEvents(socketOf(root), 'raider.done');
      const status = await request(socketOf(root), { cmd: 'status' });
      expect(status).not.toHaveProperty('warm_bridges');
      const run = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: 'answer cold' });
      expect(commandLine(Number(run.pid))).not.toContain('--spare');
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id, 60_000)).toMatchObject({
        status: 'completed',
        response: 'cold',
      });
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('a bad keep_warm is a config error, exit 3, naming the key', async () => {
    const root = hallRoot(config('keep_warm: 20'));
    const r = await hall(['start', root], root);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('raiders.warm.acp.keep_warm: expected a whole number from 0 to 8, got 20');
  });
});

describe.each(BACKENDS)('a run handed to a warm bridge and a crash of the hall, on %s', (name) => {
  const backend = useHallBackend(name);

  it('kill -9 of the hall during a handed run: the next hall adopts it and reports its end', async () => {
    const root = hallRoot(config('keep_warm: 1'));
    const env = await backend.env();
    const first = await startHallProcess(root, env);
    const release = path.join(root, 'release');
    const sparePid = await readySpare(root);
    const run = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: `until ${release}` });
    expect(run.pid).toBe(sparePid);
    await eventually(() => expect(fs.readFileSync(eventsFile(root, String(run.id)), 'utf8')).toContain('"session"'), 30_000, 20);
    const agent = agentPid(root);
    // The bridge's environment names it by its spare id, not the run's: the next hall finds it by the run's record.
    const spareId = /^RAIDER_HALL_RUN_ID=spare-([0-9a-f]+)$/m.exec(
      fs.readFileSync(`/proc/${sparePid}/environ`, 'latin1').replaceAll('\0', '\n'),
    )?.[1];
    expect(spareId).toBeDefined();
    if (backend.name === 'files') {
      const ledger = JSON.parse(fs.readFileSync(path.join(root, '.raider-hall', 'state', 'runs.json'), 'utf8')) as Record<
        string,
        { pid?: number; spare?: string }
      >;
      expect(ledger[String(run.id)]).toMatchObject({ pid: sparePid, spare: spareId });
    }

    first.child.kill('SIGKILL');
    await first.exited;
    expect(alive(sparePid)).toBe(true);

    const second = await startHallProcess(root, env);
    try {
      const tap = await tapEvents(socketOf(root), 'raider.done');
      const ps = await request(socketOf(root), { cmd: 'ps' });
      expect(ps.raiders).toContainEqual(expect.objectContaining({ id: run.id, pid: sparePid }));
      fs.writeFileSync(release, '');
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id, 60_000)).toMatchObject({
        status: 'completed',
        response: `saw ${release}`,
      });
      tap.close();
      await eventually(() => expect(alive(agent)).toBe(false), 10_000, 20);
    } finally {
      expect((await second.stop()).code).toBe(0);
    }
  });
});
