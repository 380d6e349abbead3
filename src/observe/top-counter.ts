// Bounded heavy-hitter counting (the space-saving algorithm, Metwally et al. 2005): at most
// `capacity` keys are kept; a new key past it replaces the one with the smallest count and
// inherits that count as its possible overestimate (`error`). Any key counted more than
// total / capacity times is guaranteed to be kept, and count - error is a lower bound.
// The kept keys sit in a min-heap by count, so a hit or a miss costs O(log capacity): this runs
// on every point read. Optionally, once full, a key not kept is let in only on about one miss in
// `admitOneIn` (sample and hold, Estan & Varghese 2002): a workload spread over many more keys
// than are kept then costs a lookup per event instead of an eviction, and a heavy key still gets
// in after a few of its events, missing at most those from its count.

export interface Counted<V> {
  readonly key: string;
  /** Estimated weight: at least the true weight, at most true + error. */
  readonly count: number;
  readonly error: number;
  readonly value: V;
}

interface Slot<V> extends Counted<V> {
  count: number;
  /** Index in the heap. */
  position: number;
}

export class TopCounter<V> {
  private readonly slots = new Map<string, Slot<V>>();
  private readonly heap: Slot<V>[] = [];
  /** xorshift32 state deciding admissions (seeded: runs replay). */
  private random = 0x9e3779b9;

  constructor(
    readonly capacity: number,
    private readonly admitOneIn = 1,
  ) {}

  /**
   * Adds `weight` (>= 0) to `key` and returns its entry, with a value from `create` when the key
   * was not kept; undefined when the key was not let in (only with `admitOneIn` > 1).
   */
  add(key: string, weight: number, create: () => V): Counted<V> | undefined {
    let slot = this.slots.get(key);
    if (slot !== undefined) {
      slot.count += weight;
      this.siftDown(slot.position);
      return slot;
    }
    if (this.heap.length < this.capacity) {
      slot = { key, count: weight, error: 0, value: create(), position: this.heap.length };
      this.heap.push(slot);
      this.slots.set(key, slot);
      this.siftUp(slot.position);
      return slot;
    }
    if (this.admitOneIn > 1 && this.nextRandom() % this.admitOneIn !== 0) return undefined;
    const smallest = this.heap[0]!;
    this.slots.delete(smallest.key);
    slot = { key, count: smallest.count + weight, error: smallest.count, value: create(), position: 0 };
    this.heap[0] = slot;
    this.slots.set(key, slot);
    this.siftDown(0);
    return slot;
  }

  /** The kept entries, largest count first, at most `n`. */
  top(n = this.capacity): Counted<V>[] {
    return [...this.heap].sort((a, b) => b.count - a.count).slice(0, n);
  }

  get size(): number {
    return this.heap.length;
  }

  private nextRandom(): number {
    let x = this.random;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.random = x >>> 0;
    return this.random;
  }

  private siftUp(position: number): void {
    const { heap } = this;
    while (position > 0) {
      const parent = (position - 1) >> 1;
      if (heap[parent]!.count <= heap[position]!.count) return;
      this.swap(position, parent);
      position = parent;
    }
  }

  private siftDown(position: number): void {
    const { heap } = this;
    for (;;) {
      const left = 2 * position + 1;
      if (left >= heap.length) return;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.count < heap[left]!.count ? right : left;
      if (heap[position]!.count <= heap[child]!.count) return;
      this.swap(position, child);
      position = child;
    }
  }

  private swap(a: number, b: number): void {
    const { heap } = this;
    const slotA = heap[a]!;
    const slotB = heap[b]!;
    heap[a] = slotB;
    heap[b] = slotA;
    slotA.position = b;
    slotB.position = a;
  }
}
