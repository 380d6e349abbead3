// Bounded heavy-hitter counting (the space-saving algorithm, Metwally et al. 2005): at most
// `capacity` keys are kept; a new key past it replaces the one with the smallest count and
// inherits that count as its possible overestimate (`error`). Any key counted more than
// total / capacity times is guaranteed to be kept, and count - error is a lower bound.

export interface Counted<V> {
  readonly key: string;
  /** Estimated weight: at least the true weight, at most true + error. */
  count: number;
  readonly error: number;
  readonly value: V;
}

export class TopCounter<V> {
  private readonly entries = new Map<string, Counted<V>>();

  constructor(readonly capacity: number) {}

  /** Adds `weight` to `key` and returns its entry, with a value from `create` when the key was not kept. */
  add(key: string, weight: number, create: () => V): Counted<V> {
    let entry = this.entries.get(key);
    if (entry !== undefined) {
      entry.count += weight;
      return entry;
    }
    let error = 0;
    if (this.entries.size >= this.capacity) {
      const smallest = this.smallest();
      this.entries.delete(smallest.key);
      error = smallest.count;
    }
    entry = { key, count: error + weight, error, value: create() };
    this.entries.set(key, entry);
    return entry;
  }

  /** The kept entries, largest count first, at most `n`. */
  top(n = this.capacity): Counted<V>[] {
    return [...this.entries.values()].sort((a, b) => b.count - a.count).slice(0, n);
  }

  get size(): number {
    return this.entries.size;
  }

  private smallest(): Counted<V> {
    let smallest: Counted<V> | undefined;
    for (const entry of this.entries.values()) if (smallest === undefined || entry.count < smallest.count) smallest = entry;
    return smallest!;
  }
}
