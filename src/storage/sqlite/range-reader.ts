// Key-range reads on one SQLite connection: the SQL of every scan, shared by the store's own
// connection and the scan threads (scan-pool.ts). Rows leave as plain tuples so that they can
// cross a thread boundary as they are.
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import { floorMilliseconds } from '../../domain/edm.js';
import type { PropertyCondition } from '../table-store.js';
import type { IndexedEquality } from '../property-index.js';
import { decodeKey, encodeKey } from './codec.js';
import { indexedLiteral, indexedTableTerm, indexedValueSql, indexName } from './property-indexes.js';
import type { IndexKey, KeyBound, KeyRange } from '../../domain/keys.js';
import { boundLimit } from './schema.js';

/** A stored entity as read: keys, Timestamp ticks, the stored properties JSON and its JSONB size. */
export type StoredRow = readonly [
  partitionKey: string,
  rowKey: string,
  timestamp: bigint,
  storedJson: string,
  bytes: number,
];

/** One bounded step of a scan (see TableStore.scan), in rows. */
export interface RowStep {
  readonly rows: StoredRow[];
  readonly examined: number;
  readonly next: KeyBound | undefined;
}

/**
 * Rows one step returns at most: small enough that a step never holds the thread long, large
 * enough that a page of 1,000 takes two.
 */
export const stepRowsMax = 512;
/** Rows a conditional step examines by default: bounds the work between steps however sparse the matches. */
export const stepExamineMaxDefault = 20_000;

type Statement = Database.Statement<unknown[], unknown>;

/**
 * Prepared scans kept per connection. Their SQL varies with the shape of a filter (operators and
 * number of conditions, bound kinds), which clients choose, so the cache starts over when full.
 */
const statementsMax = 512;

/** SQL function that counts the rows a conditional scan visits (RangeReader.scan). */
const windowEndFunction = 'cerulean_window_end';

export class RangeReader {
  private readonly statements = new Map<string, Statement>();
  /** Rows the running conditional scan has visited, and where its window closes. */
  private examined = 0;
  private examineMax = 0;

  constructor(private readonly db: Database.Database) {
    // SQLite calls it for every row a conditional scan visits, before the conditions: it counts
    // the row, and is true for the row that closes the window, so that row comes back too.
    db.function(windowEndFunction, { deterministic: false }, () => (++this.examined === this.examineMax ? 1 : 0));
  }

  /**
   * One step of a scan: up to `limit` (at most stepRowsMax) rows of the range in key order that
   * may satisfy `conditions`, examining at most `examineMax` rows.
   */
  scan(
    id: number,
    range: KeyRange,
    conditions: readonly PropertyCondition[],
    limit: number,
    examineMax: number,
    /** A condition of `conditions` served by the table's index on its property (property-indexes.ts). */
    indexed?: IndexedEquality,
  ): RowStep {
    const rowsMax = Math.min(limit, stepRowsMax);
    const source = indexed === undefined ? tableSource(id) : indexedSource(id, indexed);
    // One message carries both to a scan thread: the clone keeps `indexed` one of `conditions`.
    const rest = indexed === undefined ? conditions : conditions.filter((condition) => condition !== indexed);
    assert(
      rest.length === conditions.length - (indexed === undefined ? 0 : 1),
      'the indexed condition is one of the conditions',
    );
    if (rest.length === 0) {
      const { statement, params, decode } = this.select(source, range, undefined, rowsMax);
      const rows = (statement.all(...params) as unknown[][]).map(decode);
      const last = rows.at(-1);
      return { rows, examined: rows.length, next: rows.length === rowsMax && last ? after(last) : undefined };
    }
    // One pass that examines at most examineMax rows, so a sparse filter cannot pin the thread:
    // the rows matching the conditions come back, and so does the row that closes the window.
    const limitRows = rowsMax;
    const { statement, params, decode } = this.select(source, range, rest, limitRows);
    this.examined = 0;
    this.examineMax = examineMax;
    const rows: StoredRow[] = [];
    for (const row of statement.iterate(...params) as Iterable<unknown[]>) {
      rows.push(decode(row));
      if (this.examined >= examineMax) break;
    }
    const last = rows.at(-1);
    const stopped = rows.length === limitRows || this.examined >= examineMax;
    return { rows, examined: this.examined, next: stopped && last !== undefined ? after(last) : undefined };
  }

