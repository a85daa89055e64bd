/** mulberry32: small, fast, and the same sequence for the same seed everywhere, so a fuzz failure can be replayed. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  /** One entry, each as likely as its weight (the first element); one draw, so a seed replays the same picks. */
  const weighted = <T extends readonly [number, ...unknown[]]>(entries: readonly T[]): T => {
    let roll = int(entries.reduce((n, [w]) => n + w, 0));
    for (const entry of entries) {
      roll -= entry[0];
      if (roll < 0) return entry;
    }
    throw new Error('weighted: no entries, or all weights are zero');
  };
  return { next, int, pick, weighted, chance: (p: number) => next() < p };
}

export type Rng = ReturnType<typeof prng>;
