// The embedded default engine: one SQLite database in WAL mode, entities in one clustered
// WITHOUT ROWID index ordered by (table id, PartitionKey, RowKey); a table id stands for
// (account, table name) so that every index key stays short.
//
// Reads run here, on their own connection, and see every acknowledged write (WAL readers see
// the last commit). Writes go to the SqliteWriter: on a worker thread for an on-disk store, so that
// fsync never stalls the HTTP thread; inline on the same connection for an in-memory one.
import assert from 'node:assert/strict';
import { setImmediate as turnOfEventLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Entity } from '../../domain/entity.js';
import type { KeyRange } from '../../domain/keys.js';
import type {
  CommitObserver,
  CommitResult,
  DiskUsage,
  PropertyCondition,
  ScanRequest,
  ScanStep,
  SettingChange,
  SettingKey,
  TableStore,
  TableCommit,
  TableEntity,
  TableInfo,
  Write,
} from '../table-store.js';
import { getTableThenCommit } from '../table-calls.js';
import { encodeKey, StoredEntity } from './codec.js';
import { autoIndexRowsDefault, IndexDemand, indexedEquality, indexServing } from '../property-index.js';
import { addIndex, listIndexes } from './property-indexes.js';
import { RangeReader, stepExamineMaxDefault, stepRowsMax, type RowStep } from './range-reader.js';
import { ScanPool } from './scan-pool.js';
import { SplitScanner } from './split-scan.js';
import type { ScanSplit } from '../scan-split.js';
import { boundLimit, databaseFile, openDatabase, selectTableSql, settingRow, tableCacheKey } from './schema.js';
import { DiskContent, MemoryContent } from './blob/content.js';
import { SqliteBlobStore, type BlobStoresShared, type SqliteBlobStoreOptions } from './blob/store.js';
import { SqliteQueueStore } from './queue-store.js';
import { WorkerWriterClient } from './writer-client.js';
import type { PathStore } from '../path-store.js';
import { encodeWrites, SqliteWriter, type WriterApi } from './writer.js';

export interface SqliteStoreOptions {
  /** Directory for the database files; undefined keeps everything in memory. */
  readonly location: string | undefined;
  /** Rows one conditional scan step may examine (tests make it tiny to reach window edges). */
  readonly stepExamineMax?: number;
  /** Hears of every durable group commit (metrics). */
  readonly onCommit?: CommitObserver | undefined;
  /** When a conditional step runs on two scan threads at once (SplitScanner); default auto. */
  readonly scanSplit?: ScanSplit | undefined;
  /** Rows a table's scans examine for one property before it is indexed (property-index.ts); 0 never. */
  readonly autoIndexRows?: number | undefined;
}

type Statement = Database.Statement<unknown[], unknown>;

interface CachedTable {
  readonly info: TableInfo;
  readonly id: number;
}

export class SqliteStore implements TableStore {
  /** Tables by account and lower-cased name. Every change to tables passes through this process. */
  private readonly tables = new Map<string, CachedTable>();
  private readonly reader: RangeReader;
  /** Conditional steps on the scan threads (`pool`), split across two of them when they idle. */
  private readonly scans: Promise<SplitScanner> | undefined;
  private readonly selectTable: Statement;
  private readonly selectTables: Statement;
  private readonly selectEntity: Statement;
  private readonly selectSetting: Statement;
  private closed = false;
  /** What the blob stores of this database share, once one is opened. */
  private blobStores: Promise<BlobStoresShared> | undefined;
  /** The property indexes (property-indexes.ts) by table id: the writer builds them, scans use them. */
  private readonly indexes: Map<number, Set<string>>;
  private readonly indexDemand: IndexDemand;
  /** The shared read snapshot (see read()); only where the writer has a connection of its own. */
  private readonly snapshot: { readonly begin: Statement; readonly end: Statement; open: boolean } | undefined;

  private constructor(
    private readonly db: Database.Database,
    private readonly writer: WriterApi & { close(): Promise<void> },
    /**
     * Scan threads of an on-disk store, still starting while the server begins to listen; an
     * in-memory database has only this connection.
     */
    private readonly pool: Promise<ScanPool> | undefined,
    scanSplit: ScanSplit,
    private readonly stepExamineMax: number,
    /** The database file; undefined in memory. */
    private readonly file: string | undefined,
    autoIndexRows: number,
  ) {
    this.reader = new RangeReader(db);
    this.indexes = listIndexes(db);
    this.indexDemand = new IndexDemand(autoIndexRows);
    this.scans = pool?.then((threads) => new SplitScanner(threads, this.reader, scanSplit));
    this.scans?.catch(() => undefined);
    this.selectTable = db.prepare(selectTableSql);
    this.selectTables = db.prepare(
      `SELECT name FROM tables WHERE account = ? AND name_lower >= ? ORDER BY name_lower ${boundLimit()}`,
    );
    // The keys are known: reading their blobs back would cost two Buffers per read.
    this.selectEntity = db
      .prepare('SELECT ts, json(props) FROM entities WHERE table_id = ? AND pk = ? AND rk = ?')
      .safeIntegers(true)
      .raw(true);
    this.selectSetting = db.prepare('SELECT value FROM settings WHERE account = ? AND scope = ? AND name = ?');
    this.snapshot =
      file === undefined ? undefined : { begin: db.prepare('BEGIN'), end: db.prepare('COMMIT'), open: false };
  }