  /** The key `offset` rows into the range, in key order, if the range holds that many. */
  keyAt(id: number, range: KeyRange, offset: number): IndexKey | undefined {
    const source = tableSource(id);
    const { where, params } = sourceWhere(source, range);
    params.push(offset);
    const row = this.statement(
      `SELECT pk, rk FROM ${source.from} WHERE ${where.join(' AND ')} ORDER BY pk, rk LIMIT 1 OFFSET ? + 0`,
    ).get(...params) as [Buffer, Buffer] | undefined;
    return row && [decodeKey(row[0]), decodeKey(row[1])];
  }

  /** The query for rows of the range in key order, up to `limit`; with conditions, those that may satisfy them. */
  private select(
    source: RowSource,
    range: KeyRange,
    conditions: readonly PropertyCondition[] | undefined,
    limit: number,
  ): { statement: Statement; params: unknown[]; decode: (row: unknown[]) => StoredRow } {
    const { where, params } = sourceWhere(source, range);
    if (conditions !== undefined) {
      const terms = conditions.map((condition) => conditionSql(condition, params));
      where.push(`(${windowEndFunction}() OR (${terms.join(' AND ')}))`);
    }
    params.push(limit);
    const partitionKey = onlyPartition(range);
    // A blob costs a Buffer per row: when the range pins the PartitionKey, only RowKey is read.
    const keys = partitionKey === undefined ? 'pk, rk' : 'rk';
    const statement = this.statement(
      `SELECT ${keys}, ts, json(props), length(props) FROM ${source.from} WHERE ${where.join(' AND ')} ORDER BY pk, rk ${boundLimit()}`,
    );
    // Rows as arrays: no object per row on the hottest path of every scan.
    const decode =
      partitionKey === undefined
        ? ([pk, rk, ts, json, bytes]: unknown[]): StoredRow => [
            decodeKey(pk as Buffer),
            decodeKey(rk as Buffer),
            ts as bigint,
            json as string,
            Number(bytes),
          ]
        : ([rk, ts, json, bytes]: unknown[]): StoredRow => [
            partitionKey,
            decodeKey(rk as Buffer),
            ts as bigint,
            json as string,
            Number(bytes),
          ];
    return { statement, params, decode };
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql).safeIntegers(true).raw(true);
      if (this.statements.size >= statementsMax) this.statements.clear();
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/** Where a scan's rows come from: the table, or its index on one property (FROM and leading WHERE terms). */
interface RowSource {
  readonly from: string;
  readonly where: readonly string[];
  readonly params: readonly unknown[];
}

/** The rows of table `id`, from the table itself. */
function tableSource(id: number): RowSource {
  return { from: 'entities', where: ['table_id = ?'], params: [id] };
}

/**
 * The rows of table `id` whose indexed value equals the condition's literal, from its index. The
 * table id is spelled out, for SQLite to see that the partial index covers the query, and the
 * index is named: without statistics the planner would walk the primary key, in key order too.
 */
function indexedSource(id: number, condition: IndexedEquality): RowSource {
  return {
    from: `entities INDEXED BY ${indexName(id, condition.property)}`,
    where: [`table_id = ${id}`, indexedTableTerm(id), `${indexedValueSql(condition.property)} = ?`],
    params: [indexedLiteral(condition)],
  };
}

/** WHERE terms and their parameters for the rows of `source` in `range`, in order. */
function sourceWhere(source: RowSource, range: KeyRange): { where: string[]; params: unknown[] } {
  const params = [...source.params];
  return { where: [...source.where, ...rangeWhere(range.lower, range.upper, params)], params };
}

/** WHERE terms for a key range, pushing their parameters. Row values keep it one index seek. */
function rangeWhere(lower: KeyBound | undefined, upper: KeyBound | undefined, params: unknown[]): string[] {
  const where: string[] = [];
  if (lower !== undefined) where.push(boundSql(lower, '>', params));
  if (upper !== undefined) where.push(boundSql(upper, '<', params));
  return where;
}

const sqlOperators: Record<PropertyCondition['operator'], string> = {
  eq: '=',
  ne: '<>',
  gt: '>',
  ge: '>=',
  lt: '<',
  le: '<=',
};

/**
 * A number comparison of `value` (one evaluation of it) that holds for every text as well: in
 * SQLite every number sorts before every text. `le` alone needs the value twice.
 */
const numberTests: Record<PropertyCondition['operator'], (value: string) => string> = {
  eq: (value) => `min(${value}, '') IN (?, '')`,
  ne: (value) => `${value} <> ?`,
  gt: (value) => `${value} > ?`,
  ge: (value) => `${value} >= ?`,
  lt: (value) => `${value} NOT BETWEEN ? AND 9e999`,
  le: (value) => `(${value} <= ? OR ${value} >= '')`,
};

/**
 * A condition as SQL, with one JSON lookup for most rows. `props ->> path` is a number for a
 * stored Int32 or Double, text for an Int64 (annotated) and for every string-like type, NULL when
 * the property is missing, which never passes. A number is compared as it is; a text passes the
 * number test and is then compared as an Int64 if annotated so, and kept otherwise (a NaN or ±∞
 * Double is annotated text too). A row of a type the literal can never match (Azure REST: querying-tables-and-entities)
 * may
 * be kept or dropped: the query's predicate decides every row returned.
 */
function conditionSql(condition: PropertyCondition, params: unknown[]): string {
  const op = sqlOperators[condition.operator];
  if (condition.kind === 'timestamp') {
    params.push(condition.value);
    return `ts ${op} ?`;
  }
  const path = `$."${condition.property}"`;
  const value = 'props ->> ?';
  if (condition.kind === 'string') {
    // Numbers sort before text, so they may pass lt, le and ne.
    params.push(path, condition.value);
    return `${value} ${op} ?`;
  }
  if (condition.kind === 'boolean') {
    // JSON true and false read as 1 and 0 (so may Int32 1 and 0, which cannot match).
    params.push(path, condition.value ? 1 : 0);
    return `${value} ${op} ?`;
  }
  if (condition.kind === 'dateTime') return dateTimeSql(condition.operator, condition.value, path, params);
  const numberTest = numberTests[condition.operator](value);
  params.push(path, condition.value);
  if (condition.operator === 'le') params.push(path);
  params.push(path, `$."${condition.property}@odata.type"`, path, condition.value);
  return `(${numberTest} AND (${value} < '' OR props ->> ? IS NOT 'Edm.Int64' OR CAST(${value} AS INTEGER) ${op} ?))`;
}

/** The PartitionKey of every row of the range, when its bounds pin one. */
function onlyPartition({ lower, upper }: KeyRange): string | undefined {
  return lower !== undefined && upper?.partitionKey === lower.partitionKey ? lower.partitionKey : undefined;
}

/**
 * A DateTime comparison on the stored ISO text, which SQLite reads to the millisecond
 * (truncating; non-dates read as NULL, never passing). A millisecond of margin on each side keeps
 * every row whose ticks could satisfy the comparison; the query's predicate compares the ticks.
 */
function dateTimeSql(operator: PropertyCondition['operator'], ticks: bigint, path: string, params: unknown[]): string {
  const ms = floorMilliseconds(ticks);
  const storedMs = `unixepoch(props ->> ?, 'subsec') * 1000`;
  params.push(path);
  switch (operator) {
    case 'eq':
      params.push(Number(ms - 1n), Number(ms + 1n));
      return `${storedMs} BETWEEN ? AND ?`;
    case 'gt':
    case 'ge':
      params.push(Number(ms - 1n));
      return `${storedMs} >= ?`;
    case 'lt':
    case 'le':
      params.push(Number(ms + 1n));
      return `${storedMs} <= ?`;
    case 'ne':
      return `${storedMs} IS NOT NULL`;
  }
}

function after([partitionKey, rowKey]: StoredRow): KeyBound {
  return { partitionKey, rowKey, inclusive: false };
}

function boundSql(bound: KeyBound, direction: '>' | '<', params: unknown[]): string {
  const op = bound.inclusive ? `${direction}=` : direction;
  params.push(encodeKey(bound.partitionKey));
  if (bound.rowKey === undefined) return `pk ${op} ?`;
  params.push(encodeKey(bound.rowKey));
  return `(pk, rk) ${op} (?, ?)`;
}
