// Automatic property indexes, shared by the engines. A filter on a custom property (`Bucket eq 7`)
// is a scan of every row of the table on the service (docs/architecture.md#queries), and so it is here until a
// table's scans have examined `autoIndexRows` rows for one property: the engine then indexes that
// property for that table alone (a partial index the database maintains with every write) and
// answers later equality conditions on it from the index, in O(log n + k), in key order, with the
// same pages and continuations. Writes to other tables pay nothing; writes to an indexed table
// pay one index entry per index. Which rows an index serves is decided here, once for every
// engine; how it is built and read is each engine's own business.
import assert from 'node:assert/strict';
import type { PropertyCondition } from './table-store.js';

/** Default of `--auto-index`: rows a table's scans examine for one property before it is indexed. */
export const autoIndexRowsDefault = 100_000;
/** Indexes one table gets at most, so that its writes stay cheap whatever its readers filter on. */
export const indexesPerTableMax = 4;
/** (table, property) pairs whose examined rows are counted at once: clients choose the names. */
const countersMax = 10_000;

/**
 * Property names an index may carry: they go into SQL text and index names as they are. Names
 * outside this set (legal in entities: Azure REST: understanding-the-table-service-data-model) are scanned as before.
 */
const indexableName = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Integers up to 2^53 in magnitude: every stored value equal to such a literal has the same text. */
const exactIntegerMax = 2n ** 53n;

/** An equality condition an index on its property can serve. */
export type IndexedEquality = PropertyCondition & {
  readonly kind: 'number' | 'string' | 'boolean';
  readonly operator: 'eq';
};

/**
 * The first `eq` condition of `conditions` an index can serve, if any; with `indexed`, the first
 * whose property `indexed` says has an index, else the first at all. Such a condition must
 * select exactly the rows whose stored value equals the literal in every engine's index form:
 * - a number of at most 2^53 in magnitude (a larger one may equal a stored Double whose shortest
 *   text differs from its exact value), finite (pushdown.ts keeps only finite ones);
 * - a string without U+0000 (an engine may store such strings escaped) and, as every string
 *   condition, below U+D800;
 * - a Boolean.
 */
export function indexedEquality(
  conditions: readonly PropertyCondition[],
  indexed?: (property: string) => boolean,
): IndexedEquality | undefined {
  let first: IndexedEquality | undefined;
  for (const condition of conditions) {
    const candidate = servable(condition);
    if (candidate === undefined) continue;
    // Prefer a condition whose property has its index already.
    if (indexed === undefined || indexed(candidate.property)) return candidate;
    first ??= candidate;
  }
  return first;
}

/** The condition of `conditions` that an index the engine has (`indexed`) serves, if any. */
export function indexServing(
  conditions: readonly PropertyCondition[],
  indexed: (property: string) => boolean,
): IndexedEquality | undefined {
  const condition = indexedEquality(conditions, indexed);
  return condition !== undefined && indexed(condition.property) ? condition : undefined;
}

function servable(condition: PropertyCondition): IndexedEquality | undefined {
  if (condition.kind === 'timestamp' || condition.operator !== 'eq' || !indexableName.test(condition.property))
    return undefined;
  switch (condition.kind) {
    case 'number': {
      const value = condition.value;
      const magnitude = typeof value === 'bigint' ? (value < 0n ? -value : value) : Math.abs(value);
      const exact = typeof value === 'number' ? magnitude <= Number(exactIntegerMax) : magnitude <= exactIntegerMax;
      return exact ? (condition as IndexedEquality) : undefined;
    }
    case 'string':
      return condition.value.includes('\u0000') ? undefined : (condition as IndexedEquality);
    case 'boolean':
      return condition as IndexedEquality;
    default:
      return undefined;
  }
}

/**
 * When an engine should index a property: it hears how many rows each scan step that could have
 * used an index examined, and answers true once, when a table's steps have examined
 * `autoIndexRows` rows for that property. Process-local: with several processes over one
 * database, each decides for itself, and building an index that exists is a no-op.
 */
export class IndexDemand {
  /** Rows examined so far, by table key and property; dropped once asked for. */
  private readonly examined = new Map<string, Map<string, number>>();
  private readonly requested = new Set<string>();

  /** `autoIndexRows` 0 never asks for an index. */
  constructor(private readonly autoIndexRows: number) {
    assert(Number.isSafeInteger(autoIndexRows) && autoIndexRows >= 0, 'autoIndexRows is a whole number of rows');
  }

  /**
   * Notes a step of a scan of table `tableKey` that examined `rows` rows for `property`
   * (indexedEquality of its conditions). True when the engine should now build the index;
   * `indexes` is how many the table has already.
   */
  note(tableKey: string, property: string, rows: number, indexes: number): boolean {
    if (this.autoIndexRows === 0 || indexes >= indexesPerTableMax) return false;
    const key = `${tableKey}\u0000${property}`;
    if (this.requested.has(key)) return false;
    let byProperty = this.examined.get(tableKey);
    if (byProperty === undefined) {
      // Starting over loses only progress toward an index, never an index.
      if (this.examined.size >= countersMax) this.examined.clear();
      this.examined.set(tableKey, (byProperty = new Map()));
    }
    if (!byProperty.has(property) && byProperty.size >= countersMax) byProperty.clear();
    const total = (byProperty.get(property) ?? 0) + rows;
    if (total < this.autoIndexRows) {
      byProperty.set(property, total);
      return false;
    }
    byProperty.delete(property);
    this.requested.add(key);
    return true;
  }

  /** The engine could not build the index `note` asked for: a later scan may ask again. */
  failed(tableKey: string, property: string): void {
    this.requested.delete(`${tableKey}\u0000${property}`);
  }

  /** Forgets a table (deleted): a table created later under its name starts afresh. */
  forget(tableKey: string): void {
    this.examined.delete(tableKey);
    for (const key of this.requested) if (key.startsWith(`${tableKey}\u0000`)) this.requested.delete(key);
  }
}
