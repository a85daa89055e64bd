/**
 * The protocol's schemas read frames and payloads as the hall answers them on
 * the wire: the texts here are the ones control-socket.test.ts pins end to end.
 */
import { describe, expect, it } from 'vitest';
import { commandService, type CommandHandlers } from '../../src/protocol/command-service.js';
import { SpawnPayload } from '../../src/protocol/commands.js';
import { checkCommand, Frame, parseFrame } from '../../src/protocol/frames.js';

const frame = (value: unknown) => parseFrame(JSON.stringify(value));

describe('parseFrame', () => {
  it('reads a command and a subscription', () => {
    expect(frame({ type: 'command', payload: { cmd: 'ps' } })).toEqual({ kind: 'command', cmd: 'ps', body: { cmd: 'ps' } });
    expect(frame({ type: 'subscribe', payload: { filter: 'raider.' } })).toEqual({ kind: 'subscribe', filter: 'raider.' });
    expect(frame({ type: 'subscribe', payload: null })).toEqual({ kind: 'subscribe', filter: '' });
    expect(frame({ type: 'subscribe' })).toEqual({ kind: 'subscribe', filter: '' });
  });

  it('answers a bad frame with the error the hall writes', () => {
    expect(parseFrame('nope')).toMatchObject({ kind: 'error', error: expect.stringMatching(/^invalid JSON: /) });
    for (const value of [7, [1], 'x', null]) {
      expect(frame(value)).toEqual({ kind: 'error', error: 'invalid frame: expected a JSON object with type and payload' });
    }
    expect(frame({ type: 'command', payload: [] })).toEqual({ kind: 'error', error: 'invalid frame: payload must be a JSON object' });
    expect(frame({ type: 'subscribe', payload: { filter: 3 } })).toEqual({ kind: 'error', error: 'subscribe: filter must be a string' });
    expect(frame({ type: 'hello' })).toEqual({ kind: 'error', error: 'unknown message type: hello' });
    expect(frame({ type: 5 })).toEqual({ kind: 'error', error: 'unknown message type: ' });
    expect(frame({ payload: null })).toEqual({ kind: 'error', error: 'unknown message type: ' });
    expect(frame({})).toEqual({ kind: 'error', error: 'unknown message type: ' });
    expect(frame({ type: 'command', payload: { cmd: 'toString' } })).toEqual({ kind: 'error', error: 'unknown command: toString' });
    expect(frame({ type: 'command', payload: { cmd: 1 } })).toEqual({ kind: 'error', error: 'unknown command: ' });
  });
});

describe('checkCommand', () => {
  const error = (cmd: Parameters<typeof checkCommand>[0], body: Record<string, unknown>) => checkCommand(cmd, { cmd, ...body });

  it('refuses missing ids and bindings in the words of each command', () => {
    for (const cmd of ['attach', 'logs', 'kill', 'cancel'] as const) {
      for (const id of [undefined, null, '', 42, ['x']]) expect(error(cmd, { id })).toEqual({ ok: false, error: `${cmd} requires an id` });
    }
    for (const binding of [undefined, '', 7])
      expect(error('session_reset', { binding })).toEqual({ ok: false, error: 'session_reset requires a binding' });
  });

  it('leaves telegram_reply to the face that answers it', () => {
    expect(error('telegram_reply', {})).toEqual({ ok: true, payload: { cmd: 'telegram_reply' } });
  });

  it('checks a spawn field by field, the name first', () => {
    expect(error('spawn', { name: 7, mission: 5, binding: '' })).toEqual({ ok: false, error: 'spawn requires a raider name' });
    expect(error('spawn', { name: 'a/b' })).toMatchObject({ ok: false, error: expect.stringMatching(/^invalid raider name "a\/b": /) });
    expect(error('spawn', { name: 'bjorn', mission: ['x'], binding: '' })).toEqual({
      ok: false,
      error: 'spawn requires a mission (a string)',
    });
    expect(error('spawn', { name: 'bjorn', mission: 'go', binding: 42 })).toEqual({
      ok: false,
      error: 'a binding must be a non-empty string',
    });
    // An absent, null or blank mission is an empty one, and refused; so is one over the size limit.
    for (const mission of [undefined, null, '  \n']) {
      expect(error('spawn', { name: 'bjorn', mission })).toEqual({ ok: false, error: 'spawn requires a mission: it is empty' });
    }
    expect(error('spawn', { name: 'bjorn', mission: 'x'.repeat(100_001) })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^the mission is 100001 bytes; the hall accepts at most 100000/),
    });
    // A null binding is none; unknown fields go.
    expect(error('spawn', { name: 'bjorn', mission: 'go', binding: null, extra: 1 })).toEqual({
      ok: true,
      payload: { cmd: 'spawn', name: 'bjorn', mission: 'go' },
    });
  });
});

