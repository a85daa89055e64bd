import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, readJsonLines, startTestHall, tempRoot, type Json, type TestHall } from '../support/test-hall.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

async function run(h: TestHall, payload: Json): Promise<{ reply: Json; done?: Json; events: Json[] }> {
  const tap = await h.events('');
  const reply = await h.request({ cmd: 'spawn', ...payload });
  const done = reply.id ? await tap.waitFor((e) => e.type === 'raider.done' && e.id === reply.id) : undefined;
  tap.close();
  return { reply, ...(done ? { done } : {}), events: tap.all };
}

describe('session bindings', () => {
  it('a numbered slot binds a journal: session.bound, the journal, .raider/.gitignore, then continued', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const first = await run(hall, { name: '1bjorn', mission: 'answer one' });
    const session = first.reply.session as string;
    expect(first.events.find((e) => e.type === 'session.bound')).toMatchObject({ binding: 'slot:1bjorn', session });
    const journal = readJsonLines(path.join(hall.root, '.raider/sessions', `${session}.jsonl`));
    expect(journal[0]).toMatchObject({ type: 'session.created', id: session, root: hall.root, scope: 'project', v: 1, seq: 1 });
    expect(fs.readFileSync(path.join(hall.root, '.raider/.gitignore'), 'utf8')).toBe('sessions/\nlib/\n');
    expect(first.done).toMatchObject({ session, binding: 'slot:1bjorn' });
    const second = await run(hall, { name: '1bjorn', mission: 'answer two' });
    expect(second.reply.session).toBe(session);
    expect(second.events.some((e) => e.type === 'session.bound')).toBe(false);
    const sessions = path.join(hall.root, '.raider-hall/state/sessions.json');
    await eventually(() => expect(JSON.parse(fs.readFileSync(sessions, 'utf8'))).toEqual({ 'slot:1bjorn': session }), 2000, 10);
  });

  it('a binding whose journal was deleted gets a new session', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const first = await run(hall, { name: '1bjorn', mission: 'answer one' });
    fs.rmSync(path.join(hall.root, '.raider/sessions', `${first.reply.session}.jsonl`));
    const second = await run(hall, { name: '1bjorn', mission: 'answer two' });
    expect(second.reply.session).not.toBe(first.reply.session);
    expect(second.events.find((e) => e.type === 'session.bound')).toMatchObject({ session: second.reply.session });
  });

  it('session_reset starts the binding over and keeps the journal', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const first = await run(hall, { name: '1bjorn', mission: 'answer one' });
    const tap = await hall.events('session.');
    expect(await hall.request({ cmd: 'session_reset', binding: 'slot:1bjorn' })).toEqual({
      reset: 1,
      binding: 'slot:1bjorn',
      session: first.reply.session,
    });
    await tap.waitFor((e) => e.type === 'session.reset' && e.session === first.reply.session);
    expect(fs.existsSync(path.join(hall.root, '.raider/sessions', `${first.reply.session}.jsonl`))).toBe(true);
    const second = await run(hall, { name: '1bjorn', mission: 'answer two' });
    expect(second.reply.session).not.toBe(first.reply.session);
    expect(await hall.request({ cmd: 'session_reset', binding: 'slot:nope' })).toEqual({ error: 'no session bound to slot:nope' });
    expect(await hall.request({ cmd: 'session_reset' })).toEqual({ error: 'session_reset requires a binding' });
  });

  it('a session held by another writer fails the run at once with the in-use error', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const { reply, done } = await run(hall, { name: '1bjorn', mission: 'exit4' });
    expect(done).toMatchObject({
      status: 'failed',
      exit_code: 4,
      error: `session ${reply.session} of slot:1bjorn is in use by another run; mission not run`,
      session: reply.session,
    });
  });

  it('when the session cannot be had the run starts unbound and hall.session_error follows raider.spawned', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    fs.mkdirSync(path.join(hall.root, '.raider'), { recursive: true });
    fs.writeFileSync(path.join(hall.root, '.raider/sessions'), 'not a directory');
    const { reply, done, events } = await run(hall, { name: '1bjorn', mission: 'argv' });
    expect(reply.session).toBeUndefined();
    expect(JSON.parse(done!.response).argv).not.toContain('--session');
    const types = events.map((e) => e.type);
    expect(types.indexOf('hall.session_error')).toBe(types.indexOf('raider.spawned') + 1);
    expect(events.find((e) => e.type === 'hall.session_error')).toMatchObject({
      binding: 'slot:1bjorn',
      id: reply.id,
      error: expect.any(String),
    });
  });

  it('a socket spawn may carry a binding: missions of one binding run one after the other', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const tap = await hall.events('raider.');
    // The first runs until the test has seen the second wait (no timing window to miss).
    const release = path.join(hall.root, 'release-a');
    const a = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${release}`, binding: 'telegram:ops:42' });
    const b = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer b', binding: 'telegram:ops:42' });
    expect(b).toMatchObject({ queued: 1, slot: 'bjorn', binding: 'telegram:ops:42', queue_depth: 1 });
    // The file is a checkpoint: it follows the queue shortly after the reply (docs/storage.md).
    const queuesFile = path.join(hall.root, '.raider-hall/state/binding_queues.json');
    await eventually(
      () => expect(JSON.parse(fs.readFileSync(queuesFile, 'utf8'))['telegram:ops:42']?.map((m: Json) => m.mission)).toEqual(['answer b']),
      2000,
      10,
    );
    fs.writeFileSync(release, '');
    const doneB = await tap.waitFor((e) => e.type === 'raider.done' && e.response === 'b');
    const doneA = tap.all.find((e) => e.type === 'raider.done' && e.id === a.id)!;
    expect(doneB.session).toBe(doneA.session);
    expect(tap.all.filter((e) => e.type === 'raider.done').map((e) => e.id)[0]).toBe(a.id);
  });

  it('a hall start forgets acp bindings and stale cron bindings and drops their waiting missions', async () => {
    const root = tempRoot();
    const state = path.join(root, '.raider-hall/state');
    fs.mkdirSync(state, { recursive: true });
    fs.writeFileSync(
      path.join(root, '.raider-hall.yml'),
      "raiders: { bjorn: {} }\ncron:\n  - { name: bjorn, cron: '0 0 1 1 *', mission: keep }\n",
    );
    fs.writeFileSync(
      path.join(state, 'sessions.json'),
      JSON.stringify({ 'acp:acp-1': 'S1', 'cron:gone': 'S2', 'cron:bjorn': 'S3', 'telegram:ops:1': 'S4' }),
    );
    fs.writeFileSync(
      path.join(state, 'binding_queues.json'),
      JSON.stringify({ 'acp:acp-1': [{ name: 'bjorn', mission: 'drop me', binding: 'acp:acp-1' }] }),
    );
    fs.writeFileSync(path.join(state, '1bjorn.queue.json'), JSON.stringify([{ mission: 'drop me too', binding: 'cron:gone' }]));
    hall = await startTestHall({ root });
    const sessions = JSON.parse(fs.readFileSync(path.join(state, 'sessions.json'), 'utf8'));
    expect(sessions).toEqual({ 'cron:bjorn': 'S3', 'telegram:ops:1': 'S4' });
    expect(JSON.parse(fs.readFileSync(path.join(state, 'binding_queues.json'), 'utf8'))).toEqual({});
    expect(JSON.parse(fs.readFileSync(path.join(state, '1bjorn.queue.json'), 'utf8'))).toEqual([]);
    expect((await hall.request({ cmd: 'status' })).running).toBe(0);
  });

  it('reads queue files another implementation of the hall wrote (no ids, plain strings) and runs them first', async () => {
    const root = tempRoot();
    const state = path.join(root, '.raider-hall/state');
    fs.mkdirSync(state, { recursive: true });
    fs.writeFileSync(path.join(state, '1bjorn.queue.json'), '[{"mission":"answer perl-1"},"answer perl-2"]');
    // The hall runs the queue as it starts, before a tap could subscribe: every event from its first one.
    const responses: unknown[] = [];
    hall = await startTestHall({ root, onEvent: (e) => void (e.type === 'raider.done' && responses.push(e.response)) });
    await eventually(() => expect(responses).toContain('perl-2'));
    expect(responses.filter((r) => String(r).startsWith('perl'))).toEqual(['perl-1', 'perl-2']);
  });
});

describe('refusal of raider entries (provider aliases)', () => {
  const config = `raiders:
  host: { provider: llm.example.com }
  both: { provider: acme, engine: openai }
  nostore: { provider: other }
  ivar: { provider: acme, model: example-model, permission_mode: acceptEdits }
`;
  function home(content: string | null): string {
    const dir = tempRoot('home-');
    if (content !== null) {
      fs.mkdirSync(path.join(dir, '.raider'));
      fs.writeFileSync(path.join(dir, '.raider/config.yml'), content);
    }
    return dir;
  }

  it.each([
    ['host', 'provider_not_alias'],
    ['both', 'provider_with_engine'],
    ['nostore', 'provider_not_stored'],
  ])('refuses %s with %s: nothing runs, reply, event and log line say why', async (name, reason) => {
    hall = await startTestHall({
      config,
      env: { HOME: home('providers:\n  acme: { url: "https://llm.example.com/v1", engine: openai }\n') },
    });
    const { reply, events } = await run(hall, { name, mission: 'answer never' });
    expect(reply).toEqual({ status: 'refused', reason, error: expect.stringContaining(name) });
    const refused = events.find((e) => e.type === 'raider.refused')!;
    expect(refused).toMatchObject({ status: 'refused', slot: name, name, reason, error: reply.error, queued: false });
    expect(refused.id).toBeUndefined();
    expect(refused.pid).toBeUndefined();
    expect(events.some((e) => e.type === 'raider.spawned')).toBe(false);
    const log = fs.readFileSync(path.join(hall.root, `.raider-hall/logs/${name}.log`), 'utf8');
    expect(log).toBe(`[hall] raider ${name} refused: ${reply.error}; mission not run\n`);
  });

  it('an unreadable provider store refuses with provider_config', async () => {
    hall = await startTestHall({ config, env: { HOME: home('providers: [unclosed') } });
    const { reply } = await run(hall, { name: 'ivar', mission: 'answer never' });
    expect(reply).toMatchObject({ status: 'refused', reason: 'provider_config' });
  });

  it('a stored alias runs with --provider, --model and --permission-mode', async () => {
    hall = await startTestHall({ config, env: { HOME: home('providers:\n  acme: { url: "https://llm.example.com/v1" }\n') } });
    const { done } = await run(hall, { name: 'ivar', mission: 'argv' });
    const argv = JSON.parse(done!.response).argv as string[];
    expect(argv.slice(0, 7)).toEqual([
      '--stream-json',
      '--provider',
      'acme',
      '--model',
      'example-model',
      '--permission-mode',
      'acceptEdits',
    ]);
  });

  it('a mission refused as it is pulled from a queue says queued: true', async () => {
    const storeHome = home('providers:\n  acme: { url: "https://x/v1" }\n');
    hall = await startTestHall({ config, env: { HOME: storeHome } });
    const tap = await hall.events('raider.');
    // The first waits until it is cancelled, after the provider is gone: no timing window to miss.
    const first = await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'wait 600' });
    const second = await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'answer later' });
    expect(second).toMatchObject({ queued: 1 });
    fs.writeFileSync(path.join(storeHome, '.raider/config.yml'), 'providers: {}\n');
    expect(await hall.request({ cmd: 'cancel', id: first.id })).toMatchObject({ cancelled: 1 });
    const refused = await tap.waitFor((e) => e.type === 'raider.refused');
    expect(refused).toMatchObject({ slot: '1ivar', name: '1ivar', reason: 'provider_not_stored', queued: true, binding: 'slot:1ivar' });
    expect(tap.all.find((e) => e.type === 'raider.done')).toMatchObject({ id: first.id });
    const queueFile = path.join(hall.root, '.raider-hall/state/1ivar.queue.json');
    await eventually(() => expect(JSON.parse(fs.readFileSync(queueFile, 'utf8'))).toEqual([]));
  });
});
