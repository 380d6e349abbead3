// Seeded randomness for the query tests: rerun a failure with QUERY_SEED=<printed seed>.

export interface Random {
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
}

/** The seed of this run: QUERY_SEED if set, else a fresh one. */
export function runSeed(): number {
  const fromEnv = process.env['QUERY_SEED'];
  return fromEnv !== undefined ? Number(fromEnv) >>> 0 : Math.floor(Math.random() * 2 ** 32);
}

/** mulberry32: small, fast, good enough to drive test generators. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    int: (n) => Math.floor(next() * n),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    chance: (probability) => next() < probability,
  };
}
