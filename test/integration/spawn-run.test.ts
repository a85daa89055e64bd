import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HallAdapterFactory } from '../../src/ports/hall-services.js';
import { eventually, FAKE_RAIDER, readJsonLines, startTestHall, type Json, type TestHall } from '../support/test-hall.js';

const CONFIG = `
longhouse: true
preferred_lib_target: lib/target
raiders:
  bjorn: { engine: anthropic, model: m1, persona: caveman, packs: [git-guru, caveman, extra], permission_mode: plan }
  plain: {}
  lagertha: { persona: polite, packs: [git-guru] }
  old: { mcp: true, isolated: false }
cancel_grace: 0.3
logs: { keep_events: 3, max_log_size: 200 }
`;

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

async function runToEnd(h: TestHall, name: string, mission: string): Promise<{ reply: Json; done: Json }> {
  const tap = await h.events('raider.done');
  const reply = await h.request({ cmd: 'spawn', name, mission });
  expect(reply.error).toBeUndefined();
  const done = await tap.waitFor((e) => e.id === reply.id);
  tap.close();
  return { reply, done };
}

describe('spawning a raider', () => {
  it('starts it with the seed argv and environment, stdin /dev/null, in its own process group', async () => {
    hall = await startTestHall({
      config: CONFIG,
      env: { PERL5LIB: '/x/perl', RAIDER_HALL_TELEGRAM_BOT: 'leak', RAIDER_HALL_TELEGRAM_CHAT_ID: '9' },
    });
    const { reply, done } = await runToEnd(hall, '1bjorn', 'argv');
    const seen = JSON.parse(done.response as string) as { argv: string[]; env: Record<string, string>; stdin: string; cwd: string };
    expect(seen.argv).toEqual([
      '--stream-json',
      '--engine',
      'anthropic',
      '--model',
      'm1',
      '--pack',
      'git-guru',
      '--pack',
      'caveman',
      '--pack',
      'extra',
      '--permission-mode',
      'plan',
      '-o',
      `preferred_lib_target=${path.join(hall.root, 'lib/target')}`,
      '--root',
      hall.root,
      '--session',
      reply.session,
      '--',
      'argv',
    ]);
    expect(reply).toMatchObject({ slot: '1bjorn', binding: 'slot:1bjorn', session: expect.stringMatching(/^\d{8}-\d{6}-[0-9a-f]{4}$/) });
    expect(seen.env).toEqual({
      RAIDER_HALL_MODE: '1',
      RAIDER_HALL_ROOT: hall.root,
      RAIDER_HALL_SLOT: '1bjorn',
      RAIDER_HALL_ENTRY: 'bjorn',
      RAIDER_HALL_CONFIG: path.join(hall.root, '.raider-hall.yml'),
      RAIDER_HALL_SOCKET: path.join(hall.root, '.raider-hall.socket'),
      RAIDER_HALL_RAIDER_BIN: FAKE_RAIDER,
      RAIDER_HALL_RUN_ID: reply.id,
      PERL5LIB: `/x/perl:${path.join(hall.root, 'lib/target')}/lib/perl5:${hall.root}/longhouse/lib`,
    });
    expect(seen.stdin).toBe('/dev/null');
    expect(seen.cwd).toBe(hall.root);
  });

  it('starts a raider whose `node` is the Node running the hall (the one first on PATH)', async () => {
    // CI runs the smoke set with another Node first on PATH (.ci/run): this says both the hall
    // (in this process) and its raiders ran on it.
    hall = await startTestHall({ config: CONFIG });
    const { done } = await runToEnd(hall, 'plain', 'node-version');
    expect(done.response).toBe(process.version);
  });

  it('passes the persona as the last pack unless listed, and no --engine without one', async () => {
    hall = await startTestHall({ config: CONFIG });
    const { done } = await runToEnd(hall, 'lagertha', 'argv');
    const argv = (JSON.parse(done.response as string) as { argv: string[] }).argv;
    expect(argv.slice(0, 5)).toEqual(['--stream-json', '--pack', 'git-guru', '--pack', 'polite']);
    expect(argv).not.toContain('--session');
    expect(argv.at(-2)).toBe('--');
  });

  it('writes stdout to ID.events.jsonl and stderr plus [hall] lines to SLOT.log', async () => {
    hall = await startTestHall({ config: CONFIG });
    const { reply, done } = await runToEnd(hall, 'plain', 'stderr to the log');
    expect(reply.events_path).toBe(path.join(hall.root, '.raider-hall/logs', `${reply.id}.events.jsonl`));
    const events = readJsonLines(reply.events_path);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'run.state', 'message', 'run.state', 'run.finished']);
    const log = fs.readFileSync(path.join(hall.root, '.raider-hall/logs/plain.log'), 'utf8');
    expect(log).toBe(`[hall] raider ${reply.id} started\n[${reply.id}] to the log\n[hall] raider ${reply.id} completed: to the log\n`);
    expect(done).toMatchObject({
      id: reply.id,
      slot: 'plain',
      pid: reply.pid,
      exit_code: 0,
      signaled: 0,
      status: 'completed',
      response: 'to the log',
    });
  });

  it.each([
    ['crash', { status: 'failed', exit_code: 3, signaled: 0 }, (id: string) => `raider ${id} ended without a result (exit code 3)`],
    ['killed', { status: 'failed', exit_code: 0, signaled: 1 }, (id: string) => `raider ${id} ended without a result (killed by signal 9)`],
    ['silent', { status: 'failed', exit_code: 0, signaled: 0 }, (id: string) => `raider ${id} ended without a result (exit code 0)`],
    ['fail it broke', { status: 'failed', exit_code: 1, signaled: 0 }, () => 'it broke'],
  ])('reports a raider that does %s', async (mission, fields, error) => {
    hall = await startTestHall({ config: CONFIG });
    const { reply, done } = await runToEnd(hall, 'plain', mission);
    expect(done).toMatchObject({ ...fields, error: error(reply.id) });
  });

  it('takes the last run.finished of stdout and ignores noise, half lines and stderr', async () => {
    hall = await startTestHall({ config: CONFIG });
    const { done } = await runToEnd(hall, 'plain', 'noisy');
    expect(done).toMatchObject({ status: 'completed', response: 'the last one' });
  });

  it('cuts the result line at 300 characters and folds whitespace', async () => {
    hall = await startTestHall({ config: CONFIG });
    const long = `${'word  '.repeat(80)}end`;
    const { reply } = await runToEnd(hall, 'plain', `answer ${long}`);
    const log = fs.readFileSync(path.join(hall.root, '.raider-hall/logs/plain.log'), 'utf8');
    const line = log.trim().split('\n').at(-1)!;
    const text = line.slice(`[hall] raider ${reply.id} completed: `.length);
    expect(text).toBe(`${long.replace(/\s+/g, ' ').slice(0, 300)}...`);
  });

  it('notes ignored mcp/isolated keys once per raider name', async () => {
    hall = await startTestHall({ config: CONFIG });
    await runToEnd(hall, 'old', 'answer 1');
    await runToEnd(hall, 'old', 'answer 2');
    const log = fs.readFileSync(path.join(hall.root, '.raider-hall/logs/old.log'), 'utf8');
    expect(log.match(/\[hall\] raider old: isolated, mcp in \.raider-hall\.yml ignored/g)).toHaveLength(1);
  });

  it('keeps the newest keep_events events files per slot and rotates a big slot log', async () => {
    hall = await startTestHall({ config: CONFIG });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await runToEnd(hall, 'plain', `answer ${'y'.repeat(80)} ${i}`)).reply.id);
    const eventsFiles = () =>
      fs
        .readdirSync(path.join(hall!.root, '.raider-hall/logs'))
        .filter((f) => f.endsWith('.events.jsonl'))
        .sort();
    // Pruning follows raider.done.
    await eventually(() =>
      expect(eventsFiles()).toEqual(
        ids
          .slice(2)
          .map((id) => `${id}.events.jsonl`)
          .sort(),
      ),
    );
    const files = fs.readdirSync(path.join(hall.root, '.raider-hall/logs'));
    expect(files).toContain('plain.log.1');
    expect(fs.statSync(path.join(hall.root, '.raider-hall/logs/plain.log')).size).toBeLessThan(600);
  });

  it('tells its faces once the events files keep_events removed are gone', async () => {
    // What a face sees when told (the dashboard then lists its past runs anew): the slot's files as they are.
    const seen: string[][] = [];
    const probe: HallAdapterFactory = (services) => {
      const logs = path.join(services.paths.root, '.raider-hall/logs');
      services.onEventsPruned(() => seen.push(fs.readdirSync(logs)));
      return { name: 'probe', start: async () => {}, stop: async () => {} };
    };
    hall = await startTestHall({ config: CONFIG, adapters: [probe] });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await runToEnd(hall, 'plain', `answer ${i}`)).reply.id);
    // keep_events is 3: the ends of the fourth and fifth runs each removed one file, the first's and the
    // second's. Each call comes once its own removal is done: by the k-th, k of those two are gone.
    await eventually(() => expect(seen).toHaveLength(2));
    const removed = ids.slice(0, 2).map((id) => `${id}.events.jsonl`);
    for (const [k, files] of seen.entries()) {
      expect(removed.filter((f) => !files.includes(f)).length).toBeGreaterThanOrEqual(k + 1);
    }
  });

  it('answers logs for a running and an ended run, and refuses ids it has no trace of', async () => {
    hall = await startTestHall({ config: CONFIG });
    const tap = await hall.events('raider.done');
    // It runs until the test has read its live log (no timing window to miss).
    const release = path.join(hall.root, 'release');
    const running = await hall.request({ cmd: 'spawn', name: 'plain', mission: `until ${release}` });
    const live = await hall.request({ cmd: 'logs', id: running.id });
    expect(live.log).toBe(`[hall] raider ${running.id} started\n`);
    fs.writeFileSync(release, '');
    await tap.waitFor((e) => e.id === running.id);
    const ended = await hall.request({ cmd: 'logs', id: running.id });
    expect(ended.log).toBe(`[hall] raider ${running.id} started\n[hall] raider ${running.id} completed: saw ${release}\n`);
    for (const id of ['plain-8', 'nope-1', 'plain', '../plain-7', 'x/../plain-7', '']) {
      expect(await hall.request({ cmd: 'logs', id })).toEqual(
        id === '' ? { error: 'logs requires an id' } : { error: 'raider not found', code: 'run_not_found' },
      );
    }
  });

  it('answers ps, attach and status for live runs', async () => {
    hall = await startTestHall({ config: CONFIG });
    const a = await hall.request({ cmd: 'spawn', name: 'plain', mission: 'wait 2' });
    const b = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 2' });
    const c = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 2' });
    expect(c).toMatchObject({ queued: 1, slot: '1bjorn', queue_depth: 1 });
    const ps = await hall.request({ cmd: 'ps' });
    expect(ps.raiders).toEqual([
      { slot: '1bjorn', pid: b.pid, base_name: 'bjorn', mission: 'wait 2', id: b.id, session: b.session, binding: 'slot:1bjorn' },
      { slot: 'plain', pid: a.pid, base_name: 'plain', mission: 'wait 2', id: a.id },
    ]);
    expect(await hall.request({ cmd: 'attach', id: a.id })).toEqual({
      id: a.id,
      slot: 'plain',
      pid: a.pid,
      log_path: path.join(hall.root, '.raider-hall/logs/plain.log'),
      events_path: a.events_path,
    });
    const status = await hall.request({ cmd: 'status' });
    expect(status).toMatchObject({ running: 2, root: hall.root, slots: ['1bjorn', 'plain'], queues: { '1bjorn': 1 } });
    expect(status.runs.map((r: Json) => r.id).sort()).toEqual([a.id, b.id].sort());
    expect(await hall.request({ cmd: 'attach', id: 'plain-1' })).toEqual({ error: 'raider not found', code: 'run_not_found' });
  });
});
