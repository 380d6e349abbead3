// The PostgreSQL engine: any number of Cerulean processes over one database (schema.ts), with
// nothing cached in the process, so each sees every other's acknowledged writes at once.
//
// A lone insert, replace, upsert or delete is one statement that checks its own condition on the
// row it locks, and finds the table in the same statement (commitToTable, getTableEntity: one
// round trip per request). A lone merge into a stored entity is one statement too (mergeAlone).
// Point reads, inserts, upserts and merges that arrive together share one statement per kind
// (coalescer.ts), each row's outcome its own.
// A batch, or a merge that statement cannot decide, runs a READ COMMITTED transaction that locks
// what it reads: the table's row FOR KEY SHARE (a concurrent delete of the table waits, or has
// won and the commit finds no table) and every stored entity it writes FOR UPDATE; it decides the
// write conditions on those locked versions, and writes. An entity that was absent is inserted
// with ON CONFLICT DO NOTHING: if another process inserted it meanwhile the commit starts over and
// then sees it. So conditional writes are race-free without SERIALIZABLE; serialization failures
// and deadlocks (possible under a stricter default isolation, or when a table's deletion meets a
// batch) are retried the same way, a bounded number of times. An acknowledged commit is durable:
// synchronous_commit is on.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setImmediate as turnOfEventLoop } from 'node:timers/promises';
import pg from 'pg';
import { keyedSizeBytes, type Entity } from '../../domain/entity.js';
import { customPropertiesMax, entityBytesMax } from '../../limits.js';
import type { KeyBound, KeyRange } from '../../domain/keys.js';
import { TableError } from '../../errors.js';
import type {
  CommitObserver,
  CommitResult,
  PropertyCondition,
  ScanRequest,
  ScanStep,
  SettingChange,
  SettingKey,
  Store,
  TableCommit,
  TableEntity,
  TableInfo,
  Write,
  WriteFailure,
} from '../store.js';
import { CommitClock, conditionFailure, mergeProperties } from '../write.js';
import {
  decodeKey,
  encodeIncoming,
  encodeKey,
  encodeMergedMembers,
  encodeProperties,
  incomingText,
  storedEntity,
  type EncodedProperties,
  type IncomingProperties,
} from './codec.js';
import { Coalescer } from './coalescer.js';
import { conditionSql, type Bind } from './conditions.js';
import { azureError, isConnectionFailure, isMissingTable, isRetryable, isStatementFailure } from './failures.js';
import {
  catalogRefreshMsDefault,
  indexedLiteral,
  indexedValueSql,
  PropertyIndexes,
  type IndexedLookup,
} from './property-indexes.js';
import { migrate, schemaName as s } from './schema.js';
import { autoIndexRowsDefault } from '../property-index.js';

/** Connections per process: requests beyond them wait for one, up to connectTimeoutMs. */
const poolConnectionsMax = 16;
/** Waiting for a connection (new or from the pool) longer than this answers 503 ServerBusy. */
const connectTimeoutMs = 3_000;
/** The database cancels a statement after this (57014: 500 OperationTimedOut)... */
const statementTimeoutMs = 10_000;
/** ...and the driver gives up on an unanswering server a little later. */
const queryTimeoutMs = 12_000;
/** A row lock held longer than this (a stuck transaction) fails the waiter with 503 ServerBusy. */
const lockTimeoutMs = 5_000;
/**
 * Point reads, inserts, upserts and merges: statements of each kind in flight at once per process,
 * and requests one carries at most (coalescer.ts). Measured on 2 cores, 1 and 2 in flight did
 * alike and 4 worse; 2 lets a larger database work on two at once while the rest wait to go together.
 */
const groupsRunningMax = 2;
const groupItemsMax = 32;
/** Attempts of one commit whose transaction lost a race, before 503 ServerBusy. */
const commitAttemptsMax = 5;
/** Entities one scan step returns at most: a page is built of a few steps, each one round trip. */
const stepRowsMax = 1000;
/**
 * Rows one conditional scan step examines at most, so that a sparse filter costs the database a
 * bounded statement (tens of milliseconds) and the page budget is checked between steps.
 */
