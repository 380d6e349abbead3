// Scan steps on PostgreSQL: up to a page's worth of entities of a key range in key order, each
// step one statement. A step with conditions examines a bounded window of rows (stepExamineMax)
// and tests them in the database (conditions.ts); a lone equality on an indexed property reads
// only the index's matches (property-indexes.ts).
import assert from 'node:assert/strict';
import { setImmediate as turnOfEventLoop } from 'node:timers/promises';
import type { Entity } from '../../domain/entity.js';
import type { KeyBound, KeyRange } from '../../domain/keys.js';
import type { PropertyCondition, ScanRequest, ScanStep, TableInfo } from '../table-store.js';
import { decodeKey, encodeKey, storedEntity } from './codec.js';
import { conditionSql, type Bind } from './conditions.js';
import type { PostgresConnection } from './connection.js';
import { indexedLiteral, indexedValueSql, type IndexedLookup, type PropertyIndexes } from './property-indexes.js';
import { checkedIndexStepSql, conditionalStepSql, plainStepSql, tableIdSql } from './sql.js';

/** Entities one scan step returns at most: a page is built of a few steps, each one round trip. */
const stepRowsMax = 1000;
/**
 * Rows one conditional scan step examines at most, so that a sparse filter costs the database a
 * bounded statement (tens of milliseconds) and the page budget is checked between steps.
 */
export const stepExamineMaxDefault = 20_000;

interface ScanRow {
  /** An index step's: the id the table's name means now. */
  readonly table_id?: string;
  readonly pk?: Buffer;
  readonly rk: Buffer;
  readonly ts: string;
  /** The stored JSON form; null for a marker row that failed the conditions, or a row without it. */
  readonly doc: string | null;
  /** The jsonb text of a row that passed and has no `doc`. */
  readonly props: string | null;
  readonly hit: boolean;
  readonly n?: string;
  readonly last?: boolean;
}

/** One step's statement and what reading its rows needs. */
interface StepStatement {
  readonly name: string | undefined;
  readonly text: string;
  readonly values: unknown[];
  /** The PartitionKey of every row, when the range pins one (then only RowKey is read back). */
  readonly partitionKey: string | undefined;
}

export class Scanner {
  constructor(
    private readonly connection: PostgresConnection,
    private readonly indexes: PropertyIndexes,
    private readonly stepExamineMax: number,
  ) {
    assert(Number.isSafeInteger(stepExamineMax) && stepExamineMax >= 1, 'a scan step examines at least one row');
  }

  async scan(table: TableInfo, range: KeyRange, { conditions, limit }: ScanRequest): Promise<ScanStep> {
    const rows = Math.min(limit, stepRowsMax);
    if (conditions.length > 0) this.indexes.refreshIfDue();
    const lookup = conditions.length === 0 ? undefined : this.indexes.lookup(table, conditions);
    let step = lookup === undefined ? undefined : await this.step(table, range, conditions, rows, lookup);
    if (step === undefined) {
      step = await this.step(table, range, conditions, rows, undefined);
      assert(step !== undefined, 'a step without an index always answers');
      if (conditions.length > 0) this.indexes.noteScan(table, conditions, step.examined);
    }
    // The rows came over a socket, but decoding a full step is JavaScript's work: others get a turn.
    if (step.next !== undefined && step.examined >= stepRowsMax) await turnOfEventLoop();
    return step;
  }

  /**
   * Up to `limit` entities of the range in key order that may satisfy `conditions`, examining at
   * most stepExamineMax rows: all rows of the range, or with `lookup` only those its index holds
   * for the literal. Undefined when `lookup`'s table id no longer names the table.
   */
  private async step(
    table: TableInfo,
    range: KeyRange,
    conditions: readonly PropertyCondition[],
    limit: number,
    lookup: IndexedLookup | undefined,
  ): Promise<ScanStep | undefined> {
    const statement = stepStatement(table, range, conditions, limit, this.stepExamineMax, lookup);
    let { rows } = await this.connection.query<ScanRow>('read', statement);
    if (lookup !== undefined) {
      if (rows[0] !== undefined && rows[0].table_id !== lookup.tableId) {
        this.indexes.stale(table, lookup.tableId);
        return undefined;
      }
      rows = rows.filter((row) => row.rk !== null); // the null row of a step that found nothing
    }
    return stepOfRows(rows, statement.partitionKey, conditions.length > 0, limit);
  }
}

