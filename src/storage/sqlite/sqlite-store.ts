// The embedded default engine: one SQLite database in WAL mode with one clustered
// WITHOUT ROWID index per kind of row. Entities are ordered by (table id, PartitionKey, RowKey);
// a table id stands for (account, table name) so that every key of the index stays short.
//
// Durability: synchronous=FULL makes every COMMIT fsync the WAL before it returns, and a write's
// promise resolves only after that. Commits that arrive together share one transaction and one
// fsync (group commit): they queue until the next turn of the event loop, then run each inside
// its own SAVEPOINT so a failed condition undoes only that commit.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Entity } from '../../protocol/edm.js';
import type { CommitResult, KeyBound, KeyRange, Store, TableInfo, Write } from '../store.js';
import { CommitClock, resolveWrite, type StoredVersion } from '../write.js';
import { decodeKey, decodeProperties, encodeKey, encodeProperties } from './codec.js';

export interface SqliteStoreOptions {
  /** Directory for the database files; undefined keeps everything in memory. */
  readonly location: string | undefined;
}

const databaseFileName = 'cerulean.sqlite';

const schema = `
CREATE TABLE IF NOT EXISTS tables (
  account TEXT NOT NULL,
  name_lower TEXT NOT NULL,
  name TEXT NOT NULL,
  id INTEGER NOT NULL UNIQUE,
  PRIMARY KEY (account, name_lower)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entities (
  table_id INTEGER NOT NULL,
  pk BLOB NOT NULL,
  rk BLOB NOT NULL,
  ts INTEGER NOT NULL,
  props TEXT NOT NULL,
  PRIMARY KEY (table_id, pk, rk)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
`;

interface EntityRow {
  pk: Buffer;
  rk: Buffer;
  ts: bigint;
  props: string;
}

interface PendingCommit {
  readonly table: TableInfo;
  readonly writes: readonly Write[];
  readonly resolve: (result: CommitResult) => void;
  readonly reject: (error: unknown) => void;
}

type Statement = Database.Statement<unknown[], unknown>;

