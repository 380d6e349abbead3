// The PostgreSQL engine: any number of Cerulean processes over one database (schema.ts), with
// nothing cached in the process, so each sees every other's acknowledged writes at once.
//
// The parts: the connection, its pool and what failures mean (connection.ts, failures.ts);
// conditional writes (commit.ts, deciding in commit-plan.ts); point reads and lone writes that
// arrive together, grouped into one statement per kind (groups.ts); scan steps (scan.ts);
// settings (settings.ts); the statements themselves (sql.ts). This class holds them together
// and answers for tables.
import type { PathStore } from '../path-store.js';
import { PostgresPathStore } from './dfs/store.js';
import { performance } from 'node:perf_hooks';
import type { Entity } from '../../domain/entity.js';
import type { KeyRange } from '../../domain/keys.js';
import type {
  CommitObserver,
  CommitResult,
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
import { autoIndexRowsDefault } from '../property-index.js';
import { chunkBytesDefault } from './blob/content.js';
import { contentGraceMsDefault } from './blob/reclaim.js';
import { PostgresBlobStore, type PostgresBlobOptions } from './blob/store.js';
import { encodeKey, storableName, storedEntity } from './codec.js';
import { Committer, failed } from './commit.js';
import { PostgresConnection } from './connection.js';
import { EntityGroups } from './groups.js';
import { catalogRefreshMsDefault, PropertyIndexes } from './property-indexes.js';
import { Scanner, stepExamineMaxDefault } from './scan.js';
import { checkSchema, migrate } from './schema.js';
import type { LocatorEvents } from './locator.js';
import { PostgresQueueStore } from './queue-store.js';
import { getSetting, putSettings } from './settings.js';
import { createTableSql, deleteTableSql, getTableSql, listTablesSql, walPositionSql } from './sql.js';

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
  /** Hears once when the database goes out of reach and once when it is back (failures.ts Reachability). */
  readonly onReachability?: ((reachable: boolean, detail: string) => void) | undefined;
  /** Hears when the URL's hosts (hosts.ts) see a failover. */
  readonly locatorEvents?: LocatorEvents;
  /**
   * A store over a hot standby (the read-access secondary): no migration, no index builds. Its
   * writes fail in the database; the front door refuses them before they get there.
   */
  readonly readOnly?: boolean;
}

/** Where a database's write-ahead log stands (replication.ts compares a primary's and a standby's). */
export interface WalPosition {
  readonly inRecovery: boolean;
  /** The primary's current insert position, or the standby's last replayed one (bytes). */
  readonly lsn: bigint | undefined;
  /** A standby's: whether its WAL receiver is streaming from a primary now. */
  readonly streaming: boolean;
}

