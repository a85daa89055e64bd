/**
 * Raider names, slots and bindings: which names are accepted, which run alone
 * (numbered slots such as `1bjorn`) and which binding a run belongs to.
 */

/** A raider name becomes part of file names, so it must be safe as one. */
export const SAFE_RAIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * A provider alias of `~/.raider/config.yml`: the same shape as a raider
 * name, so a host, HOST:PORT or URL is never taken for one.
 */
export const PROVIDER_ALIAS = SAFE_RAIDER_NAME;

/** A numbered (singleton) slot: digits, then a lower-case letter, then `[-a-z0-9]`. */
export const NUMBERED_SLOT = /^(\d+)([a-z][-a-z0-9]*)$/;

export interface SlotOf {
  /** The slot the name runs in: the whole name. */
  slot: string;
  /** The raider entry of `.raider-hall.yml` the name uses: the name without its number. */
  baseName: string;
  /** True for a numbered slot: one run at a time, the rest wait in its queue. */
  singleton: boolean;
}

export function slotOf(name: string): SlotOf {
  const numbered = NUMBERED_SLOT.exec(name);
  const baseName = numbered?.[2];
  if (baseName !== undefined) return { slot: name, baseName, singleton: true };
  return { slot: name, baseName: name, singleton: false };
}

/** Why a raider name is not accepted, or null when it is. */
export function raiderNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name === '') return 'spawn requires a raider name';
  if (!SAFE_RAIDER_NAME.test(name)) {
    return `invalid raider name ${JSON.stringify(name)}: use 1 to 64 letters, digits, '_' or '-', starting with a letter or digit`;
  }
  return null;
}

/** Why a binding key is not accepted, or null when it is. */
export function bindingProblem(binding: unknown): string | null {
  if (typeof binding !== 'string' || binding === '') return 'a binding must be a non-empty string';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what a binding may not hold
  if (binding.length > 256 || /[\s\u0000-\u001f]/.test(binding)) {
    return `invalid binding ${JSON.stringify(binding.slice(0, 80))}: no whitespace or control characters, at most 256 characters`;
  }
  return null;
}

/** The implicit binding of a numbered slot, continued by each of its missions that has none of its own. */
export function slotBinding(slot: string): string {
  return `slot:${slot}`;
}

/** The binding a run of `slot` continues: its own, else the slot's for a numbered slot, else none. */
export function effectiveBinding(slot: string, explicit: string | undefined): string | undefined {
  if (explicit !== undefined) return explicit;
  return NUMBERED_SLOT.test(slot) ? slotBinding(slot) : undefined;
}

/**
 * What a client is told when a name has no entry in `.raider-hall.yml`: the
 * hall runs it all the same (the control socket always allowed it), with the raider's own
 * defaults, which is rarely what a typo meant.
 */
export function noEntryNotice(name: string): string {
  const { baseName } = slotOf(name);
  return `${baseName} has no entry in .raider-hall.yml; it runs with the raider's defaults`;
}
