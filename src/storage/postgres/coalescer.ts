// Requests of one kind that meet in the engine become one statement. Each statement costs the
// database a round trip, a transaction and (for a write) a commit, and costs this process a
// socket write that wakes the server: on a 2-core machine those fixed costs, not the row work,
// bound point reads and lone writes (a profile of lone writes found a third of this process's
// CPU time in the driver's writev). So at most `runningMax` statements of a kind are in flight; requests that
// arrive meanwhile wait and go together in the next one. An idle engine sends a request at once
// (the same turn of the event loop), so a lone client waits no longer than before.
//
// Consistency is untouched: a request joins a statement sent after it arrived, so the statement
// sees every write acknowledged before the request came, as its own statement would have. The
// statement decides each member's outcome on its own (a write that finds its entity present
// writes nothing, and the others still do); when it fails as a whole for something one member
// may have caused, each member runs again alone, so no request fails for another's sake.
import assert from 'node:assert/strict';

export interface CoalescerOptions<Item, Outcome> {
  /** One statement for `items` (in the order given): an outcome per item, in the same order. */
  readonly run: (items: readonly Item[]) => Promise<readonly Outcome[]>;
  /** Statements of this kind in flight at most. */
  readonly runningMax: number;
  /** Items one statement takes at most. */
  readonly itemsMax: number;
  /**
   * Items with the same key never share a statement (a row one statement writes twice is an
   * error in PostgreSQL); the later waits for the next. Undefined: any items may.
   */
  readonly keyOf?: (item: Item) => string;
  /**
   * Whether the items of a statement that failed with `error` run again alone (one of them may
   * be the cause: a constraint, a lock). Otherwise (the database is out of reach, say) they all
   * fail with it at once. Undefined: always.
   */
  readonly rerunAlone?: (error: unknown) => boolean;
}

interface Waiting<Item, Outcome> {
  readonly item: Item;
  readonly resolve: (outcome: Outcome) => void;
  readonly reject: (error: unknown) => void;
}

export class Coalescer<Item, Outcome> {
  private waiting: Waiting<Item, Outcome>[] = [];
  private running = 0;
  private sentStatements = 0;
  private sentItems = 0;

  constructor(private readonly options: CoalescerOptions<Item, Outcome>) {
    assert(options.runningMax >= 1 && options.itemsMax >= 1, 'a coalescer runs at least one statement of one item');
  }

  /** Statements sent, and the items they carried: their ratio is the mean group size. */
  get statements(): number {
    return this.sentStatements;
  }

  get items(): number {
    return this.sentItems;
  }

  submit(item: Item): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.running < this.options.runningMax && this.waiting.length > 0) this.send(this.take());
  }

  /** The next group: the oldest waiting items, up to itemsMax, no two with one key. */
  private take(): Waiting<Item, Outcome>[] {
    const { itemsMax, keyOf } = this.options;
    if (keyOf === undefined) return this.waiting.splice(0, itemsMax);
    const group: Waiting<Item, Outcome>[] = [];
    const keys = new Set<string>();
    const left: Waiting<Item, Outcome>[] = [];
    for (const waiting of this.waiting) {
      const key = keyOf(waiting.item);
      if (group.length < itemsMax && !keys.has(key)) {
        keys.add(key);
        group.push(waiting);
      } else left.push(waiting);
    }
    this.waiting = left;
    return group;
  }

  private send(group: readonly Waiting<Item, Outcome>[]): void {
    this.running++;
    this.sentStatements++;
    this.sentItems += group.length;
    this.options
      .run(group.map((waiting) => waiting.item))
      .then(
        (outcomes) => {
          assert.equal(outcomes.length, group.length, 'a statement answers each of its items');
          group.forEach((waiting, index) => waiting.resolve(outcomes[index]!));
        },
        (error: unknown) => {
          if (group.length === 1 || this.options.rerunAlone?.(error) === false)
            for (const waiting of group) waiting.reject(error);
          // Each item runs again alone, and fails only for itself. They go at once, beyond
          // runningMax: they were already admitted (the pool bounds them).
          else for (const waiting of group) this.send([waiting]);
        },
      )
      .finally(() => {
        this.running--;
        this.dispatch();
      });
  }
}