describe('the plain reading of frames and spawns (no schema on their path)', () => {
  const bodies: unknown[] = [
    { cmd: 'spawn', name: '1q', mission: 'wait 600' },
    { cmd: 'spawn', name: 'bjorn', mission: 'go', binding: 'telegram:ops:42' },
    { cmd: 'spawn', name: 'bjorn', mission: 'go', binding: null, extra: [1] },
    { cmd: 'spawn', name: 'bjorn', mission: 'go', binding: '' },
    { cmd: 'spawn', name: 'bjorn', mission: 'go', binding: 'a b' },
    { cmd: 'spawn', name: 'bjorn', mission: 'go', binding: 7 },
    { cmd: 'spawn', name: '../x', mission: 'go' },
    { cmd: 'spawn', name: 'x'.repeat(65), mission: 'go' },
    { cmd: 'spawn', name: 'bjorn', mission: '   ' },
    { cmd: 'spawn', name: 'bjorn', mission: null },
    { cmd: 'spawn', name: 'bjorn', mission: 'x'.repeat(100_001) },
    { cmd: 'spawn', name: 'bjorn' },
    { cmd: 'spawn', mission: 'go' },
    { cmd: 'ps', name: 'bjorn', mission: 'go' },
    { cmd: 'spawn', name: 7, mission: 'go' },
    JSON.parse('{"cmd":"spawn","name":"bjorn","mission":"go","__proto__":{"binding":"x"}}'),
    [],
    null,
  ];

  it('takes and refuses a spawn exactly as its schema does', () => {
    for (const body of bodies) {
      const schema = SpawnPayload.safeParse(body);
      const checked = checkCommand('spawn', body);
      if (schema.success) expect(checked).toEqual({ ok: true, payload: schema.data });
      else expect(checked).toEqual({ ok: false, error: schema.error.issues[0]?.message });
    }
  });

  it('reads a frame exactly as its schema does', () => {
    const lines = [
      ...bodies.map((payload) => JSON.stringify({ type: 'command', payload })),
      '{"type":"command"}',
      '{"type":"subscribe","payload":{"filter":"raider."}}',
      '{"type":"command","payload":"x"}',
      '{"payload":{"cmd":"ps"}}',
      '{"type":"command","payload":{"__proto__":{"cmd":"ps"}}}',
      '[{"type":"command"}]',
    ];
    for (const line of lines) {
      const schema = Frame.safeParse(JSON.parse(line));
      const frame = parseFrame(line);
      if (!schema.success) expect(frame).toEqual({ kind: 'error', error: schema.error.issues[0]?.message });
      else if (schema.data.type === 'command' && typeof schema.data.payload.cmd === 'string' && frame.kind === 'command')
        expect(frame.body).toEqual(schema.data.payload);
    }
    expect(parseFrame(lines[0] ?? '')).toEqual({ kind: 'command', cmd: 'spawn', body: bodies[0] });
  });
});

describe('commandService', () => {
  const unused = () => ({ error: 'not asked' });
  const handlers: CommandHandlers = {
    spawn: unused,
    ps: unused,
    status: unused,
    attach: unused,
    cancel: unused,
    queue: unused,
    queue_front: unused,
    answer: unused,
    sessions: unused,
    session_reset: unused,
    worktree_list: unused,
    worktree_rm: unused,
    worktree_prune: unused,
    telegram_reply: unused,
    kill: (p) => ({ killed: 1, id: p.id }),
    logs: () => {
      throw new Error('disk gone');
    },
  };
  const service = commandService(handlers);

  it('checks the payload, runs the handler, and answers a throw as a failed command', async () => {
    expect(await service('kill', { id: 'bjorn-1' })).toEqual({ killed: 1, id: 'bjorn-1' });
    expect(await service('kill', {})).toEqual({ error: 'kill requires an id' });
    expect(await service('logs', { id: 'bjorn-1' })).toEqual({ error: 'command failed: disk gone' });
  });
});
