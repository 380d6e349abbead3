// The embedded default engine: one SQLite database in WAL mode, entities in one clustered
// WITHOUT ROWID index ordered by (table id, PartitionKey, RowKey); a table id stands for
// (account, table name) so that every index key stays short.
//
// Reads run here, on their own connection, and see every acknowledged write (WAL readers see
// the last commit). Writes go to the SqliteWriter: on a worker thread for an on-disk store, so that
// fsync never stalls the HTTP thread; inline on the same connection for an in-memory one.
import type Database from 'better-sqlite3';
import type { Entity } from '../../protocol/edm.js';
import type {
  CommitResult,
  KeyBound,
  KeyRange,
  PropertyCondition,
  ScanStep,
  Store,
  TableInfo,
  Write,
} from '../store.js';
import { decodeKey, encodeKey, encodeProperties, StoredEntity } from './codec.js';
import { databaseFile, openDatabase, selectTableSql, tableCacheKey } from './schema.js';
import { WorkerWriterClient } from './writer-client.js';
import { SqliteWriter, type EncodedWrite, type WriterApi } from './writer.js';

export interface SqliteStoreOptions {
  /** Directory for the database files; undefined keeps everything in memory. */
  readonly location: string | undefined;
}

interface EntityRow {
  pk: Buffer;
  rk: Buffer;
  ts: bigint;
  props: string;
}

type Statement = Database.Statement<unknown[], unknown>;

interface CachedTable {
  readonly info: TableInfo;
  readonly id: number;
}

export class SqliteStore implements Store {
  /** Tables by account and lower-cased name. Every change to tables passes through this process. */
  private readonly tables = new Map<string, CachedTable>();
  private readonly scanStatements = new Map<string, Statement>();
  private readonly selectTable: Statement;
  private readonly selectTables: Statement;
  private readonly selectEntity: Statement;
  private readonly selectSetting: Statement;
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    private readonly writer: WriterApi & { close(): Promise<void> },
  ) {
    this.selectTable = db.prepare(selectTableSql);
    this.selectTables = db.prepare(
      'SELECT name FROM tables WHERE account = ? AND name_lower >= ? ORDER BY name_lower LIMIT ?',
    );
    this.selectEntity = db
      .prepare('SELECT pk, rk, ts, json(props) AS props FROM entities WHERE table_id = ? AND pk = ? AND rk = ?')
      .safeIntegers(true);
    this.selectSetting = db.prepare('SELECT value FROM settings WHERE account = ? AND scope = ? AND name = ?');
  }

  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    if (options.location === undefined) {
      const db = openDatabase(':memory:', 'writer');
      const writer = new SqliteWriter(db);
      return new SqliteStore(db, Object.assign(writer, { close: async () => writer.drain() }));
    }
    const file = databaseFile(options.location);
    const writer = await WorkerWriterClient.start(file);
    return new SqliteStore(openDatabase(file, 'reader'), writer);
  }

  // -- tables ----------------------------------------------------------------------------------

  createTable(account: string, name: string): Promise<'created' | 'exists'> {
    return this.writer.createTable(account, name);
  }

  async deleteTable(account: string, name: string): Promise<boolean> {
    this.tables.delete(tableCacheKey(account, name));
    const deleted = await this.writer.deleteTable(account, name);
    this.tables.delete(tableCacheKey(account, name));
    return deleted;
  }

  async getTable(account: string, name: string): Promise<TableInfo | undefined> {
    return this.cachedTable(account, name)?.info;
  }

  async listTables(account: string, fromLower: string | undefined, limit: number): Promise<TableInfo[]> {
    const rows = this.selectTables.all(account, fromLower ?? '', limit) as { name: string }[];
    return rows.map((row) => ({ account, name: row.name }));
  }

  // -- entities --------------------------------------------------------------------------------

  async getEntity(table: TableInfo, partitionKey: string, rowKey: string): Promise<Entity | undefined> {
    const id = this.cachedTable(table.account, table.name)?.id;
    if (id === undefined) return undefined;
    const row = this.selectEntity.get(id, encodeKey(partitionKey), encodeKey(rowKey)) as EntityRow | undefined;
    return row === undefined ? undefined : new StoredEntity(partitionKey, rowKey, row.ts, row.props);
  }

  async scan(table: TableInfo, range: KeyRange, limit: number): Promise<Entity[]> {
    const id = this.cachedTable(table.account, table.name)?.id;
    if (id === undefined || limit <= 0) return [];
    return this.selectRange(id, range, [], limit);
  }

  async scanWhere(
    table: TableInfo,
    range: KeyRange,
    conditions: readonly PropertyCondition[],
    limit: number,
    examineMax: number,
  ): Promise<ScanStep> {
    const id = this.cachedTable(table.account, table.name)?.id;
    if (id === undefined || limit <= 0) return { entities: [], examined: 0, next: undefined };
    if (conditions.length === 0) {
      const entities = this.selectRange(id, range, [], limit);
      const last = entities.at(-1);
      return { entities, examined: entities.length, next: entities.length === limit && last ? after(last) : undefined };
    }
    // The row examineMax ahead closes this step's window, so a sparse filter cannot pin the thread.
    const windowEnd = this.keyAt(id, range, examineMax - 1);
    const window: KeyRange = windowEnd === undefined ? range : { lower: range.lower, upper: windowEnd };
    const upperBounds = windowEnd === undefined ? [range.upper] : [range.upper, windowEnd];
    const entities = this.selectRange(id, { lower: range.lower }, conditions, limit, upperBounds);
    const last = entities.at(-1);
    if (entities.length === limit && last !== undefined) {
      const examined = this.countRange(id, { lower: range.lower, upper: { ...keyOf(last), inclusive: true } }, range.upper);
      return { entities, examined, next: after(last) };
    }
    const examined = windowEnd === undefined ? this.countRange(id, window, range.upper) : examineMax;
    return { entities, examined, next: windowEnd === undefined ? undefined : { ...windowEnd, inclusive: false } };
  }

  commit(table: TableInfo, writes: readonly Write[]): Promise<CommitResult> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return this.writer.commit(table.account, table.name, writes.map(encodeWrite));
  }

  // -- settings --------------------------------------------------------------------------------

  async getSetting(account: string, scope: string, name: string): Promise<string | undefined> {
    const row = this.selectSetting.get(account, scope, name) as { value: string } | undefined;
    return row?.value;
  }

  putSetting(account: string, scope: string, name: string, value: string | undefined): Promise<void> {
    return this.writer.putSetting(account, scope, name, value);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close();
    if (this.db.open) this.db.close();
  }

  /** Entities of the range (under every upper bound given) that may satisfy the conditions. */
  private selectRange(
    id: number,
    range: KeyRange,
    conditions: readonly PropertyCondition[],
    limit: number,
    upperBounds: readonly (KeyBound | undefined)[] = [range.upper],
  ): Entity[] {
    const params: unknown[] = [id];
    const where = rangeWhere(range.lower, upperBounds, params);
    for (const condition of conditions) where.push(conditionSql(condition, params));
    params.push(limit);
    const sql = `SELECT pk, rk, ts, json(props) FROM entities WHERE ${where.join(' AND ')} ORDER BY pk, rk LIMIT ?`;
    // Rows as arrays: no object per row on the hottest path of every scan.
    const rows = this.statement(sql, true).all(...params) as [Buffer, Buffer, bigint, string][];
    return rows.map(([pk, rk, ts, props]) => new StoredEntity(decodeKey(pk), decodeKey(rk), ts, props));
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

  private countRange(id: number, range: KeyRange, outerUpper: KeyBound | undefined): number {
    const params: unknown[] = [id];
    const where = rangeWhere(range.lower, [range.upper, outerUpper], params);
    const row = this.statement(`SELECT count(*) AS n FROM entities WHERE ${where.join(' AND ')}`).get(...params) as {
      n: bigint;
    };
    return Number(row.n);
  }

  private statement(sql: string, raw = false): Statement {
    let statement = this.scanStatements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql).safeIntegers(true).raw(raw);
      this.scanStatements.set(sql, statement);
    }
    return statement;
  }

  private cachedTable(account: string, name: string): CachedTable | undefined {
    const key = tableCacheKey(account, name);
    let table = this.tables.get(key);
    if (table === undefined) {
      const row = this.selectTable.get(account, name.toLowerCase()) as { name: string; id: number } | undefined;
      if (row === undefined) return undefined;
      table = { info: { account, name: row.name }, id: row.id };
      this.tables.set(key, table);
    }
    return table;
  }
}

