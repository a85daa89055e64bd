/**
 * The engines the built-in raider knows: what `engine:` in `.raider-hall.yml`
 * and `raider hall init --engine` may name. One list for the raider, which
 * runs them, and the hall, which refuses an unknown one at load instead of
 * at each run.
 */
export const KNOWN_ENGINES = ['anthropic', 'openai', 'scripted'] as const;
export type KnownEngine = (typeof KNOWN_ENGINES)[number];

export function isKnownEngine(name: string): name is KnownEngine {
  return KNOWN_ENGINES.some((known) => known === name);
}

/** Why `name` is not an engine, e.g. "unknown engine 'nosuch' (known: anthropic, openai, scripted)". */
export function unknownEngineText(name: string): string {
  return `unknown engine '${name}' (known: ${KNOWN_ENGINES.join(', ')})`;
}
