// Key-range reads on one SQLite connection: the SQL of every scan, shared by the store's own
// connection and the scan threads (scan-pool.ts). Rows leave as plain tuples so that they can
// cross a thread boundary as they are.
import type Database from 'better-sqlite3';
import type { KeyBound, KeyRange, PropertyCondition } from '../store.js';
import { decodeKey, encodeKey } from './codec.js';

/** A stored entity as read: keys, Timestamp ticks and the minimal-metadata properties JSON. */
export type StoredRow = readonly [partitionKey: string, rowKey: string, timestamp: bigint, propertiesJson: string];

/** One bounded step of a conditional scan (see Store.scanWhere), in rows. */
export interface RowStep {
  readonly rows: StoredRow[];
  readonly examined: number;
  readonly next: KeyBound | undefined;
}

type Statement = Database.Statement<unknown[], unknown>;

export class RangeReader {
  private readonly statements = new Map<string, Statement>();
  private readonly inOneSnapshot: <T>(read: () => T) => T;

  constructor(private readonly db: Database.Database) {
    // The statements of one step read one snapshot, even while commits land between them.
    this.inOneSnapshot = <T>(read: () => T): T => db.transaction(read)();
  }

  /** Up to `limit` rows of the range in key order. */
  rows(id: number, range: KeyRange, limit: number): StoredRow[] {
    return this.select(id, range, [], limit);
  }

  scanWhere(
    id: number,
    range: KeyRange,
    conditions: readonly PropertyCondition[],
    limit: number,
    examineMax: number,
  ): RowStep {
    if (conditions.length === 0) {
      const rows = this.select(id, range, [], limit);
      const last = rows.at(-1);
      return { rows, examined: rows.length, next: rows.length === limit && last ? after(last) : undefined };
    }
    return this.inOneSnapshot(() => {
      // The row examineMax ahead closes this step's window, so a sparse filter cannot pin the thread.
      const windowEnd = this.keyAt(id, range, examineMax - 1);
      const window: KeyRange = windowEnd === undefined ? range : { lower: range.lower, upper: windowEnd };
      const upperBounds = windowEnd === undefined ? [range.upper] : [range.upper, windowEnd];
      const rows = this.select(id, { lower: range.lower }, conditions, limit, upperBounds);
      const last = rows.at(-1);
      if (rows.length === limit && last !== undefined) {
        const examined = this.count(id, { lower: range.lower, upper: { ...keyOf(last), inclusive: true } }, range.upper);
        return { rows, examined, next: after(last) };
      }
      const examined = windowEnd === undefined ? this.count(id, window, range.upper) : examineMax;
      return { rows, examined, next: windowEnd === undefined ? undefined : { ...windowEnd, inclusive: false } };
    });
  }

  /** Rows of the range (under every upper bound given) that may satisfy the conditions. */
  private select(
    id: number,
    range: KeyRange,
    conditions: readonly PropertyCondition[],
    limit: number,
    upperBounds: readonly (KeyBound | undefined)[] = [range.upper],
  ): StoredRow[] {
    const params: unknown[] = [id];
    const where = rangeWhere(range.lower, upperBounds, params);
    for (const condition of conditions) where.push(conditionSql(condition, params));
    params.push(limit);
    // Rows as arrays: no object per row on the hottest path of every scan.
    const partitionKey = onlyPartition(range.lower, upperBounds);
    if (partitionKey !== undefined) {
      // A blob costs a Buffer per row: the partition's key is known, so only RowKey is read.
      const sql = `SELECT rk, ts, json(props) FROM entities WHERE ${where.join(' AND ')} ORDER BY pk, rk LIMIT ?`;
      const rows = this.statement(sql, true).all(...params) as [Buffer, bigint, string][];
      return rows.map(([rk, ts, props]) => [partitionKey, decodeKey(rk), ts, props]);
    }
    const sql = `SELECT pk, rk, ts, json(props) FROM entities WHERE ${where.join(' AND ')} ORDER BY pk, rk LIMIT ?`;
    const rows = this.statement(sql, true).all(...params) as [Buffer, Buffer, bigint, string][];
    return rows.map(([pk, rk, ts, props]) => [decodeKey(pk), decodeKey(rk), ts, props]);
  }

  /** The key of the row `offset` rows into the range, as an inclusive upper bound. */
  private keyAt(id: number, range: KeyRange, offset: number): KeyBound | undefined {
    const params: unknown[] = [id];
    const where = rangeWhere(range.lower, [range.upper], params);
    params.push(offset);
    const sql = `SELECT pk, rk FROM entities WHERE ${where.join(' AND ')} ORDER BY pk, rk LIMIT 1 OFFSET ?`;
    const row = this.statement(sql).get(...params) as { pk: Buffer; rk: Buffer } | undefined;
    return row === undefined ? undefined : { partitionKey: decodeKey(row.pk), rowKey: decodeKey(row.rk), inclusive: true };
  }

  private count(id: number, range: KeyRange, outerUpper: KeyBound | undefined): number {
    const params: unknown[] = [id];
    const where = rangeWhere(range.lower, [range.upper, outerUpper], params);
    const row = this.statement(`SELECT count(*) AS n FROM entities WHERE ${where.join(' AND ')}`).get(...params) as {
      n: bigint;
    };
    return Number(row.n);
  }

  private statement(sql: string, raw = false): Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql).safeIntegers(true).raw(raw);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/** WHERE terms for a key range; pushes their parameters after the table id. Row values keep it one index seek. */
function rangeWhere(lower: KeyBound | undefined, uppers: readonly (KeyBound | undefined)[], params: unknown[]): string[] {
  const where = ['table_id = ?'];
  if (lower !== undefined) where.push(boundSql(lower, '>', params));
  for (const upper of uppers) if (upper !== undefined) where.push(boundSql(upper, '<', params));
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
 * Double is annotated text too). A row of a type the literal can never match (query.md §3.3) may
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
  const numberTest = numberTests[condition.operator](value);
  params.push(path, condition.value);
  if (condition.operator === 'le') params.push(path);
  params.push(path, `$."${condition.property}@odata.type"`, path, condition.value);
  return `(${numberTest} AND (${value} < '' OR props ->> ? IS NOT 'Edm.Int64' OR CAST(${value} AS INTEGER) ${op} ?))`;
}

/** The PartitionKey of every row between the bounds, when one lower and one upper bound pin it. */
function onlyPartition(lower: KeyBound | undefined, uppers: readonly (KeyBound | undefined)[]): string | undefined {
  if (lower === undefined) return undefined;
  return uppers.some((upper) => upper?.partitionKey === lower.partitionKey) ? lower.partitionKey : undefined;
}

function keyOf([partitionKey, rowKey]: StoredRow): { partitionKey: string; rowKey: string } {
  return { partitionKey, rowKey };
}

function after(row: StoredRow): KeyBound {
  return { ...keyOf(row), inclusive: false };
}

function boundSql(bound: KeyBound, direction: '>' | '<', params: unknown[]): string {
  const op = bound.inclusive ? `${direction}=` : direction;
  params.push(encodeKey(bound.partitionKey));
  if (bound.rowKey === undefined) return `pk ${op} ?`;
  params.push(encodeKey(bound.rowKey));
  return `(pk, rk) ${op} (?, ?)`;
}
