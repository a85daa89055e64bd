/**
 * A slot's or raider's name where a run id was meant (`attach claude`,
 * `logs 1bjorn`): the one run running under that name, so that `attach` and
 * `logs` read a name alike. Several is an error with code `ambiguous_run`
 * that names them.
 */
import { ask, HallAnswer } from './hall-ask.js';

export interface NamedRun {
  id: string;
  slot: string;
}

/** The running runs of the slot or raider entry `name` (none when no hall answers). */
async function runsNamed(dir: string, name: string): Promise<NamedRun[]> {
  const ps = await ask(dir, 'ps', {}).catch(() => null);
  return (ps?.raiders ?? []).filter((r) => r.slot === name || r.base_name === name).map((r) => ({ id: r.id, slot: r.slot }));
}

/**
 * The one running run of `name`, or null when none runs under it. `pick`
 * ends the error that names several ("attach one of them").
 */
export async function runNamed(dir: string, name: string, pick: string): Promise<NamedRun | null> {
  const running = await runsNamed(dir, name);
  if (running.length > 1)
    throw new HallAnswer(`${name} names ${running.length} running runs; ${pick}: ${running.map((r) => r.id).join(', ')}`, 'ambiguous_run');
  return running[0] ?? null;
}
