// Point reads, lone inserts, upserts and merges that arrive together share one statement per
// kind (coalescer.ts, sql.ts), each row's outcome its own. A group's rows are numbered in key
// order, as every statement and transaction of this engine takes row locks, so that two groups
// cannot deadlock.
import assert from 'node:assert/strict';
import { Coalescer } from './coalescer.js';
import type { PostgresConnection } from './connection.js';
import { isStatementFailure } from './failures.js';
import { mergeGroupSql, putGroupSql, readGroupSql } from './sql.js';

/**
 * Statements of each kind in flight at once per process, and requests one carries at most
 * (coalescer.ts). Measured on 2 cores, 1 and 2 in flight did alike and 4 worse; 2 lets a larger
 * database work on two at once while the rest wait to go together.
 */
const groupsRunningMax = 2;
const groupItemsMax = 32;

/** Where one entity is, as a group statement takes it: by its table's name, found in the statement. */
export interface EntityAddress {
  readonly account: string;
  readonly nameLower: string;
  readonly pk: Buffer;
  readonly rk: Buffer;
}

/** A lone insert or upsert waiting for its group statement: ts is the Timestamp it proposes. */
export interface GroupedPut extends EntityAddress {
  readonly ts: string;
  readonly props: string;
  readonly doc: string | null;
}

/** A lone merge waiting for its group statement (commit.ts mergeAlone). */
export interface GroupedMerge extends EntityAddress {
  readonly ts: string;
  /** The version If-Match names; null: any. */
  readonly expected: string | null;
  /** The incoming members as the stored object's text, and their names in order. */
  readonly members: string;
  readonly names: readonly string[];
  /** The part of entitySizeBytes that does not depend on the properties. */
  readonly keyBytes: number;
}

/** A point read's row: the table's stored name, and the entity's columns (all null: no entity). */
export interface ReadRow {
  readonly name: string;
  readonly ts: string | null;
  readonly doc: string | null;
  readonly props: string | null;
}

/** A written row's Timestamp and its table's stored name. */
export interface WriteRow {
  readonly ts: string;
  readonly name: string;
}

type GroupCount = { statements: number; items: number };

export class EntityGroups {
  private readonly reads = this.coalescer((items: readonly EntityAddress[]) => this.readGroup(items));
  // Two writes to one entity never share a statement (a row one statement writes twice is an error).
  private readonly inserts = this.coalescer((items: readonly GroupedPut[]) => this.putGroup(items, false), addressKey);
  private readonly upserts = this.coalescer((items: readonly GroupedPut[]) => this.putGroup(items, true), addressKey);
  private readonly merges = this.coalescer((items: readonly GroupedMerge[]) => this.mergeGroup(items), addressKey);

  constructor(private readonly connection: PostgresConnection) {}

  /** The entity's row, undefined when its table does not exist. Failures are Azure errors. */
  read(address: EntityAddress): Promise<ReadRow | undefined> {
    return this.submit(this.reads, address);
  }

  /** The written row, undefined when the entity existed or the table does not. */
  insert(put: GroupedPut): Promise<WriteRow | undefined> {
    return this.submit(this.inserts, put);
  }

  /** The written row, undefined when the table does not exist. */
  upsert(put: GroupedPut): Promise<WriteRow | undefined> {
    return this.submit(this.upserts, put);
  }

  /** The written row, undefined when the statement could not decide the merge (commit.ts). */
  merge(merge: GroupedMerge): Promise<WriteRow | undefined> {
    return this.submit(this.merges, merge);
  }

  /** Statements each kind went in, and the requests they carried. */
  counts(): Record<'reads' | 'inserts' | 'upserts' | 'merges', GroupCount> {
    const count = ({ statements, items }: GroupCount) => ({ statements, items });
    return {
      reads: count(this.reads),
      inserts: count(this.inserts),
      upserts: count(this.upserts),
      merges: count(this.merges),
    };
  }

  /** A request's outcome from its group statement; a failure as an Azure error. */
  private async submit<Item, Outcome>(coalescer: Coalescer<Item, Outcome>, item: Item): Promise<Outcome> {
    try {
      return await coalescer.submit(item);
    } catch (error) {
      throw this.connection.failure(error);
    }
  }

  private coalescer<Item, Outcome>(
    run: (items: readonly Item[]) => Promise<readonly Outcome[]>,
    keyOf?: (item: Item) => string,
  ): Coalescer<Item, Outcome> {
    return new Coalescer({
      run,
      runningMax: groupsRunningMax,
      itemsMax: groupItemsMax,
      keyOf,
      rerunAlone: isStatementFailure,
    });
  }

  private readGroup(addresses: readonly EntityAddress[]): Promise<(ReadRow | undefined)[]> {
    return this.statement<EntityAddress, ReadRow>('readGroup', addresses, addressColumns, addressValues, readGroupSql);
  }