export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly clock: CommitClock;
  private readonly tableIds = new Map<string, number>();
  private readonly scanStatements = new Map<string, Statement>();
  private pending: PendingCommit[] = [];
  private flushScheduled = false;
  private closed = false;

  private readonly selectTable: Statement;
  private readonly selectTables: Statement;
  private readonly insertTable: Statement;
  private readonly deleteTableRow: Statement;
  private readonly deleteTableEntities: Statement;
  private readonly nextTableId: Statement;
  private readonly selectEntity: Statement;
  private readonly upsertEntity: Statement;
  private readonly deleteEntity: Statement;
  private readonly saveClock: Statement;

  constructor(options: SqliteStoreOptions) {
    let file = ':memory:';
    if (options.location !== undefined) {
      fs.mkdirSync(options.location, { recursive: true });
      file = path.join(options.location, databaseFileName);
    }
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = OFF');
    this.db.pragma('cache_size = -65536'); // 64 MiB page cache: bounded whatever the data size
    this.db.exec(schema);

    this.selectTable = this.db.prepare('SELECT name, id FROM tables WHERE account = ? AND name_lower = ?');
    this.selectTables = this.db.prepare(
      'SELECT name FROM tables WHERE account = ? AND name_lower >= ? ORDER BY name_lower LIMIT ?',
    );
    this.insertTable = this.db.prepare('INSERT INTO tables (account, name_lower, name, id) VALUES (?, ?, ?, ?)');
    this.deleteTableRow = this.db.prepare('DELETE FROM tables WHERE account = ? AND name_lower = ?');
    this.deleteTableEntities = this.db.prepare('DELETE FROM entities WHERE table_id = ?');
    this.nextTableId = this.db.prepare('SELECT coalesce(max(id), 0) + 1 AS id FROM tables');
    this.selectEntity = this.db
      .prepare('SELECT pk, rk, ts, props FROM entities WHERE table_id = ? AND pk = ? AND rk = ?')
      .safeIntegers(true);
    this.upsertEntity = this.db.prepare(
      'INSERT OR REPLACE INTO entities (table_id, pk, rk, ts, props) VALUES (?, ?, ?, ?, ?)',
    );
    this.deleteEntity = this.db.prepare('DELETE FROM entities WHERE table_id = ? AND pk = ? AND rk = ?');
    this.saveClock = this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('clock', ?)");
    const savedClock = this.db.prepare("SELECT value FROM meta WHERE key = 'clock'").safeIntegers(true).get() as
      | { value: bigint }
      | undefined;
    this.clock = new CommitClock(savedClock?.value ?? 0n);
  }

  // -- tables ----------------------------------------------------------------------------------

  async createTable(account: string, name: string): Promise<'created' | 'exists'> {
    const lower = name.toLowerCase();
    const created = this.db.transaction(() => {
      if (this.selectTable.get(account, lower) !== undefined) return false;
      const { id } = this.nextTableId.get() as { id: number };
      this.insertTable.run(account, lower, name, id);
      return true;
    })();
    return created ? 'created' : 'exists';
  }

  async deleteTable(account: string, name: string): Promise<boolean> {
    const lower = name.toLowerCase();
    const deleted = this.db.transaction(() => {
      const row = this.selectTable.get(account, lower) as { id: number } | undefined;
      if (row === undefined) return false;
      this.deleteTableEntities.run(row.id);
      this.deleteTableRow.run(account, lower);
      return true;
    })();
    this.tableIds.delete(tableCacheKey(account, lower));
    return deleted;
  }

  async getTable(account: string, name: string): Promise<TableInfo | undefined> {
    const row = this.selectTable.get(account, name.toLowerCase()) as { name: string } | undefined;
    return row === undefined ? undefined : { account, name: row.name };
  }

  async listTables(account: string, fromLower: string | undefined, limit: number): Promise<TableInfo[]> {
    const rows = this.selectTables.all(account, fromLower ?? '', limit) as { name: string }[];
    return rows.map((row) => ({ account, name: row.name }));
  }

  // -- entities --------------------------------------------------------------------------------

  async getEntity(table: TableInfo, partitionKey: string, rowKey: string): Promise<Entity | undefined> {
    const id = this.tableId(table);
    if (id === undefined) return undefined;
    const row = this.selectEntity.get(id, encodeKey(partitionKey), encodeKey(rowKey)) as EntityRow | undefined;
    return row === undefined ? undefined : { partitionKey, rowKey, timestamp: row.ts, properties: decodeProperties(row.props) };
  }

  async scan(table: TableInfo, range: KeyRange, limit: number): Promise<Entity[]> {
    const id = this.tableId(table);
    if (id === undefined || limit <= 0) return [];
    const params: unknown[] = [id];
    const sql = scanSql(range, params);
    params.push(limit);
    let statement = this.scanStatements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql).safeIntegers(true);
      this.scanStatements.set(sql, statement);
    }
    const rows = statement.all(...params) as EntityRow[];
    return rows.map(toEntity);
  }

  commit(table: TableInfo, writes: readonly Write[]): Promise<CommitResult> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return new Promise((resolve, reject) => {
      this.pending.push({ table, writes, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.db.close();
  }

  // -- internals -------------------------------------------------------------------------------

  private tableId(table: TableInfo): number | undefined {
    const lower = table.name.toLowerCase();
    const key = tableCacheKey(table.account, lower);
    let id = this.tableIds.get(key);
    if (id === undefined) {
      const row = this.selectTable.get(table.account, lower) as { id: number } | undefined;
      if (row === undefined) return undefined;
      id = row.id;
      this.tableIds.set(key, id);
    }
    return id;
  }

  /** Runs every queued commit in one transaction: one fsync for all of them. */
  private flush(): void {
    this.flushScheduled = false;
    const group = this.pending;
    this.pending = [];
    if (group.length === 0) return;
    const results: CommitResult[] = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const commit of group) {
        this.db.exec('SAVEPOINT one_commit');
        const result = this.applyCommit(commit);
        if (!result.ok) this.db.exec('ROLLBACK TO one_commit');
        this.db.exec('RELEASE one_commit');
        results.push(result);
      }
      this.saveClock.run(this.clock.last);
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const commit of group) commit.reject(error);
      return;
    }
    group.forEach((commit, i) => commit.resolve(results[i]!));
  }

  private applyCommit({ table, writes }: PendingCommit): CommitResult {
    const id = this.tableId(table);
    if (id === undefined) return { ok: false, index: 0, failure: 'tableNotFound' };
    const keys = writes.map((write) => [encodeKey(write.partitionKey), encodeKey(write.rowKey)] as const);
    const outcomes = [];
    let newestPrevious = 0n;
    for (let i = 0; i < writes.length; i++) {
      const [pk, rk] = keys[i]!;
      const row = this.selectEntity.get(id, pk, rk) as EntityRow | undefined;
      const current: StoredVersion | undefined =
        row === undefined ? undefined : { timestamp: row.ts, properties: decodeProperties(row.props) };
      if (current !== undefined && current.timestamp > newestPrevious) newestPrevious = current.timestamp;
      const outcome = resolveWrite(current, writes[i]!);
      if (!outcome.ok) return { ok: false, index: i, failure: outcome.failure };
      outcomes.push(outcome.properties);
    }
    // One Timestamp for the whole commit, later than any version it replaces (data-model.md §4).
    const timestamp = this.clock.next(newestPrevious);
    for (let i = 0; i < writes.length; i++) {
      const [pk, rk] = keys[i]!;
      const properties = outcomes[i]!;
      if (properties === null) this.deleteEntity.run(id, pk, rk);
      else this.upsertEntity.run(id, pk, rk, timestamp, encodeProperties(properties));
    }
    return { ok: true, timestamp };
  }
}

function tableCacheKey(account: string, lower: string): string {
  return `${account}\u0000${lower}`;
}

function toEntity(row: EntityRow): Entity {
  return {
    partitionKey: decodeKey(row.pk),
    rowKey: decodeKey(row.rk),
    timestamp: row.ts,
    properties: decodeProperties(row.props),
  };
}

/** The SELECT for a key range; pushes its parameters after the table id. Row values keep it one index seek. */
function scanSql(range: KeyRange, params: unknown[]): string {
  const where = ['table_id = ?'];
  if (range.lower !== undefined) where.push(boundSql(range.lower, '>', params));
  if (range.upper !== undefined) where.push(boundSql(range.upper, '<', params));
  return `SELECT pk, rk, ts, props FROM entities WHERE ${where.join(' AND ')} ORDER BY pk, rk LIMIT ?`;
}

function boundSql(bound: KeyBound, direction: '>' | '<', params: unknown[]): string {
  const op = bound.inclusive ? `${direction}=` : direction;
  params.push(encodeKey(bound.partitionKey));
  if (bound.rowKey === undefined) return `pk ${op} ?`;
  params.push(encodeKey(bound.rowKey));
  return `(pk, rk) ${op} (?, ?)`;
}