export class PostgresStore implements TableStore {
  private readonly groups: EntityGroups;
  private readonly committer: Committer;
  private readonly scanner: Scanner;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly connection: PostgresConnection,
    private readonly indexes: PropertyIndexes,
    stepExamineMax: number,
    private readonly onCommit: CommitObserver | undefined,
    private readonly readOnly: boolean,
  ) {
    this.groups = new EntityGroups(connection);
    this.committer = new Committer(connection, this.groups);
    this.scanner = new Scanner(connection, indexes, stepExamineMax);
  }

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const connection = PostgresConnection.create(options.url, options);
    const { pool } = connection;
    const refreshMs = options.indexCatalogRefreshMs ?? catalogRefreshMsDefault;
    const autoIndexRows = options.readOnly ? 0 : (options.autoIndexRows ?? autoIndexRowsDefault);
    const indexes = new PropertyIndexes(connection, autoIndexRows, refreshMs);
    try {
      const client = await pool.connect();
      try {
        await (options.readOnly ? checkSchema(client) : migrate(client));
        await indexes.load();
        client.release();
      } catch (error) {
        client.release(true);
        throw error;
      }
      const stepExamineMax = options.stepExamineMax ?? stepExamineMaxDefault;
      return new PostgresStore(connection, indexes, stepExamineMax, options.onCommit, options.readOnly === true);
    } catch (error) {
      await indexes.close();
      await connection.close();
      throw error;
    }
  }

  /** Statements each kind of grouped request went in, and the requests they carried (groups.ts). */
  groupCounts(): ReturnType<EntityGroups['counts']> {
    return this.groups.counts();
  }

  // -- tables ----------------------------------------------------------------------------------

  async createTable(account: string, name: string): Promise<'created' | 'exists'> {
    const startedMs = performance.now();
    const values = [account, name.toLowerCase(), name];
    const { rowCount } = await this.connection.query('write', { ...createTableSql, values });
    if (rowCount !== 1) return 'exists';
    this.committed(startedMs);
    return 'created';
  }

  async deleteTable(account: string, name: string): Promise<boolean> {
    if (!storableName(name)) return false;
    const startedMs = performance.now();
    // Its property indexes go after it, in the background.
    const values = [account, name.toLowerCase()];
    const { rows } = await this.connection.query<{ id: string }>('write', { ...deleteTableSql, values });
    if (rows.length !== 1) return false;
    this.committed(startedMs);
    this.indexes.deleted(account, name, rows[0]!.id);
    return true;
  }

  async getTable(account: string, name: string): Promise<TableInfo | undefined> {
    if (!storableName(name)) return undefined;
    const { rows } = await this.connection.query<{ name: string }>('read', {
      ...getTableSql,
      values: [account, name.toLowerCase()],
    });
    return rows[0] && { account, name: rows[0].name };
  }

  async listTables(account: string, fromLower: string | undefined, limit: number): Promise<TableInfo[]> {
    const values = [account, storableLowerBound(fromLower ?? ''), limit];
    const { rows } = await this.connection.query<{ name: string }>('read', { ...listTablesSql, values });
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
    const row = await this.groups.read({
      account,
      nameLower: name.toLowerCase(),
      pk: encodeKey(partitionKey),
      rk: encodeKey(rowKey),
    });
    if (row === undefined) return undefined;
    const entity = row.ts === null ? undefined : storedEntity(partitionKey, rowKey, BigInt(row.ts), row.doc, row.props);
    return { table: { account, name: row.name }, entity };
  }

  scan(table: TableInfo, range: KeyRange, request: ScanRequest): Promise<ScanStep> {
    return this.scanner.scan(table, range, request);
  }

  async commit(table: TableInfo, writes: readonly Write[]): Promise<CommitResult> {
    const startedMs = performance.now();
    const { result } = await this.committer.commit(table, writes);
    if (result.ok) this.committed(startedMs);
    return result;
  }

  async commitToTable(account: string, name: string, writes: readonly Write[]): Promise<TableCommit> {
    if (!storableName(name)) return { table: undefined, result: failed(0, 'tableNotFound') };
    const startedMs = performance.now();
    const { result, storedName } = await this.committer.commit({ account, name }, writes);
    if (result.ok) this.committed(startedMs);
    return { table: storedName === undefined ? undefined : { account, name: storedName }, result };
  }

  // -- settings --------------------------------------------------------------------------------

  getSetting(account: string, key: SettingKey): Promise<string | undefined> {
    return getSetting(this.connection, account, key);
  }

  async putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'> {
    const startedMs = performance.now();
    const result = await putSettings(this.connection, account, changes);
    if (result === 'ok') this.committed(startedMs);
    return result;
  }

  /** The Queue service's store over this store's database and pool; it fails once this store is closed. */
  openQueueStore(): PostgresQueueStore {
    return new PostgresQueueStore(this.connection.pool);
  }

  /** The path store (storage/path-store.ts) over this store's database and connection. */
  openPathStore(): PathStore {
    return new PostgresPathStore(this.connection);
  }

  /**
   * The Blob service's store over this store's database and connection (docs/blob-storage-postgres.md);
   * it fails once this store is closed. Tests make the chunks small and the grace short.
   */
  openBlobStore(options: Partial<Omit<PostgresBlobOptions, 'readersHoldContent'>> = {}): PostgresBlobStore {
    return new PostgresBlobStore(this.connection, {
      chunkBytes: options.chunkBytes ?? chunkBytesDefault,
      contentGraceMs: options.contentGraceMs ?? contentGraceMsDefault,
      // A standby cannot write: its readers have the grace alone.
      readersHoldContent: !this.readOnly,
    });
  }

  lastFailoverMs(): number | undefined {
    return this.connection.lastFailoverMs;
  }

  /** Where this database's write-ahead log stands (replication.ts). */
  async walPosition(): Promise<WalPosition> {
    const { rows } = await this.connection.query<{ recovery: boolean; lsn: string | null; streaming: boolean }>(
      'read',
      walPositionSql,
    );
    const row = rows[0]!;
    return {
      inRecovery: row.recovery,
      lsn: row.lsn === null ? undefined : lsnBytes(row.lsn),
      streaming: row.streaming,
    };
  }

  close(): Promise<void> {
    this.closing ??= this.indexes.close().then(() => this.connection.close());
    return this.closing;
  }

  private committed(startedMs: number): void {
    this.onCommit?.({ durationMs: performance.now() - startedMs, writes: 1 });
  }
}

/** A log sequence number `X/Y` (two hexadecimal 32-bit halves) as a byte position. */
function lsnBytes(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/**
 * A lower bound for table names that PostgreSQL text can hold. Table names are ASCII letters and
 * digits, so a bound with U+0000 ('abc\0...') admits the names that `abc\u0001` does: those
 * above 'abc'.
 */
function storableLowerBound(fromLower: string): string {
  const nul = fromLower.indexOf('\u0000');
  return nul === -1 ? fromLower : `${fromLower.slice(0, nul)}\u0001`;
}