/** The statement of a step (Scanner.step). */
function stepStatement(
  table: TableInfo,
  range: KeyRange,
  conditions: readonly PropertyCondition[],
  limit: number,
  window: number,
  lookup: IndexedLookup | undefined,
): StepStatement {
  const values: unknown[] = [table.account, table.name.toLowerCase()];
  const bind: Bind = (value) => `$${values.push(value)}`;
  // An index step names the table by its id, literally: the planner matches a partial index
  // only to a predicate it can prove when planning.
  const tableId = lookup === undefined ? `(${tableIdSql})` : lookup.tableId;
  const indexed =
    lookup === undefined
      ? []
      : [`${indexedValueSql(lookup.condition.property)} = ${bind(indexedLiteral(lookup.condition))}::jsonb`];
  const where = [`table_id = ${tableId}`, ...indexed, ...rangeSql(range, bind)].join(' AND ');
  const partitionKey = onlyPartition(range);
  const keys = (alias: string) => (partitionKey === undefined ? `${alias}pk, ${alias}rk` : `${alias}rk`);
  if (conditions.length === 0) {
    // A plain step has one of a few shapes (which bounds the range has): each is prepared once per connection.
    const text = plainStepSql(keys(''), where, bind(limit));
    return { name: plainStepName(text), text, values, partitionKey };
  }
  const windowSql = bind(window);
  const tests = conditions.map((condition) => conditionSql(condition, bind)).join(' AND ');
  let text = conditionalStepSql(keys, { where, tests, tableId, windowSql, limitSql: bind(limit) });
  if (lookup !== undefined) text = checkedIndexStepSql(text, tableId);
  // A step with conditions has as many shapes as filters, and is planned afresh, but for a lone
  // equality read from an index (planning is most of its time: indexStepName).
  const name = lookup !== undefined && conditions.length === 1 ? indexStepName(text) : undefined;
  return { name, text, values, partitionKey };
}

/** The step a statement's rows make: the entities that passed, and how far it got. */
function stepOfRows(
  rows: readonly ScanRow[],
  partitionKey: string | undefined,
  conditional: boolean,
  limit: number,
): ScanStep {
  let bytes = 0;
  let lastKeys: { partitionKey: string; rowKey: string } | undefined;
  const entities: Entity[] = [];
  for (const row of rows) {
    lastKeys = { partitionKey: partitionKey ?? decodeKey(row.pk!), rowKey: decodeKey(row.rk) };
    if (!row.hit) continue;
    entities.push(storedEntity(lastKeys.partitionKey, lastKeys.rowKey, BigInt(row.ts), row.doc, row.props));
    bytes += Buffer.byteLength(row.doc ?? row.props!); // what a page's size bound counts
  }
  const last = rows.at(-1);
  if (last === undefined || lastKeys === undefined) return { entities, examined: 0, bytes, next: undefined };
  const examined = conditional ? Number(last.n) : rows.length;
  const ended = conditional ? last.last === true : rows.length < limit;
  const next: KeyBound | undefined = ended ? undefined : { ...lastKeys, inclusive: false };
  return { entities, examined, bytes, next };
}

/** WHERE terms for a key range. Row values keep a bound on both keys one index seek. */
function rangeSql({ lower, upper }: KeyRange, bind: Bind): string[] {
  const terms: string[] = [];
  for (const [bound, direction] of [
    [lower, '>'],
    [upper, '<'],
  ] as const) {
    if (bound === undefined) continue;
    const op = bound.inclusive ? `${direction}=` : direction;
    terms.push(
      bound.rowKey === undefined
        ? `pk ${op} ${bind(encodeKey(bound.partitionKey))}`
        : `(pk, rk) ${op} (${bind(encodeKey(bound.partitionKey))}, ${bind(encodeKey(bound.rowKey))})`,
    );
  }
  return terms;
}

/** Names of the prepared plain scan steps, by their text (a few dozen shapes at most). */
const plainStepNames = new Map<string, string>();

function plainStepName(sql: string): string {
  let name = plainStepNames.get(sql);
  if (name === undefined) plainStepNames.set(sql, (name = `scan${plainStepNames.size}`));
  return name;
}

/**
 * Index steps of a lone equality prepared at most, per process (and per connection). Their text
 * names the table and the property, so there are a few shapes (the range's bounds, the literal's
 * type) per index; beyond this many, steps are planned afresh as other conditional steps.
 */
const indexStepNamesMax = 64;
const indexStepNames = new Map<string, string>();

/**
 * The name that prepares an index step, while there is room. Planning the statement takes about
 * 1 ms, more than reading 20 matches; a prepared one is planned for its parameters the first
 * five times, then generically (the index scan is the only plan without bitmap scans that does
 * not walk the whole table, so the generic plan is that scan too).
 */
function indexStepName(sql: string): string | undefined {
  let name = indexStepNames.get(sql);
  if (name === undefined && indexStepNames.size < indexStepNamesMax)
    indexStepNames.set(sql, (name = `iscan${indexStepNames.size}`));
  return name;
}

/** The PartitionKey of every row of the range, when its bounds pin one. */
function onlyPartition({ lower, upper }: KeyRange): string | undefined {
  return lower !== undefined && upper?.partitionKey === lower.partitionKey ? lower.partitionKey : undefined;
}