const stepExamineMaxDefault = 20_000;

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` */
  readonly url: string;
  /** Rows one conditional scan step may examine (tests make it tiny to reach window edges). */
  readonly stepExamineMax?: number;
  /** Hears of every durable commit (one per write request: each is its own transaction here). */
  readonly onCommit?: CommitObserver | undefined;
  /** Rows a table's scans examine for one property before it is indexed (property-index.ts); 0 never. */
  readonly autoIndexRows?: number | undefined;
  /** How often, at most, the index catalog is read again (property-indexes.ts; tests make it 0). */
  readonly indexCatalogRefreshMs?: number;
}

/** Raised inside a commit whose insert met an entity another process inserted meanwhile. */
class InsertRace extends Error {}

export class PostgresStore implements Store {
  private readonly clock = new CommitClock(0n);
  private closed = false;
  private readonly reads = this.coalescer((addresses: readonly EntityAddress[]) => this.readGroup(addresses));
  // Two writes to one entity never share a statement (a row one statement writes twice is an error).
  private readonly inserts = this.coalescer((puts: readonly GroupedPut[]) => this.putGroup(puts, false), addressKey);
  private readonly upserts = this.coalescer((puts: readonly GroupedPut[]) => this.putGroup(puts, true), addressKey);
  private readonly merges = this.coalescer((merges: readonly GroupedMerge[]) => this.mergeGroup(merges), addressKey);

  private constructor(
    private readonly pool: pg.Pool,
    private readonly stepExamineMax: number,
    private readonly onCommit: CommitObserver | undefined,
    private readonly indexes: PropertyIndexes,
  ) {}

  /** Requests of one kind grouped into statements `run` makes (coalescer.ts). */
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

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const stepExamineMax = options.stepExamineMax ?? stepExamineMaxDefault;
    assert(Number.isSafeInteger(stepExamineMax) && stepExamineMax >= 1, 'a scan step examines at least one row');
    const pool = new pg.Pool({
      connectionString: options.url,
      max: poolConnectionsMax,
      connectionTimeoutMillis: connectTimeoutMs,
      idleTimeoutMillis: 30_000,
      query_timeout: queryTimeoutMs,
      statement_timeout: statementTimeoutMs,
      lock_timeout: lockTimeoutMs,
      // A process killed mid-transaction must not hold its locks until TCP notices.
      idle_in_transaction_session_timeout: 30_000,
      keepAlive: true,
      application_name: 'cerulean',
      // Bitmap scans off: an equality step on a property index (property-indexes.ts) must walk
      // the index in key order and stop at its window. The planner has no statistics for a
      // partial index's expression, so it guesses the matches (0.5 % of all entities) and, with
      // bitmap scans on, may read every match of the range and sort them. Without them its only
      // choices are that ordered walk and the primary key walk, which at that guess costs far
      // more. No other statement of this engine wants a bitmap scan: all are key lookups or key walks.
      options: '-c synchronous_commit=on -c enable_bitmapscan=off',
    });
    // An idle connection the server dropped (restart, failover) is discarded; the next request gets a new one.
    pool.on('error', () => undefined);
    const indexes = new PropertyIndexes(
      options.url,
      pool,
      options.autoIndexRows ?? autoIndexRowsDefault,
      options.indexCatalogRefreshMs ?? catalogRefreshMsDefault,
    );
    const client = await pool.connect();
    try {
      await migrate(client);
      await indexes.load();
    } catch (error) {
      client.release(true);
      await indexes.close();
      await pool.end();
      throw error;
    }
    client.release();
    return new PostgresStore(pool, stepExamineMax, options.onCommit, indexes);
  }

  /** Statements each kind of grouped request went in, and the requests they carried (coalescer.ts). */
  groupCounts(): Record<'reads' | 'inserts' | 'upserts' | 'merges', { statements: number; items: number }> {
    const counts = ({ statements, items }: { statements: number; items: number }) => ({ statements, items });
    return {
      reads: counts(this.reads),
      inserts: counts(this.inserts),
      upserts: counts(this.upserts),
      merges: counts(this.merges),
    };
  }

  // -- tables ----------------------------------------------------------------------------------

  async createTable(account: string, name: string): Promise<'created' | 'exists'> {
    const startedMs = performance.now();
    const { rowCount } = await this.query(
      'createTable',
      `INSERT INTO ${s}.tables (account, name_lower, name) VALUES ($1, $2, $3) ON CONFLICT (account, name_lower) DO NOTHING`,
      [account, name.toLowerCase(), name],
    );
    if (rowCount !== 1) return 'exists';
    this.committed(startedMs);
    return 'created';
  }

  async deleteTable(account: string, name: string): Promise<boolean> {
    if (!storableName(name)) return false;
    const startedMs = performance.now();
    // Its entities and settings go with it (ON DELETE CASCADE), in the same transaction; its
    // property indexes after it, in the background.
    const { rows } = await this.query<{ id: string }>(
      'deleteTable',
      `DELETE FROM ${s}.tables WHERE account = $1 AND name_lower = $2 RETURNING id`,
      [account, name.toLowerCase()],
    );
    if (rows.length !== 1) return false;
    this.committed(startedMs);
    this.indexes.deleted(account, name, rows[0]!.id);
    return true;
  }

  async getTable(account: string, name: string): Promise<TableInfo | undefined> {
    if (!storableName(name)) return undefined;
    const { rows } = await this.query<{ name: string }>(
      'getTable',
      `SELECT name FROM ${s}.tables WHERE account = $1 AND name_lower = $2`,
      [account, name.toLowerCase()],
    );
    return rows[0] && { account, name: rows[0].name };
  }

  async listTables(account: string, fromLower: string | undefined, limit: number): Promise<TableInfo[]> {
    const { rows } = await this.query<{ name: string }>(
      'listTables',
      `SELECT name FROM ${s}.tables WHERE account = $1 AND name_lower >= $2 ORDER BY name_lower LIMIT $3`,
      [account, fromLower ?? '', limit],
    );
    return rows.map((row) => ({ account, name: row.name }));
  }

  // -- entities --------------------------------------------------------------------------------

  async getEntity(table: TableInfo, partitionKey: string, rowKey: string): Promise<Entity | undefined> {
    return (await this.getTableEntity(table.account, table.name, partitionKey, rowKey))?.entity;
  }

  async getTableEntity(
    account: string,
    name: string,
    partitionKey: string,
    rowKey: string,
  ): Promise<TableEntity | undefined> {
    if (!storableName(name)) return undefined;
    const row = await this.grouped(this.reads, {
      account,
      nameLower: name.toLowerCase(),
      pk: encodeKey(partitionKey),
      rk: encodeKey(rowKey),
    });
    if (row === undefined) return undefined;
    const entity = row.ts === null ? undefined : storedEntity(partitionKey, rowKey, BigInt(row.ts), row.doc, row.props);
    return { table: { account, name: row.name }, entity };
  }

  /** Point reads that arrived together, as one statement: a row per address whose table exists. */
  private readGroup(addresses: readonly EntityAddress[]): Promise<(ReadRow | undefined)[]> {
    return this.groupStatement<EntityAddress, ReadRow>(
      'readGroup',
      addresses,
      addressColumns,
      addressValues,
      (values) =>
        `SELECT k.i, t.name, e.ts, ${storedFormSql('e.')} FROM (${values}) AS k (i, ${addressNames}) ` +
        `JOIN ${s}.tables t ON t.account = k.account AND t.name_lower = k.name_lower ` +
        `LEFT JOIN ${s}.entities e ON e.table_id = t.id AND e.pk = k.pk AND e.rk = k.rk`,
    );
  }

  /**
   * Lone inserts (ON CONFLICT DO NOTHING) or upserts that arrived together, as one statement:
   * the stored Timestamp and table name of each written one.
   */
  private putGroup(puts: readonly GroupedPut[], upsert: boolean): Promise<(WriteRow | undefined)[]> {
    const onConflict = upsert
      ? `ON CONFLICT (table_id, pk, rk) DO UPDATE SET ts = greatest(EXCLUDED.ts, e.ts + 1), props = EXCLUDED.props, doc = EXCLUDED.doc`
      : 'ON CONFLICT DO NOTHING';
    return this.groupStatement<GroupedPut, WriteRow>(
      upsert ? 'upsertGroup' : 'insertGroup',
      puts,
      putColumns,
      (put) => [...addressValues(put), put.ts, put.props, put.doc],
      (values) =>
        `WITH k (i, ${addressNames}, ts, props, doc) AS (${values}), ` +
        `w AS (INSERT INTO ${s}.entities AS e (table_id, pk, rk, ts, props, doc) ` +
        `SELECT t.id, k.pk, k.rk, k.ts, k.props::jsonb, k.doc FROM k JOIN ${s}.tables t ON t.account = k.account AND t.name_lower = k.name_lower ` +
        `ORDER BY k.i ${onConflict} RETURNING e.table_id, e.pk, e.rk, e.ts) ` +
        `SELECT k.i, w.ts, t.name FROM w JOIN ${s}.tables t ON t.id = w.table_id ` +
        `JOIN k ON k.account = t.account AND k.name_lower = t.name_lower AND k.pk = w.pk AND k.rk = w.rk`,
    );
  }

  /**
   * Lone merges that arrived together, as one statement (mergeAlone): the stored Timestamp and
   * table name of each written one.
   */
  private mergeGroup(merges: readonly GroupedMerge[]): Promise<(WriteRow | undefined)[]> {
    return this.groupStatement<GroupedMerge, WriteRow>(
      'mergeGroup',
      merges,
      mergeColumns,
      (merge) => {
        const annotations = merge.names.map((name) => `${name}@odata.type`);
        return [
          ...addressValues(merge),
          merge.ts,
          merge.expected,
          merge.members,
          merge.names,
          annotations,
          merge.keyBytes,
        ];
      },
      (values) =>
        `WITH k (i, ${addressNames}, ts, expected, members, names, annotations, key_bytes) AS (${values}) ` +
        `UPDATE ${s}.entities e SET ts = greatest(m.new_ts, e.ts + 1), props = m.merged, doc = NULL FROM (` +
        `SELECT k.i, k.ts AS new_ts, k.key_bytes, c.table_id, c.pk, c.rk, c.ts, x.merged, jsonb_array_length(x.merged -> '@order') AS names ` +
        `FROM k JOIN ${s}.tables t ON t.account = k.account AND t.name_lower = k.name_lower ` +
        `JOIN ${s}.entities c ON c.table_id = t.id AND c.pk = k.pk AND c.rk = k.rk AND (k.expected IS NULL OR c.ts = k.expected) ` +
        `CROSS JOIN LATERAL (SELECT jsonb_set((c.props - k.annotations) || k.members, '{@order}', ` +
        `coalesce(c.props -> '@order', (SELECT coalesce(jsonb_agg(n), '[]') FROM jsonb_object_keys(c.props) AS n WHERE right(n, 11) <> '@odata.type')) || ` +
        `(SELECT coalesce(jsonb_agg(n ORDER BY o), '[]') FROM unnest(k.names) WITH ORDINALITY AS w (n, o) WHERE NOT c.props ? n)) AS merged) AS x ` +
        `ORDER BY k.i` +
        `) AS m WHERE e.table_id = m.table_id AND e.pk = m.pk AND e.rk = m.rk AND e.ts = m.ts ` +
        `AND m.names <= ${customPropertiesMax} AND m.key_bytes + ${mergeBytesPerName} * m.names + 2 * octet_length(m.merged::text) <= ${entityBytesMax} ` +
        `RETURNING m.i, e.ts, ${nameOfRowSql}`,
    );
  }

  /**
   * One statement for a group of requests (prepared as `name` and its padded size): `sql` is
   * given their `VALUES` list, whose rows are numbered `i` from 1 in key order, as every statement
   * and transaction of this engine takes row locks, so that two groups cannot deadlock. The
   * answer is each item's row (the one numbered as it), in the items' order.
   */
  private async groupStatement<Item extends EntityAddress, Row>(
    name: string,
    items: readonly Item[],
    columns: readonly string[],
    valuesOf: (item: Item) => unknown[],
    sql: (values: string) => string,
  ): Promise<(Row | undefined)[]> {
    const order = items.map((_, index) => index).sort((a, b) => compareAddresses(items[a]!, items[b]!));
    const { rows } = await this.rawQuery<Row & { i: number }>(
      `${name}${groupRows(items.length)}`,
      sql(groupValuesSql(items.length, columns)),
      groupValues(
        order.map((index) => valuesOf(items[index]!)),
        columns,
      ),
    );
    const answers: (Row | undefined)[] = new Array(items.length).fill(undefined);
    for (const row of rows) answers[order[row.i - 1]!] = row;
    return answers;
  }

  async scan(table: TableInfo, range: KeyRange, { conditions, limit }: ScanRequest): Promise<ScanStep> {
    const rows = Math.min(limit, stepRowsMax);
    if (conditions.length > 0) this.indexes.refreshIfDue();
    const lookup = conditions.length === 0 ? undefined : this.indexes.lookup(table, conditions);
    let step =
      lookup === undefined
        ? undefined
        : await this.scanStep(table, range, conditions, rows, this.stepExamineMax, lookup);
    if (step === undefined) {
      step = await this.scanStep(table, range, conditions, rows, this.stepExamineMax, undefined);
      assert(step !== undefined, 'a step without an index always answers');
      if (conditions.length > 0) this.indexes.noteScan(table, conditions, step.examined);
    }
    // The rows came over a socket, but decoding a full step is JavaScript's work: others get a turn.
    if (step.next !== undefined && step.examined >= stepRowsMax) await turnOfEventLoop();
    return step;
  }

  /**
   * Up to `limit` entities of the range in key order that may satisfy `conditions`, examining at
   * most `window` rows: all rows of the range, or with `lookup` only those its index holds for
   * the literal. Undefined when `lookup`'s table id no longer names the table.
   */
  private async scanStep(
    table: TableInfo,
    range: KeyRange,
    conditions: readonly PropertyCondition[],
    limit: number,
    window: number,
    lookup: IndexedLookup | undefined,
  ): Promise<ScanStep | undefined> {
    const params: unknown[] = [table.account, table.name.toLowerCase()];
    const bind: Bind = (value) => `$${params.push(value)}`;
    // An index step names the table by its id, literally: the planner matches a partial index
    // only to a predicate it can prove when planning.
    const tableId = lookup === undefined ? `(${tableIdSql})` : lookup.tableId;
    const where = [
      `table_id = ${tableId}`,
      ...(lookup === undefined
        ? []
        : [`${indexedValueSql(lookup.condition.property)} = ${bind(indexedLiteral(lookup.condition))}::jsonb`]),
      ...rangeSql(range, bind),
    ].join(' AND ');
    const partitionKey = onlyPartition(range);
    // When the range pins the PartitionKey, only RowKey is read back.
    const keys = (alias: string) => (partitionKey === undefined ? `${alias}pk, ${alias}rk` : `${alias}rk`);
    let sql: string;
    if (conditions.length === 0) {
      sql = `SELECT ${keys('')}, ts, ${storedFormSql('')}, true AS hit FROM ${s}.entities WHERE ${where} ORDER BY pk, rk LIMIT ${bind(limit)}`;
    } else {
      // The inner query walks the window in key order (one row past it, so that `lead` tells
      // whether the window's last row is the range's), testing each row and numbering it; only
      // keys, version and the test's outcome go through the window functions. The rows that
      // close the window or the range come back as markers when they fail the conditions: where
      // they are tells how far the step got. Each match then reads its stored form by key.
      const windowRows = bind(window);
      const tests = conditions.map((condition) => conditionSql(condition, bind)).join(' AND ');
      sql =
        `SELECT ${keys('x.')}, x.ts, d.doc, d.props, x.hit, x.n, x.last FROM (` +
        `SELECT pk, rk, ts, hit, n, last FROM (` +
        `SELECT pk, rk, ts, hit, row_number() OVER w AS n, lead(ts) OVER w IS NULL AS last FROM (` +
        `SELECT pk, rk, ts, (${tests}) AS hit FROM ${s}.entities WHERE ${where} ORDER BY pk, rk LIMIT ${windowRows}::bigint + 1` +
        `) AS examined WINDOW w AS (ORDER BY pk, rk)` +
        `) AS numbered WHERE n <= ${windowRows} AND (hit OR n = ${windowRows} OR last) ORDER BY pk, rk LIMIT ${bind(limit)}` +
        `) AS x LEFT JOIN LATERAL (SELECT ${storedFormSql('')} FROM ${s}.entities ` +
        `WHERE table_id = ${tableId} AND pk = x.pk AND rk = x.rk AND x.hit OFFSET 0) AS d ON true ORDER BY x.pk, x.rk`;
      // The same statement tells whether the name still means that id (the table may have been
      // deleted, or deleted and created again, by any process): one row of nulls but the id when
      // it does not, none when there is no table.
      if (lookup !== undefined) {
        sql = `SELECT g.id AS table_id, s.* FROM (${tableIdSql}) AS g LEFT JOIN LATERAL (${sql}) AS s ON g.id = ${tableId} ORDER BY s.n`;
      }
    }
    // A plain step has one of a few shapes (which bounds the range has): each is prepared once
    // per connection. A step with conditions has as many shapes as filters, and is planned afresh,
    // but for a lone equality read from an index (planning is most of its time: indexStepName).
    const name =
      conditions.length === 0
        ? plainStepName(sql)
        : lookup !== undefined && conditions.length === 1
          ? indexStepName(sql)
          : undefined;
    let { rows } = await this.query<ScanRow>(name, sql, params);
    if (lookup !== undefined) {
      if (rows[0] !== undefined && rows[0].table_id !== lookup.tableId) {
        this.indexes.stale(table, lookup.tableId);
        return undefined;
      }
      rows = rows.filter((row) => row.rk !== null); // the null row of a step that found nothing
    }
    let bytes = 0;
    let lastKeys: { partitionKey: string; rowKey: string } | undefined;
    const entities: Entity[] = [];
    for (const row of rows) {
      lastKeys = { partitionKey: partitionKey ?? decodeKey(row.pk!), rowKey: decodeKey(row.rk) };
      if (!row.hit) continue;
      const entity = storedEntity(lastKeys.partitionKey, lastKeys.rowKey, BigInt(row.ts), row.doc, row.props);
      bytes += Buffer.byteLength(row.doc ?? row.props!); // what a page's size bound counts
      entities.push(entity);
    }
    const last = rows.at(-1);
    if (last === undefined || lastKeys === undefined) return { entities, examined: 0, bytes, next: undefined };
    const examined = conditions.length === 0 ? rows.length : Number(last.n);
    const ended = conditions.length === 0 ? rows.length < limit : last.last === true;
    const next: KeyBound | undefined = ended ? undefined : { ...lastKeys, inclusive: false };
    return { entities, examined, bytes, next };
  }

  async commit(table: TableInfo, writes: readonly Write[]): Promise<CommitResult> {
    const startedMs = performance.now();
    const { result } = await this.commitWrites(table, writes);
    if (result.ok) this.committed(startedMs);
    return result;
  }

  async commitToTable(account: string, name: string, writes: readonly Write[]): Promise<TableCommit> {
    if (!storableName(name)) return { table: undefined, result: failed(0, 'tableNotFound') };
    const startedMs = performance.now();
    const { result, storedName } = await this.commitWrites({ account, name }, writes);
    if (result.ok) this.committed(startedMs);
    return { table: storedName === undefined ? undefined : { account, name: storedName }, result };
  }

  /** The commit, and the table's name as stored (undefined when there was no table). */
  private async commitWrites(table: TableInfo, writes: readonly Write[]): Promise<Committed> {
    if (this.closed) throw new Error('store is closed');
    const [only] = writes;
    // A lone put or delete is one statement that checks its condition itself; a merge, which
    // must read the stored properties and check the limits, and a batch run a transaction.
    if (writes.length === 1 && only!.action.kind !== 'merge') {
      try {
        return await this.commitAlone(table, only!, only!.action);
      } catch (error) {
        if (isMissingTable(error)) return noTable;
        throw error;
      }
    }
    if (writes.length === 1 && only!.action.kind === 'merge' && only!.condition.kind !== 'absent') {
      const merged = await this.mergeAlone(table, only!, only!.action);
      if (merged !== undefined) return merged;
    }
    return this.transaction(
      (client) => this.applyCommit(client, table, writes),
      ({ result }) => result.ok,
      noTable,
    );
  }

  /**
   * One write as one statement (an insert or an upsert shares it with others that arrived
   * together: putGroup). Its Timestamp is the clock's, or one tick after the version it replaces
   * if that is later (the row is locked by the statement, so no other write comes between). When
   * nothing was written, a second look tells why.
   */
  private async commitAlone(
    table: TableInfo,
    write: Write,
    action: Write['action'] & { kind: 'put' | 'delete' },
  ): Promise<Committed> {
    const { condition } = write;
    const key: [string, string, Buffer, Buffer] = [
      table.account,
      table.name.toLowerCase(),
      encodeKey(write.partitionKey),
      encodeKey(write.rowKey),
    ];
    const expected = condition.kind === 'version' ? condition.timestamp.toString() : null;
    const ts = this.clock.next().toString();
    let written: { ts: string; name: string } | undefined;
    const encoded = action.kind === 'put' ? encodeIncoming(action) : undefined;
    if (action.kind === 'delete') {
      if (condition.kind === 'absent') return this.whyNotWritten(table, write);
      ({
        rows: [written],
      } = await this.query<{ ts: string; name: string }>(
        'deleteEntity',
        `DELETE FROM ${s}.entities e WHERE table_id = (${tableIdSql}) AND pk = $3 AND rk = $4 AND ($5::bigint IS NULL OR ts = $5) RETURNING $6::bigint AS ts, ${nameOfRowSql}`,
        [...key, expected, ts],
      ));
    } else if (condition.kind === 'absent' || condition.kind === 'none') {
      const put = {
        account: table.account,
        nameLower: key[1],
        pk: key[2],
        rk: key[3],
        ts,
        props: encoded!.props,
        doc: encoded!.doc,
      };
      written = await this.grouped(condition.kind === 'absent' ? this.inserts : this.upserts, put);
    } else {
      ({
        rows: [written],
      } = await this.query<{ ts: string; name: string }>(
        'replaceEntity',
        `UPDATE ${s}.entities e SET ts = greatest($5::bigint, ts + 1), props = $6::jsonb, doc = $8 ` +
          `WHERE table_id = (${tableIdSql}) AND pk = $3 AND rk = $4 AND ($7::bigint IS NULL OR ts = $7) RETURNING ts, ${nameOfRowSql}`,
        [...key, ts, encoded!.props, expected, encoded!.doc],
      ));
    }
    if (written === undefined) return this.whyNotWritten(table, write);
    return { result: { ok: true, timestamp: this.adoptTimestamp(BigInt(written.ts)) }, storedName: written.name };
  }

  /**
   * The Timestamp a statement wrote: the database may have chosen a later tick than the clock's
   * (one after a version another process wrote with a clock ahead of this one), and this
   * process's later commits come after it too.
   */
  private adoptTimestamp(timestamp: bigint): bigint {
    if (timestamp > this.clock.last) this.clock.next(timestamp - 1n);
    return timestamp;
  }

  /**
   * A lone merge into a stored entity as one statement: the merge of the stored members with the
   * incoming ones, and of their order, is computed in SQL from the version the statement reads,
   * and written only if the row still holds that version (a compare-and-swap on ts) and the
   * merged entity is certainly within the entity limits (a bound from its stored size:
   * mergeBoundSql). Anything else (no entity, another version, a table gone, an entity that
   * may pass a limit) writes nothing and answers undefined: the transaction path then decides on
   * the locked row exactly.
   */
  private async mergeAlone(
    table: TableInfo,
    write: Write,
    incoming: IncomingProperties,
  ): Promise<Committed | undefined> {
    const { condition } = write;
    const expected = condition.kind === 'version' ? condition.timestamp.toString() : null;
    // The part of entitySizeBytes that does not depend on the properties.
    const keyBytes = keyedSizeBytes(write.partitionKey, write.rowKey, 0);
    // The incoming members as the stored object (and their names), from the body's stored text when it has one.
    const text = incomingText(incoming);
    const members = text?.doc ?? encodeMergedMembers(incoming.properties);
    const names = text?.names ?? [...incoming.properties.keys()];
    const written = await this.grouped(this.merges, {
      account: table.account,
      nameLower: table.name.toLowerCase(),
      pk: encodeKey(write.partitionKey),
      rk: encodeKey(write.rowKey),
      ts: this.clock.next().toString(),
      expected,
      members,
      names,
      keyBytes,
    });
    if (written === undefined) return undefined;
    return { result: { ok: true, timestamp: this.adoptTimestamp(BigInt(written.ts)) }, storedName: written.name };
  }

  /** The failure of a lone write that wrote nothing, from the table and the entity as they are now. */
  private async whyNotWritten(table: TableInfo, write: Write): Promise<Committed> {
    const { rows } = await this.query<{ name: string | null; ts: string | null }>(
      'whyNotWritten',
      `SELECT (SELECT name FROM ${s}.tables WHERE account = $1 AND name_lower = $2) AS name, ` +
        `(SELECT ts FROM ${s}.entities WHERE table_id = (${tableIdSql}) AND pk = $3 AND rk = $4) AS ts`,
      [table.account, table.name.toLowerCase(), encodeKey(write.partitionKey), encodeKey(write.rowKey)],
    );
    const row = rows[0]!;
    if (row.name === null) return noTable;
    const current = row.ts === null ? undefined : BigInt(row.ts);
    const failure =
      conditionFailure(current, write.condition) ??
      (write.action.kind === 'delete' && current === undefined ? 'notFound' : undefined);
    // Otherwise another process changed the entity between the two statements: the write failed
    // on the entity as it was then.
    return {
      result: failed(0, failure ?? (write.condition.kind === 'absent' ? 'exists' : 'versionMismatch')),
      storedName: row.name,
    };
  }

  private async applyCommit(client: pg.PoolClient, table: TableInfo, writes: readonly Write[]): Promise<Committed> {
    const pks = writes.map((write) => encodeKey(write.partitionKey));
    const rks = writes.map((write) => encodeKey(write.rowKey));
    const needProperties = writes.some((write) => write.action.kind === 'merge');
    // One statement locks the table's row (a deletion of the table waits, or has won and there is
    // no row) and the stored entities, in key order as every commit locks them, so that two
    // batches cannot deadlock on each other. A missing table gives no row; a table without any of
    // the entities gives one row of nulls.
    const locked = await client.query<{
      table_id: string;
      name: string;
      pk: Buffer | null;
      rk: Buffer | null;
      ts: string | null;
      doc: string | null;
      props: string | null;
    }>({
      name: needProperties ? 'lockWithProperties' : 'lock',
      text:
        `WITH t AS (SELECT id, name FROM ${s}.tables WHERE account = $1 AND name_lower = $2 FOR KEY SHARE) ` +
        `SELECT t.id AS table_id, t.name, e.pk, e.rk, e.ts, e.doc, e.props FROM t LEFT JOIN LATERAL (` +
        `SELECT e.pk, e.rk, e.ts, ${needProperties ? storedFormSql('e.') : 'NULL AS doc, NULL AS props'} FROM ${s}.entities e ` +
        `JOIN unnest($3::bytea[], $4::bytea[]) AS w (pk, rk) ON e.pk = w.pk AND e.rk = w.rk ` +
        `WHERE e.table_id = t.id ORDER BY e.pk, e.rk FOR UPDATE OF e) AS e ON true`,
      values: [table.account, table.name.toLowerCase(), pks, rks],
    });
    const tableId = locked.rows[0]?.table_id;
    if (tableId === undefined) return noTable;
    const storedName = locked.rows[0]!.name;
    const failedAt = (index: number, failure: WriteFailure): Committed => ({
      result: failed(index, failure),
      storedName,
    });
    const stored = new Map<string, { ts: bigint; doc: string | null; props: string | null }>();
    for (const row of locked.rows) {
      if (row.pk !== null)
        stored.set(row.pk.toString('hex') + ':' + row.rk!.toString('hex'), {
          ts: BigInt(row.ts!),
          doc: row.doc,
          props: row.props,
        });
    }

    const inserts: number[] = [];
    const updates: { index: number; properties: EncodedProperties }[] = [];
    const deletes: number[] = [];
    const insertProperties: EncodedProperties[] = [];
    let newestPrevious = 0n;
    for (let index = 0; index < writes.length; index++) {
      const write = writes[index]!;
      const current = stored.get(pks[index]!.toString('hex') + ':' + rks[index]!.toString('hex'));
      if (current !== undefined && current.ts > newestPrevious) newestPrevious = current.ts;
      const failure = conditionFailure(current?.ts, write.condition);
      if (failure !== undefined) return failedAt(index, failure);
      const { action } = write;
      if (action.kind === 'delete') {
        if (current === undefined) return failedAt(index, 'notFound');
        deletes.push(index);
        continue;
      }
      let encoded: EncodedProperties;
      if (action.kind === 'merge' && current !== undefined) {
        const merged = mergeProperties(
          write,
          storedEntity(write.partitionKey, write.rowKey, current.ts, current.doc, current.props).properties,
          action.properties,
        );
        if (typeof merged === 'string') return failedAt(index, merged);
        encoded = encodeProperties(merged);
      } else encoded = encodeIncoming(action);
      if (current === undefined) {
        inserts.push(index);
        insertProperties.push(encoded);
      } else updates.push({ index, properties: encoded });
    }
    // One Timestamp for the whole commit, later than any version it replaces (Azure REST:
    // understanding-the-table-service-data-model).
    const timestamp = this.clock.next(newestPrevious);
    const ts = timestamp.toString();
    const pick = (keys: Buffer[], indexes: readonly number[]) => indexes.map((index) => keys[index]!);
    if (inserts.length > 0) {
      const result = await client.query({
        name: 'insertEntities',
        text:
          `INSERT INTO ${s}.entities (table_id, pk, rk, ts, props, doc) SELECT $1, w.pk, w.rk, $2, w.props::jsonb, w.doc ` +
          `FROM unnest($3::bytea[], $4::bytea[], $5::text[], $6::text[]) AS w (pk, rk, props, doc) ON CONFLICT DO NOTHING`,
        values: [
          tableId,
          ts,
          pick(pks, inserts),
          pick(rks, inserts),
          insertProperties.map((encoded) => encoded.props),
          insertProperties.map((encoded) => encoded.doc),
        ],
      });
      if (result.rowCount !== inserts.length) throw new InsertRace();
    }
    if (updates.length > 0) {
      const indexes = updates.map((update) => update.index);
      await client.query({
        name: 'updateEntities',
        text:
          `UPDATE ${s}.entities e SET ts = $2, props = w.props::jsonb, doc = w.doc ` +
          `FROM unnest($3::bytea[], $4::bytea[], $5::text[], $6::text[]) AS w (pk, rk, props, doc) ` +
          `WHERE e.table_id = $1 AND e.pk = w.pk AND e.rk = w.rk`,
        values: [
          tableId,
          ts,
          pick(pks, indexes),
          pick(rks, indexes),
          updates.map((update) => update.properties.props),
          updates.map((update) => update.properties.doc),
        ],
      });
    }
    if (deletes.length > 0) {
      await client.query({
        name: 'deleteEntities',
        text:
          `DELETE FROM ${s}.entities e USING unnest($2::bytea[], $3::bytea[]) AS w (pk, rk) ` +
          `WHERE e.table_id = $1 AND e.pk = w.pk AND e.rk = w.rk`,
        values: [tableId, pick(pks, deletes), pick(rks, deletes)],
      });
    }
    return { result: { ok: true, timestamp }, storedName };
  }

  /**
   * Runs `body` in one transaction and commits it if `keep` says so (rolls back otherwise),
   * starting over after a lost race, up to commitAttemptsMax times. A foreign key violation (the
   * table was deleted under the transaction) answers `missingTable`.
   */
  private async transaction<T>(
    body: (client: pg.PoolClient) => Promise<T>,
    keep: (result: T) => boolean,
    missingTable: T,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      let committing = false;
      try {
        await client.query('BEGIN');
        const result = await body(client);
        committing = keep(result);
        await client.query(committing ? 'COMMIT' : 'ROLLBACK');
        client.release();
        return result;
      } catch (error) {
        const broken = isConnectionFailure(error);
        if (!broken) await client.query('ROLLBACK').catch(() => undefined);
        client.release(broken);
        if (isMissingTable(error)) return missingTable;
        const lostRace = error instanceof InsertRace || isRetryable(error);
        if (!lostRace || attempt >= commitAttemptsMax)
          throw azureError(lostRace ? new TableError('ServerBusy') : error, committing);
        // A short random pause, so that racing processes do not meet again in step.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
      }
    }
  }

  // -- settings --------------------------------------------------------------------------------

  async getSetting(account: string, key: SettingKey): Promise<string | undefined> {
    if (key.scope === 'table') {
      if (!storableName(key.table)) return undefined;
      const { rows } = await this.query<{ value: string }>(
        'getTableSetting',
        `SELECT value FROM ${s}.table_settings WHERE table_id = (${tableIdSql})`,
        [account, key.table.toLowerCase()],
      );
      return rows[0]?.value;
    }
    const { rows } = await this.query<{ value: string }>(
      'getAccountSetting',
      `SELECT value FROM ${s}.account_settings WHERE account = $1 AND name = $2`,
      [account, key.name],
    );
    return rows[0]?.value;
  }

  async putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'> {
    if (changes.some(({ key }) => key.scope === 'table' && !storableName(key.table))) return 'tableNotFound';
    const startedMs = performance.now();
    const result = await this.transaction(
      async (client) => {
        for (const { key, value } of changes) {
          if (key.scope === 'account') {
            await client.query(
              value === undefined
                ? {
                    name: 'deleteAccountSetting',
                    text: `DELETE FROM ${s}.account_settings WHERE account = $1 AND name = $2`,
                    values: [account, key.name],
                  }
                : {
                    name: 'putAccountSetting',
                    text:
                      `INSERT INTO ${s}.account_settings (account, name, value) VALUES ($1, $2, $3) ` +
                      `ON CONFLICT (account, name) DO UPDATE SET value = EXCLUDED.value`,
                    values: [account, key.name, value],
                  },
            );
            continue;
          }
          // The table's row, locked: a concurrent deletion of the table waits, or has won.
          const { rows } = await client.query<{ id: string }>({
            name: 'lockTableOnly',
            text: `SELECT id FROM ${s}.tables WHERE account = $1 AND name_lower = $2 FOR KEY SHARE`,
            values: [account, key.table.toLowerCase()],
          });
          const tableId = rows[0]?.id;
          if (tableId === undefined) return 'tableNotFound';
          await client.query(
            value === undefined
              ? {
                  name: 'deleteTableSetting',
                  text: `DELETE FROM ${s}.table_settings WHERE table_id = $1`,
                  values: [tableId],
                }
              : {
                  name: 'putTableSetting',
                  text: `INSERT INTO ${s}.table_settings (table_id, value) VALUES ($1, $2) ON CONFLICT (table_id) DO UPDATE SET value = EXCLUDED.value`,
                  values: [tableId, value],
                },
          );
        }
        return 'ok';
      },
      (outcome) => outcome === 'ok',
      'tableNotFound',
    );
    if (result === 'ok') this.committed(startedMs);
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.indexes.close();
    await this.pool.end();
  }

  // -- plumbing --------------------------------------------------------------------------------

  private committed(startedMs: number): void {
    this.onCommit?.({ durationMs: performance.now() - startedMs, writes: 1 });
  }

  /** One statement outside a transaction; `name` prepares it once per connection. */
  private async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    name: string | undefined,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<Row>> {
    try {
      return await this.rawQuery<Row>(name, text, values);
    } catch (error) {
      throw azureError(error);
    }
  }

  /** query, failing with the database's own error: a group statement's (its coalescer decides on it). */
  private async rawQuery<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    name: string | undefined,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<Row>> {
    if (this.closed) throw new Error('store is closed');
    return this.pool.query<Row>(name === undefined ? { text, values } : { name, text, values });
  }

  /** A request's outcome from its group statement (coalescer.ts); a failure as an Azure error. */
  private async grouped<Item, Outcome>(coalescer: Coalescer<Item, Outcome>, item: Item): Promise<Outcome> {
    try {
      return await coalescer.submit(item);
    } catch (error) {
      throw azureError(error);
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    if (this.closed) throw new Error('store is closed');
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw azureError(error);
    }
    // A connection that breaks between two statements of a transaction emits 'error' (which
    // would end the process unheard); the next statement fails too, and the client is discarded.
    if (!guardedClients.has(client)) {
      client.on('error', () => undefined);
      guardedClients.add(client);
    }
    return client;
  }
}

/**
 * Whether `name` can name a table here: PostgreSQL text holds neither U+0000 nor unpaired
 * surrogates, and table names (validated at creation) are ASCII letters and digits.
 */
function storableName(name: string): boolean {
  return !/\u0000|[\ud800-\udfff]/.test(name);
}

/** Checked-out clients given an 'error' listener (once each: the pool reuses them). */
const guardedClients = new WeakSet<pg.PoolClient>();

/**
 * An upper bound, per property, of what entitySizeBytes counts beyond twice the property's bytes
 * in the stored text: 8 per property, and at most 16 for a value (a Guid; a string counts
 * 2 per UTF-16 code unit + 4, and each code unit is at least one byte of its text). So
 * keyBytes + 24 x properties + 2 x the stored text's bytes >= entitySizeBytes.
 */
const mergeBytesPerName = 24;

/**
 * The columns `doc, props` of a read: the stored JSON form, or for a row without it (written
 * before schema version 2, or merged in SQL) the jsonb text. `alias` qualifies the columns.
 */
function storedFormSql(alias: string): string {
  return `${alias}doc, CASE WHEN ${alias}doc IS NULL THEN ${alias}props::text END AS props`;
}

/** The table id of ($1 account, $2 lower-cased name), as a subquery: every request looks it up afresh. */
const tableIdSql = `SELECT id FROM ${s}.tables WHERE account = $1 AND name_lower = $2`;

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

function failed(index: number, failure: WriteFailure): CommitResult {
  return { ok: false, index, failure };
}

/** A commit's result and the table's name as stored (undefined: there was no table). */
interface Committed {
  readonly result: CommitResult;
  readonly storedName: string | undefined;
}

const noTable: Committed = { result: failed(0, 'tableNotFound'), storedName: undefined };

/** In RETURNING: the stored name of the table of the written row (aliased `e`). */
const nameOfRowSql = `(SELECT name FROM ${s}.tables WHERE id = e.table_id) AS name`;

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

/** Where one entity is, as a group statement takes it: by its table's name, found in the statement. */
interface EntityAddress {
  readonly account: string;
  readonly nameLower: string;
  readonly pk: Buffer;
  readonly rk: Buffer;
}

/** A lone insert or upsert waiting for its group statement: ts is the Timestamp it proposes. */
interface GroupedPut extends EntityAddress {
  readonly ts: string;
  readonly props: string;
  readonly doc: string | null;
}

/** A lone merge waiting for its group statement (mergeAlone). */
interface GroupedMerge extends EntityAddress {
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
interface ReadRow {
  readonly name: string;
  readonly ts: string | null;
  readonly doc: string | null;
  readonly props: string | null;
}

/** A written row's Timestamp and its table's stored name. */
interface WriteRow {
  readonly ts: string;
  readonly name: string;
}

const addressNames = 'account, name_lower, pk, rk';
const addressColumns = ['text', 'text', 'bytea', 'bytea'] as const;
const putColumns = [...addressColumns, 'bigint', 'text', 'text'] as const;
const mergeColumns = [...addressColumns, 'bigint', 'bigint', 'jsonb', 'text[]', 'text[]', 'integer'] as const;

function addressValues(address: EntityAddress): unknown[] {
  return [address.account, address.nameLower, address.pk, address.rk];
}

/** Two writes to one entity never share a statement. */
function addressKey(address: EntityAddress): string {
  return `${address.account}/${address.nameLower}/${address.pk.length}/${address.pk.toString('latin1')}${address.rk.toString('latin1')}`;
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
      tuples.push(
        `(${row + 1}, ${types.map((type, column) => `$${row * types.length + column + 1}::${type}`).join(', ')})`,
      );
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
