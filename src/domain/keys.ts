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
