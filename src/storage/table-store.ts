// The one narrow storage interface every engine implements (embedded SQLite, and engines over a
// shared database). It knows ordered key ranges, bounded scan steps and atomic conditional writes;
// it knows nothing of HTTP, OData, ETag text or filters, and leaks no SQL. Every engine must pass
// the conformance suite in tests/storage/conformance/.
import type { Entity, Properties } from '../domain/entity.js';
import type { KeyBound, KeyRange } from '../domain/keys.js';

/** A table as stored: `name` keeps the case used at creation; lookups ignore case. */
export interface TableInfo {
  readonly account: string;
  readonly name: string;
}

/**
 * A comparison a store may evaluate while scanning: of a custom property with a number (against
 * stored Int32, Int64 and Double values), a string, a Boolean or a DateTime (ticks), or of the
 * system Timestamp with ticks. It is a prefilter: a store may keep rows that fail it (the query
 * engine decides every row kept) but must not drop a row that satisfies it. A row whose property
 * has another type, which the literal can never match, may be kept or dropped; a row without the
 * property is dropped. A stored NaN or ±Infinity Double must be kept, but by an `eq` condition,
 * which it never satisfies (a number condition's literal is finite): an index on the property
 * (property-index.ts) holds only the rows equal to the literal.
 */
export type PropertyCondition =
  | {
      readonly kind: 'number';
      readonly property: string;
      readonly operator: ComparisonOperator;
      readonly value: number | bigint;
    }
  | {
      readonly kind: 'string';
      readonly property: string;
      readonly operator: ComparisonOperator;
      readonly value: string;
    }
  | {
      readonly kind: 'boolean';
      readonly property: string;
      readonly operator: ComparisonOperator;
      readonly value: boolean;
    }
  | {
      readonly kind: 'dateTime';
      readonly property: string;
      readonly operator: ComparisonOperator;
      readonly value: bigint;
    }
  | { readonly kind: 'timestamp'; readonly operator: ComparisonOperator; readonly value: bigint };

export type ComparisonOperator = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';

/** What one scan step is asked for. */
export interface ScanRequest {
  /** Prefilter conditions, all of which a kept row may satisfy (empty: every row). */
  readonly conditions: readonly PropertyCondition[];
  /** Entities to return at most (>= 1). */
  readonly limit: number;
}

/**
 * One bounded step of a scan. The engine bounds the work of a step (rows examined, time) as it
 * sees fit, so a step may return fewer than `limit` entities, even none, and still have a `next`;
 * between steps it lets other work of the process run.
 */
export interface ScanStep {
  /** Entities of the range that may satisfy the conditions, in key order. */
  readonly entities: Entity[];
  /** Rows the store examined, including those the conditions dropped. */
  readonly examined: number;
  /** Bytes of the returned entities' properties as the engine stored them (bounds a page's memory). */
  readonly bytes: number;
  /** Where the range continues (exclusive), or undefined when this step reached its end. */
  readonly next: KeyBound | undefined;
}

/** What must hold for a write to apply. */
export type WriteCondition =
  | { readonly kind: 'none' }
  | { readonly kind: 'absent' }
  | { readonly kind: 'present' }
  /** The stored entity's version (its Timestamp in ticks) equals `timestamp`. */
  | { readonly kind: 'version'; readonly timestamp: bigint };

export type WriteAction =
  /** The entity becomes exactly `properties` (insert, replace, insert-or-replace). */
  | { readonly kind: 'put'; readonly properties: Properties; readonly stored?: StoredProperties }
  /** `properties` overwrite or add to the stored ones (merge, insert-or-merge). */
  | { readonly kind: 'merge'; readonly properties: Properties; readonly stored?: StoredProperties }
  | { readonly kind: 'delete' };

/**
 * A write's properties in the stored JSON form (stored-json.ts), when the request path made that
 * text straight from the body: an engine that keeps the form stores it as is, and `properties`
 * is then decoded only if something asks for it.
 */
export interface StoredProperties {
  readonly json: string;
  /** Custom properties (the Map's size). */
  readonly count: number;
  /** The sum of their domain/entity.ts propertySizeBytes. */
  readonly propertyBytes: number;
}

export interface Write {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly condition: WriteCondition;
  readonly action: WriteAction;
}

/** Why a write did not apply; the last two when a merge would grow the entity past its limits. */
export type WriteFailure =
  'tableNotFound' | 'exists' | 'notFound' | 'versionMismatch' | 'entityTooLarge' | 'tooManyProperties';

export type CommitResult =
  /** Every write applied, all with this one Timestamp (ticks). */
  | { readonly ok: true; readonly timestamp: bigint }
  /** Nothing applied: write `index` failed its condition (index 0 when the table is missing). */
  | { readonly ok: false; readonly index: number; readonly failure: WriteFailure };

/**
 * Small documents kept beside the data. An account setting lives as long as the account; a table
 * setting (its stored access policies) is written only while the table exists, in the same
 * atomic step as that check, and is deleted with the table.
 */
export type SettingKey =
  { readonly scope: 'account'; readonly name: string } | { readonly scope: 'table'; readonly table: string };

/** One setting to write; undefined removes it. */
export interface SettingChange {
  readonly key: SettingKey;
  readonly value: string | undefined;
}

/** What TableStore.getTableEntity answers: the table as stored and the entity, if there is one. */
export interface TableEntity {
  readonly table: TableInfo;
  readonly entity: Entity | undefined;
}

/** What TableStore.commitToTable answers. */
export interface TableCommit {
  readonly table: TableInfo | undefined;
  readonly result: CommitResult;
}

export interface TableStore {
  /** Creates the table unless one of the same name in any case exists. */
  createTable(account: string, name: string): Promise<'created' | 'exists'>;
  /** Deletes the table, all its entities and its settings; false if there was none. */
  deleteTable(account: string, name: string): Promise<boolean>;
  getTable(account: string, name: string): Promise<TableInfo | undefined>;
  /** Tables ordered by lower-cased name, from the first whose lower-cased name >= `fromLower`. */
  listTables(account: string, fromLower: string | undefined, limit: number): Promise<TableInfo[]>;

  getEntity(table: TableInfo, partitionKey: string, rowKey: string): Promise<Entity | undefined>;
  /** One bounded step over `range` in key order (see ScanStep). A missing table scans as empty. */
  scan(table: TableInfo, range: KeyRange, request: ScanRequest): Promise<ScanStep>;
  /**
   * Applies all writes atomically and durably, or none. The commit Timestamp is later than the
   * store's clock and than every written entity's previous Timestamp, so versions strictly
   * increase. Resolves only once the commit is durable.
   */
  commit(table: TableInfo, writes: readonly Write[]): Promise<CommitResult>;

  /**
   * getTable and then getEntity as one call (a database engine answers both in one round trip;
   * others compose them with storage/table-calls.ts). Undefined when there is no such table.
   */
  getTableEntity(account: string, name: string, partitionKey: string, rowKey: string): Promise<TableEntity | undefined>;
  /**
   * getTable and then commit as one call, likewise. The table is the one getTable would give;
   * undefined exactly when the result is the failure tableNotFound.
   */
  commitToTable(account: string, name: string, writes: readonly Write[]): Promise<TableCommit>;

  getSetting(account: string, key: SettingKey): Promise<string | undefined>;
  /**
   * Applies every change atomically and durably, or none: 'tableNotFound' (a table setting whose
   * table does not exist) writes nothing.
   */
  putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'>;

  /** When this process last saw the database fail over to another host (ms since the epoch); undefined: never. */
  lastFailoverMs?(): number | undefined;

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