  private putGroup(puts: readonly GroupedPut[], upsert: boolean): Promise<(WriteRow | undefined)[]> {
    return this.statement<GroupedPut, WriteRow>(
      upsert ? 'upsertGroup' : 'insertGroup',
      puts,
      putColumns,
      (put) => [...addressValues(put), put.ts, put.props, put.doc],
      (values) => putGroupSql(values, upsert),
    );
  }

  private mergeGroup(merges: readonly GroupedMerge[]): Promise<(WriteRow | undefined)[]> {
    return this.statement<GroupedMerge, WriteRow>('mergeGroup', merges, mergeColumns, mergeValues, mergeGroupSql);
  }

  /**
   * One statement for a group of requests (prepared as `name` and its padded size): `sql` is
   * given their `VALUES` list, whose rows are numbered `i` from 1 in key order. The answer is
   * each item's row (the one numbered as it), in the items' order. A statement that is not a
   * read (`readGroup`) fails with WriteOutcomeUnknown when its connection is lost once it was sent.
   */
  private async statement<Item extends EntityAddress, Row>(
    name: string,
    items: readonly Item[],
    columns: readonly string[],
    valuesOf: (item: Item) => unknown[],
    sql: (values: string) => string,
  ): Promise<(Row | undefined)[]> {
    const order = items.map((_, index) => index).sort((a, b) => compareAddresses(items[a]!, items[b]!));
    const { rows } = await this.connection.rawQuery<Row & { i: number }>(name === 'readGroup' ? 'read' : 'write', {
      name: `${name}${groupRows(items.length)}`,
      text: sql(groupValuesSql(items.length, columns)),
      values: groupValues(
        order.map((index) => valuesOf(items[index]!)),
        columns,
      ),
    });
    const answers: (Row | undefined)[] = new Array(items.length).fill(undefined);
    for (const row of rows) answers[order[row.i - 1]!] = row;
    return answers;
  }
}

const addressColumns = ['text', 'text', 'bytea', 'bytea'] as const;
const putColumns = [...addressColumns, 'bigint', 'text', 'text'] as const;
const mergeColumns = [...addressColumns, 'bigint', 'bigint', 'jsonb', 'text[]', 'text[]', 'integer'] as const;

function addressValues(address: EntityAddress): unknown[] {
  return [address.account, address.nameLower, address.pk, address.rk];
}

function mergeValues(merge: GroupedMerge): unknown[] {
  const annotations = merge.names.map((name) => `${name}@odata.type`);
  return [...addressValues(merge), merge.ts, merge.expected, merge.members, merge.names, annotations, merge.keyBytes];
}

/** Two writes to one entity never share a statement. */
function addressKey(address: EntityAddress): string {
  const keys = `${address.pk.toString('latin1')}${address.rk.toString('latin1')}`;
  return `${address.account}/${address.nameLower}/${address.pk.length}/${keys}`;
}

/** Key order (the same in every process): account, table, then the keys as the index compares them. */
function compareAddresses(a: EntityAddress, b: EntityAddress): number {
  if (a.account !== b.account) return a.account < b.account ? -1 : 1;
  if (a.nameLower !== b.nameLower) return a.nameLower < b.nameLower ? -1 : 1;
  return Buffer.compare(a.pk, b.pk) || Buffer.compare(a.rk, b.rk);
}

/**
 * The rows a group statement of `items` items is written for: the next power of two, so that
 * each kind has six shapes to prepare per connection, not groupItemsMax.
 */
function groupRows(items: number): number {
  assert(items >= 1 && items <= groupItemsMax, 'a group statement carries 1 to groupItemsMax items');
  return 2 ** Math.ceil(Math.log2(items));
}

/**
 * `VALUES (1, $1::type, ...), (2, ...)` for a group of `items` items of `types` (groupRows rows):
 * the first column numbers the rows from 1.
 */
function groupValuesSql(items: number, types: readonly string[]): string {
  const rows = groupRows(items);
  const key = `${rows}:${types.join()}`;
  let sql = groupValuesCache.get(key);
  if (sql === undefined) {
    const tuples: string[] = [];
    for (let row = 0; row < rows; row++) {
      const placeholders = types.map((type, column) => `$${row * types.length + column + 1}::${type}`);
      tuples.push(`(${row + 1}, ${placeholders.join(', ')})`);
    }
    groupValuesCache.set(key, (sql = `VALUES ${tuples.join(', ')}`));
  }
  return sql;
}

/** groupValuesSql's texts: a few sizes of a few shapes. */
const groupValuesCache = new Map<string, string>();

/** The parameters of a group statement: each item's, then nulls for the padding rows, which match no table. */
function groupValues(items: readonly (readonly unknown[])[], types: readonly string[]): unknown[] {
  const values: unknown[] = items.flat();
  assert.equal(values.length, items.length * types.length, 'each item gives a value for each column');
  const padded = groupRows(items.length) * types.length;
  while (values.length < padded) values.push(null);
  return values;
}
