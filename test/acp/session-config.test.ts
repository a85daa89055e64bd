/**
 * The bridge's plan for an agent session's mode (docs/agents.md, "Mode and
 * model"): the hall's `default` is "no particular mode", so an agent that has
 * no mode of that name keeps its own instead of failing the run, while any
 * other mode it does not offer still fails it.
 */
import type { NewSessionResponse } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { planSessionConfig } from '../../src/acp-raider/session-config.js';

const withModes = (ids: string[], current: string): NewSessionResponse => ({
  sessionId: 's1',
  modes: { currentModeId: current, availableModes: ids.map((id) => ({ id, name: id })) },
});

const withModeOption = (values: string[], current: string): NewSessionResponse => ({
  sessionId: 's1',
  configOptions: [
    {
      type: 'select',
      id: 'mode',
      name: 'Mode',
      category: 'mode',
      currentValue: current,
      options: values.map((value) => ({ value, name: value })),
    },
  ],
});

describe('planSessionConfig: the default mode', () => {
  it('sets default when the agent offers it', () => {
    expect(planSessionConfig(withModes(['auto', 'default', 'plan'], 'auto'), { permissionMode: 'default' })).toEqual({
      ok: true,
      steps: [{ kind: 'set_mode', modeId: 'default' }],
      notes: [],
    });
  });

  it("keeps the agent's own mode, with a note, when it has none named default (modes and config option alike)", () => {
    const note = { setting: 'mode', text: 'the agent has no mode named default: it keeps its own (ask)' };
    expect(planSessionConfig(withModes(['ask', 'code'], 'ask'), { permissionMode: 'default' })).toEqual({
      ok: true,
      steps: [],
      notes: [note],
    });
    expect(planSessionConfig(withModeOption(['ask', 'code'], 'ask'), { permissionMode: 'default' })).toEqual({
      ok: true,
      steps: [],
      notes: [note],
    });
  });

  it('still fails the run for any other mode the agent does not offer', () => {
    expect(planSessionConfig(withModes(['ask', 'code'], 'ask'), { permissionMode: 'plan' })).toEqual({
      ok: false,
      error: 'the agent offers no permission mode plan; it offers: ask, code',
    });
  });
});