function encodeWrite(write: Write): EncodedWrite {
  const { partitionKey, rowKey, condition, action } = write;
  return {
    partitionKey,
    rowKey,
    condition,
    action: action.kind === 'delete' ? action : { kind: action.kind, properties: encodeProperties(action.properties) },
  };
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
 * A condition as SQL. On the JSONB properties a value is compared only when stored with the
 * literal's kind: a JSON number, an Int64 (a string annotated Edm.Int64) or a string; any other
 * stored type passes, and a missing property (NULL) does not.
 */
function conditionSql(condition: PropertyCondition, params: unknown[]): string {
  const op = sqlOperators[condition.operator];
  if (condition.kind === 'timestamp') {
    params.push(condition.value);
    return `ts ${op} ?`;
  }
  const path = `$."${condition.property}"`;
  if (condition.kind === 'string') {
    params.push(path, path, condition.value);
    return `(json_type(props, ?) <> 'text' OR props ->> ? ${op} ?)`;
  }
  const annotation = `$."${condition.property}@odata.type"`;
  params.push(path, path, condition.value, path, condition.value, annotation, path, condition.value);
  return `(CASE json_type(props, ?)
    WHEN 'integer' THEN props ->> ? ${op} ?
    WHEN 'real' THEN props ->> ? ${op} ?
    WHEN 'text' THEN props ->> ? IS NOT 'Edm.Int64' OR CAST(props ->> ? AS INTEGER) ${op} ?
    WHEN 'true' THEN 1
    WHEN 'false' THEN 1
    ELSE 0 END)`;
}

function keyOf(entity: Entity): { partitionKey: string; rowKey: string } {
  return { partitionKey: entity.partitionKey, rowKey: entity.rowKey };
}

function after(entity: Entity): KeyBound {
  return { ...keyOf(entity), inclusive: false };
}

function boundSql(bound: KeyBound, direction: '>' | '<', params: unknown[]): string {
  const op = bound.inclusive ? `${direction}=` : direction;
  params.push(encodeKey(bound.partitionKey));
  if (bound.rowKey === undefined) return `pk ${op} ?`;
  params.push(encodeKey(bound.rowKey));
  return `(pk, rk) ${op} (?, ?)`;
}
