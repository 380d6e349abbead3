// Ranges of the one clustered index, ordered by (PartitionKey, RowKey) in UTF-16 code units.

/**
 * One end of a key range over the composite key (PartitionKey, RowKey), ordered by UTF-16
 * code units. Without `rowKey` the bound applies to the PartitionKey alone:
 * lower {pk:'a', inclusive} = every key with pk >= 'a'; upper {pk:'a', inclusive} = pk <= 'a'.
 */
export interface KeyBound {
  readonly partitionKey: string;
  readonly rowKey?: string;
  readonly inclusive: boolean;
}

/** A contiguous range of the clustered index; an absent bound is open. */
export interface KeyRange {
  readonly lower?: KeyBound;
  readonly upper?: KeyBound;
}

/** A key of the clustered index as a tuple. */
export type IndexKey = readonly [partitionKey: string, rowKey: string];

/** Orders two keys as the clustered index does: PartitionKey, then RowKey, by UTF-16 code units. */
export function compareIndexKeys(a: IndexKey, b: IndexKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

/**
 * Orders (partitionKey, rowKey) against a bound, ignoring `inclusive`; a bound without a row key
 * compares partition keys only (0 for every key of its partition).
 */
export function compareKeyToBound(partitionKey: string, rowKey: string, bound: KeyBound): number {
  if (partitionKey !== bound.partitionKey) return partitionKey < bound.partitionKey ? -1 : 1;
  if (bound.rowKey === undefined || rowKey === bound.rowKey) return 0;
  return rowKey < bound.rowKey ? -1 : 1;
}