  /**
   * Point reads share one read transaction until this process acknowledges a write: in WAL mode
   * each read transaction takes and drops a lock with two fcntl calls, which cost about as much as
   * the lookup. Every answer of the writer ends the shared transaction before its caller hears
   * of it (afterWrite), so a read that starts after an acknowledgement sees that write; and the
   * store serves one process (docs/postgresql.md), so no other acknowledges writes behind its back.
   */
  private read<T>(lookup: () => T): T {
    if (this.snapshot !== undefined && !this.snapshot.open) {
      this.snapshot.begin.run();
      this.snapshot.open = true;
    }
    return lookup();
  }

  /** Ends the shared read transaction once the writer has answered `written`. */
  private afterWrite<T>(written: Promise<T>): Promise<T> {
    return written.finally(() => {
      if (this.snapshot?.open === true && this.db.open) {
        this.snapshot.open = false;
        this.snapshot.end.run();
      }
    });
  }

  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    const examineMax = options.stepExamineMax ?? stepExamineMaxDefault;
    const autoIndexRows = options.autoIndexRows ?? autoIndexRowsDefault;
    assert(Number.isSafeInteger(examineMax) && examineMax >= 1, 'a scan step examines at least one row');
    if (options.location === undefined) {
      const db = openDatabase(':memory:', 'writer');
      const writer = new SqliteWriter(db, options.onCommit);
      return new SqliteStore(
        db,
        Object.assign(writer, { close: async () => writer.drain() }),
        undefined,
        'auto',
        examineMax,
        undefined,
        autoIndexRows,
      );
    }
    const file = databaseFile(options.location);
    const writer = await WorkerWriterClient.start(file, options.onCommit);
    // The writer has created the schema the scan threads read. A pool that fails to start fails
    // every scan that needs it, with the reason.
    const scans = ScanPool.start(file);
    scans.catch(() => undefined);
    return new SqliteStore(
      openDatabase(file, 'reader'),
      writer,
      scans,
      options.scanSplit ?? 'auto',
      examineMax,
      file,
      autoIndexRows,
    );
  }

  // -- tables ----------------------------------------------------------------------------------

  createTable(account: string, name: string): Promise<'created' | 'exists'> {
    return this.afterWrite(this.writer.createTable(account, name));
  }

  async deleteTable(account: string, name: string): Promise<boolean> {
    const key = tableCacheKey(account, name);
    const id = this.cachedTable(account, name)?.id;
    this.tables.delete(key);
    const deleted = await this.afterWrite(this.writer.deleteTable(account, name));
    this.tables.delete(key);
    // The writer dropped the table's indexes with it.
    if (id !== undefined) this.indexes.delete(id);
    this.indexDemand.forget(key);
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
    return id === undefined ? undefined : this.readEntity(id, partitionKey, rowKey);
  }

  async getTableEntity(
    account: string,
    name: string,
    partitionKey: string,
    rowKey: string,
  ): Promise<TableEntity | undefined> {
    const table = this.cachedTable(account, name);
    return table && { table: table.info, entity: this.readEntity(table.id, partitionKey, rowKey) };
  }

  private readEntity(tableId: number, partitionKey: string, rowKey: string): Entity | undefined {
    const row = this.read(() => this.selectEntity.get(tableId, encodeKey(partitionKey), encodeKey(rowKey))) as
      [bigint, string] | undefined;
    return row === undefined ? undefined : new StoredEntity(partitionKey, rowKey, ...row);
  }

  async scan(table: TableInfo, range: KeyRange, { conditions, limit }: ScanRequest): Promise<ScanStep> {
    const id = this.cachedTable(table.account, table.name)?.id;
    if (id === undefined) return { entities: [], examined: 0, bytes: 0, next: undefined };
    // Without conditions every row read is returned: cheaper here than copied across threads.
    const scans = this.scans;
    const onThisThread = scans === undefined || conditions.length === 0;
    const indexes = this.indexes.get(id);
    const indexed =
      conditions.length === 0 ? undefined : indexServing(conditions, (property) => indexes?.has(property) === true);
    const step = await this.scanStep(onThisThread, [id, range, conditions, limit, this.stepExamineMax, indexed]);
    if (conditions.length > 0 && indexed === undefined)
      this.noteIndexDemand(table, conditions, step.examined, indexes?.size ?? 0);
    let bytes = 0;
    const entities = step.rows.map(([partitionKey, rowKey, timestamp, json, size]) => {
      bytes += size;
      return new StoredEntity(partitionKey, rowKey, timestamp, json);
    });
    // A scan the query cannot filter here may read many full steps in a row on this thread:
    // other requests get their turn between them (a short page needs no turn).
    if (onThisThread && step.next !== undefined && step.examined >= stepRowsMax) await turnOfEventLoop();
    return { entities, examined: step.examined, bytes, next: step.next };
  }

  private async scanStep(onThisThread: boolean, args: Parameters<RangeReader['scan']>): Promise<RowStep> {
    try {
      return onThisThread ? this.reader.scan(...args) : await (await this.scans!).scan(...args);
    } catch (error) {
      // The table was deleted, and its index dropped, while the step was on its way: the plain
      // scan finds what is left of the table (nothing, or a table created since under its id).
      if (args[5] === undefined) throw error;
      return this.scanStep(onThisThread, [args[0], args[1], args[2], args[3], args[4], undefined]);
    }
  }

  /**
   * Counts a step no index served toward an index of its conditions' property (IndexDemand), and
   * has the writer build it when due.
   */
  private noteIndexDemand(
    table: TableInfo,
    conditions: readonly PropertyCondition[],
    examined: number,
    indexes: number,
  ): void {
    const property = indexedEquality(conditions)?.property;
    const key = tableCacheKey(table.account, table.name);
    if (property === undefined || this.closed || !this.indexDemand.note(key, property, examined, indexes)) return;
    // No request waits for the build; later steps use the index once the writer has it.
    this.writer.createIndex(table.account, table.name, property).then(
      (id) => {
        if (id !== undefined) addIndex(this.indexes, id, property);
      },
      () => this.indexDemand.failed(key, property),
    );
  }

  commit(table: TableInfo, writes: readonly Write[]): Promise<CommitResult> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return this.afterWrite(this.writer.commit(table.account, table.name, encodeWrites(writes)));
  }

  commitToTable(account: string, name: string, writes: readonly Write[]): Promise<TableCommit> {
    return getTableThenCommit(this, account, name, writes);
  }

  // -- settings --------------------------------------------------------------------------------

  async getSetting(account: string, key: SettingKey): Promise<string | undefined> {
    const { scope, name } = settingRow(key);
    const row = this.selectSetting.get(account, scope, name) as { value: string } | undefined;
    return row?.value;
  }

  putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return this.afterWrite(this.writer.putSettings(account, changes));
  }

  /**
   * The Queue service's store over this database and its writer; on disk with a read connection
   * of its own (SqliteQueueStore.close closes it). Its writes fail once this store is closed.
   */
  openQueueStore(): SqliteQueueStore {
    if (this.file === undefined) return new SqliteQueueStore(this.db, this.writer.queues, false);
    return new SqliteQueueStore(openDatabase(this.file, 'scanner'), this.writer.queues, true);
  }

  /**
   * The path store (storage/path-store.ts): its renames and tree deletes are jobs of this
   * database's writer (sqlite/dfs/writer.ts).
   */
  openPathStore(): PathStore {
    const paths = this.writer.paths;
    return { renamePath: (...args) => paths.renamePath(...args), deleteTree: (...args) => paths.deleteTree(...args) };
  }

  /**
   * The Blob service's store over this database and its writer, its content in files beside the
   * database (`<location>/blobs`, blob-content.ts) and small content in rows (sqlite/blob/inline.ts), or in
   * memory; on disk with a read connection of its own (SqliteBlobStore.close closes it).
   */
  async openBlobStore(options: SqliteBlobStoreOptions = {}): Promise<SqliteBlobStore> {
    // Every blob store of this database has the same content and sees the others' readers.
    this.blobStores ??= (
      this.file === undefined ? Promise.resolve(new MemoryContent()) : DiskContent.open(path.dirname(this.file))
    ).then((content) => ({ content, readers: new Map() }));
    const shared = await this.blobStores;
    // In memory, content is in memory either way: a map holds it at less cost than the database.
    if (this.file === undefined)
      return new SqliteBlobStore(this.db, this.writer.blobs, shared, false, { ...options, inlineBytesMax: 0 });
    const reader = openDatabase(this.file, 'scanner');
    return new SqliteBlobStore(reader, this.writer.blobs, shared, true, options);
  }

  /** The database file and its write-ahead log (`-wal`), as they are now. */
  async sizeOnDisk(): Promise<DiskUsage | undefined> {
    if (this.file === undefined) return undefined;
    const size = (path: string): Promise<number> =>
      stat(path).then(
        (info) => info.size,
        () => 0,
      );
    const [dataBytes, logBytes] = await Promise.all([size(this.file), size(`${this.file}-wal`)]);
    return { dataBytes, logBytes };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([
      this.writer.close(),
      this.pool?.then(
        (threads) => threads.close(),
        () => undefined,
      ),
    ]);
    if (this.db.open) this.db.close();
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
