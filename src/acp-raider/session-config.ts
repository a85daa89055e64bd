/**
 * The entry's `permission_mode` and `model` applied to a new agent session
 * (docs/agents.md, "Mode and model"). A mode goes through the session's
 * modes (`session/set_mode`), else the agent's config option of category
 * `mode`; a model through its config option of category `model` (the only
 * model choice stable ACP has). A value the agent does not offer is a plan
 * that fails the run; an agent that offers no such choice at all gets a note
 * and the run goes on, since the agent then has one behaviour to give.
 */
import type { NewSessionResponse, SessionConfigOption } from '@agentclientprotocol/sdk';

/** One request to send to the agent before the prompt. */
export type ConfigStep = { kind: 'set_mode'; modeId: string } | { kind: 'set_config_option'; configId: string; value: string };

export type ConfigPlan =
  | { ok: true; steps: ConfigStep[]; notes: Array<{ setting: 'mode' | 'model'; text: string }> }
  | { ok: false; error: string };

export interface Wanted {
  permissionMode?: string;
  model?: string;
}

export function planSessionConfig(session: NewSessionResponse, wanted: Wanted): ConfigPlan {
  const steps: ConfigStep[] = [];
  const notes: Array<{ setting: 'mode' | 'model'; text: string }> = [];
  const options = session.configOptions ?? [];

  if (wanted.permissionMode !== undefined) {
    const mode = wanted.permissionMode;
    const modes = session.modes?.availableModes.map((m) => m.id);
    const option = selectOption(options, 'mode');
    if (modes !== undefined && modes.length > 0) {
      if (!modes.includes(mode)) {
        if (mode !== DEFAULT_MODE) return { ok: false, error: unknownText('permission mode', mode, modes) };
        notes.push(keptDefault(session.modes?.currentModeId));
      } else if (session.modes?.currentModeId !== mode) steps.push({ kind: 'set_mode', modeId: mode });
    } else if (option !== undefined) {
      const values = selectValues(option);
      if (!values.includes(mode)) {
        if (mode !== DEFAULT_MODE) return { ok: false, error: unknownText('permission mode', mode, values) };
        notes.push(keptDefault(option.currentValue));
      } else if (option.currentValue !== mode) steps.push({ kind: 'set_config_option', configId: option.id, value: mode });
    } else {
      notes.push({ setting: 'mode', text: `the agent offers no session modes: permission mode ${mode} not applied` });
    }
  }

  if (wanted.model !== undefined) {
    const model = wanted.model;
    const option = selectOption(options, 'model');
    if (option !== undefined) {
      const values = selectValues(option);
      if (!values.includes(model)) return { ok: false, error: unknownText('model', model, values) };
      if (option.currentValue !== model) steps.push({ kind: 'set_config_option', configId: option.id, value: model });
    } else {
      notes.push({ setting: 'model', text: `the agent offers no model choice: model ${model} not applied` });
    }
  }
  return { ok: true, steps, notes };
}

/**
 * The hall's own name for "no particular mode" (an editor session or an entry
 * that chose none says it): an agent without a mode of that name keeps its
 * own default rather than failing every such run.
 */
const DEFAULT_MODE = 'default';

function keptDefault(current: string | undefined): { setting: 'mode'; text: string } {
  return { setting: 'mode', text: `the agent has no mode named default: it keeps its own${current !== undefined ? ` (${current})` : ''}` };
}

type SelectOption = Extract<SessionConfigOption, { type: 'select' }>;

function selectOption(options: readonly SessionConfigOption[], category: 'mode' | 'model'): SelectOption | undefined {
  return options.find((o): o is SelectOption => o.type === 'select' && o.category === category);
}

/** The values of a select option, flat across its groups. */
function selectValues(option: SelectOption): string[] {
  return option.options.flatMap((o) => ('group' in o ? o.options.map((v) => v.value) : [o.value]));
}

function unknownText(what: string, value: string, offered: readonly string[]): string {
  return `the agent offers no ${what} ${value}; it offers: ${offered.join(', ')}`;
}
