// The one narrow storage interface every engine implements (embedded SQLite today, a
// PostgreSQL-dialect engine later). It knows ordered key ranges and atomic conditional
// writes; it knows nothing of HTTP, OData or filters, and leaks no SQL.
import type { Entity, Properties } from '../protocol/edm.js';

/** A table as stored: `name` keeps the case used at creation; lookups ignore case. */
export interface TableInfo {
  readonly account: string;
  readonly name: string;
}

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

/**
 * A comparison a store may evaluate while scanning: of a custom property with a number (against
 * stored Int32, Int64 and Double values), a string, a Boolean or a DateTime (ticks), or of the
 * system Timestamp with ticks. It is a prefilter: a store may keep rows that fail it (the query
 * engine decides every row kept) but must not drop a row that satisfies it. A row whose property
 * has another type, which the literal can never match, may be kept or dropped; a row without the
 * property is dropped. A stored NaN or ±Infinity Double must be kept.
 */
export type PropertyCondition =
  | { readonly kind: 'number'; readonly property: string; readonly operator: ComparisonOperator; readonly value: number | bigint }
  | { readonly kind: 'string'; readonly property: string; readonly operator: ComparisonOperator; readonly value: string }
  | { readonly kind: 'boolean'; readonly property: string; readonly operator: ComparisonOperator; readonly value: boolean }
  | { readonly kind: 'dateTime'; readonly property: string; readonly operator: ComparisonOperator; readonly value: bigint }
  | { readonly kind: 'timestamp'; readonly operator: ComparisonOperator; readonly value: bigint };

export type ComparisonOperator = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';

/** One bounded step of a conditional scan. */
export interface ScanStep {
  /** Entities of the range that may satisfy the conditions, in key order. */
  readonly entities: Entity[];
  /** Rows the store examined, including those the conditions dropped. */
  readonly examined: number;
  /** Where the range continues (exclusive), or undefined when this step reached its end. */
  readonly next: KeyBound | undefined;
}

/** What must hold for a write to apply. */
export type WriteCondition =
  | { readonly kind: 'none' }
  | { readonly kind: 'absent' }
  | { readonly kind: 'present' }
  /** The stored entity's ETag equals `etag` exactly. */
  | { readonly kind: 'etag'; readonly etag: string };

export type WriteAction =
  /** The entity becomes exactly `properties` (insert, replace, insert-or-replace). */
  | { readonly kind: 'put'; readonly properties: Properties }
  /** `properties` overwrite or add to the stored ones (merge, insert-or-merge). */
  | { readonly kind: 'merge'; readonly properties: Properties }
  | { readonly kind: 'delete' };

export interface Write {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly condition: WriteCondition;
  readonly action: WriteAction;
}

/** Why a write did not apply; the last two when a merge would grow the entity past its limits. */
export type WriteFailure = 'tableNotFound' | 'exists' | 'notFound' | 'etagMismatch' | 'entityTooLarge' | 'tooManyProperties';

export type CommitResult =
  /** Every write applied, all with this one Timestamp (ticks). */
  | { readonly ok: true; readonly timestamp: bigint }
  /** Nothing applied: write `index` failed its condition. */
  | { readonly ok: false; readonly index: number; readonly failure: WriteFailure };

export interface Store {
  /** Creates the table unless one of the same name in any case exists. */
  createTable(account: string, name: string): Promise<'created' | 'exists'>;
  /** Deletes the table and all its entities; false if there was none. */
  deleteTable(account: string, name: string): Promise<boolean>;
  getTable(account: string, name: string): Promise<TableInfo | undefined>;
  /** Tables ordered by lower-cased name, from the first whose lower-cased name >= `fromLower`. */
  listTables(account: string, fromLower: string | undefined, limit: number): Promise<TableInfo[]>;

  getEntity(table: TableInfo, partitionKey: string, rowKey: string): Promise<Entity | undefined>;
  /** Up to `limit` entities of `range` in key order. */
  scan(table: TableInfo, range: KeyRange, limit: number): Promise<Entity[]>;
  /**
   * Up to `limit` entities of `range` that may satisfy `conditions`, examining at most about
   * `examineMax` rows so that one step's work stays bounded however sparse the matches are.
   */
  scanWhere(
    table: TableInfo,
    range: KeyRange,
    conditions: readonly PropertyCondition[],
    limit: number,
    examineMax: number,
  ): Promise<ScanStep>;
  /**
   * Applies all writes atomically and durably, or none. The commit Timestamp is later than the
   * store's clock and than every written entity's previous Timestamp, so ETags strictly increase.
   * Resolves only once the commit is durable.
   */
  commit(table: TableInfo, writes: readonly Write[]): Promise<CommitResult>;

  /**
   * Small per-account documents (service properties, table ACLs), stored as text under
   * (scope, name). Scope 'table' is keyed by the lower-cased table name and is deleted with the
   * table. `putSetting` with undefined removes the setting; it resolves once durable.
   */
  getSetting(account: string, scope: string, name: string): Promise<string | undefined>;
  putSetting(account: string, scope: string, name: string, value: string | undefined): Promise<void>;

  /** Bytes the store keeps on disk (read when metrics are scraped); undefined when it keeps none. */
  sizeOnDisk?(): Promise<DiskUsage | undefined>;

  close(): Promise<void>;
}

// -- what an engine reports for metrics (engine-neutral; every engine takes an optional onCommit) --

/** One durable commit (a transaction and its flush to disk), however many writes share it. */
export interface CommitStats {
  readonly durationMs: number;
  /** Write jobs (one per request: an entity write, a batch, a table change) committed together. */
  readonly writes: number;
}

export type CommitObserver = (stats: CommitStats) => void;

export interface DiskUsage {
  readonly dataBytes: number;
  /** Write-ahead log. */
  readonly logBytes: number;
}
