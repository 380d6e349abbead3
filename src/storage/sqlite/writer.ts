// The writing side of the SQLite engine. Every change goes through one queue: jobs that arrive
// together run in one transaction with one fsync (group commit), each inside its own SAVEPOINT so
// a failed condition undoes only that job. It runs on a worker thread for an on-disk store (the
// fsync never blocks the HTTP thread) and inline for an in-memory one.
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import { performance } from 'node:perf_hooks';
import type { CommitObserver, CommitResult, SettingChange, Write, WriteCondition } from '../table-store.js';
import { CommitClock, conditionFailure, mergeProperties } from '../write.js';
import { decodeProperties, encodeKey, encodeProperties } from './codec.js';
import { createIndexSql, indexName, listIndexes } from './property-indexes.js';
import { SqliteBlobWriter, type BlobWriterApi } from './blob/writer.js';
import { SqlitePathWriter, type PathWriterApi } from './dfs/writer.js';
import { SqliteQueueWriter, type QueueWriterApi } from './queue-writer.js';
import { selectTableSql, settingRow, tableCacheKey } from './schema.js';

/**
 * Writes on their way to the writer, properties already in the stored form, flattened into one
 * array of five slots a write (partitionKey, rowKey, condition, action, properties): a structured
 * clone of one array of strings costs a fraction of one of nested objects per write. The
 * condition slot is its kind, or the version's ticks; a delete's properties slot is ''.
 */
export type EncodedWrites = readonly (string | bigint)[];
const slotsPerWrite = 5;

export function encodeWrites(writes: readonly Write[]): EncodedWrites {
  const flat: (string | bigint)[] = [];
  for (const { partitionKey, rowKey, condition, action } of writes) {
    const properties = action.kind === 'delete' ? '' : (action.stored?.json ?? encodeProperties(action.properties));
    flat.push(
      partitionKey,
      rowKey,
      condition.kind === 'version' ? condition.timestamp : condition.kind,
      action.kind,
      properties,
    );
  }
  return flat;
}

interface EncodedWrite {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly condition: WriteCondition;
  readonly action: 'put' | 'merge' | 'delete';
  /** Stored form ('' for a delete). */
  readonly properties: string;
}

function encodedWrite(writes: EncodedWrites, index: number): EncodedWrite {
  const at = index * slotsPerWrite;
  const condition = writes[at + 2]!;
  return {
    partitionKey: writes[at] as string,
    rowKey: writes[at + 1] as string,
    condition:
      typeof condition === 'bigint'
        ? { kind: 'version', timestamp: condition }
        : ({ kind: condition } as WriteCondition),
    action: writes[at + 3] as EncodedWrite['action'],
    properties: writes[at + 4] as string,
  };
}

/** Everything the writer does; the worker host dispatches messages to these by name. */
export interface WriterApi {
  commit(account: string, table: string, writes: EncodedWrites): Promise<CommitResult>;
  createTable(account: string, name: string): Promise<'created' | 'exists'>;
  deleteTable(account: string, name: string): Promise<boolean>;
  /** Builds the property index of a table (property-indexes.ts); its table id, or undefined without the table. */
  createIndex(account: string, name: string, property: string): Promise<number | undefined>;
  putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'>;
  /** The Queue service's writes, jobs of the same group commits (queue-writer.ts). */
  readonly queues: QueueWriterApi;
  /** The Blob service's record writes, jobs of the same group commits (sqlite/blob/writer.ts). */
  readonly blobs: BlobWriterApi;
  /** The path store's renames, jobs of the same group commits (sqlite/dfs/writer.ts). */
  readonly paths: PathWriterApi;
}

interface Job {
  /** Runs inside the group's transaction; `undo` asks for its savepoint to be rolled back. */
  readonly run: () => { readonly result: unknown; readonly undo: boolean };
  /** False for a job that never asks for an undo (queue jobs): it runs without a savepoint. */
  readonly savepoint: boolean;
  readonly resolve: (result: never) => void;
  readonly reject: (error: unknown) => void;
}

type Statement = Database.Statement<unknown[], unknown>;

interface StoredVersion {
  ts: bigint;
}

export class SqliteWriter implements WriterApi {
  private readonly clock: CommitClock;
  /** The clock as the database holds it: a group that took no Timestamp (queue jobs) leaves it be. */
  private savedClock: bigint;
  readonly queues: SqliteQueueWriter;
  readonly blobs: SqliteBlobWriter;
  readonly paths: SqlitePathWriter;
  private readonly tableIds = new Map<string, number>();
  private queue: Job[] = [];
  private flushScheduled = false;
  private readonly sql: Record<
    | 'selectTable'
    | 'insertTable'
    | 'deleteTableRow'
    | 'deleteTableEntities'
    | 'deleteTableSettings'
    | 'nextTableId'
    | 'selectTimestamp'
    | 'selectProperties'
    | 'upsertEntity'
    | 'deleteEntity'
    | 'upsertSetting'
    | 'deleteSetting'
    | 'saveClock'
    | 'begin'
    | 'commit'
    | 'savepoint'
    | 'rollbackToSavepoint'
    | 'releaseSavepoint',
    Statement
  >;

  /** `onCommit` hears of every group commit, once it is durable. */
  constructor(
    private readonly db: Database.Database,
    private readonly onCommit?: CommitObserver,
  ) {
    const prepare = (sql: string): Statement => db.prepare(sql);
    this.sql = {
      selectTable: prepare(selectTableSql),
      insertTable: prepare('INSERT INTO tables (account, name_lower, name, id) VALUES (?, ?, ?, ?)'),
      deleteTableRow: prepare('DELETE FROM tables WHERE account = ? AND name_lower = ?'),
      deleteTableEntities: prepare('DELETE FROM entities WHERE table_id = ?'),
      deleteTableSettings: prepare("DELETE FROM settings WHERE account = ? AND scope = 'table' AND name = ?"),
      nextTableId: prepare('SELECT coalesce(max(id), 0) + 1 AS id FROM tables'),
      selectTimestamp: prepare('SELECT ts FROM entities WHERE table_id = ? AND pk = ? AND rk = ?').safeIntegers(true),
      selectProperties: prepare('SELECT json(props) AS props FROM entities WHERE table_id = ? AND pk = ? AND rk = ?'),
      // An update in place, not REPLACE's delete and insert: on a table with a property index
      // (property-indexes.ts) that costs a third as much, and no more without one.
      upsertEntity: prepare(
        'INSERT INTO entities (table_id, pk, rk, ts, props) VALUES (?, ?, ?, ?, jsonb(?)) ' +
          'ON CONFLICT (table_id, pk, rk) DO UPDATE SET ts = excluded.ts, props = excluded.props',
      ),
      deleteEntity: prepare('DELETE FROM entities WHERE table_id = ? AND pk = ? AND rk = ?'),
      upsertSetting: prepare('INSERT OR REPLACE INTO settings (account, scope, name, value) VALUES (?, ?, ?, ?)'),
      deleteSetting: prepare('DELETE FROM settings WHERE account = ? AND scope = ? AND name = ?'),
      saveClock: prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('clock', ?)"),
      begin: prepare('BEGIN IMMEDIATE'),
      commit: prepare('COMMIT'),
      savepoint: prepare('SAVEPOINT job'),
      rollbackToSavepoint: prepare('ROLLBACK TO job'),
      releaseSavepoint: prepare('RELEASE job'),
    };
    const saved = db.prepare("SELECT value FROM meta WHERE key = 'clock'").safeIntegers(true).get() as
      { value: bigint } | undefined;
    // The clock resumes after the last Timestamp ever written, even if the wall clock went back.
    this.clock = new CommitClock(saved?.value ?? 0n);
    this.savedClock = this.clock.last;
    // Queue and blob jobs never undo (they decide before they write), so they need no savepoint.
    const runJob = <T>(job: () => T): Promise<T> => this.enqueue(() => ({ result: job(), undo: false }), false);
    this.queues = new SqliteQueueWriter(db, runJob);
    this.blobs = new SqliteBlobWriter(db, runJob);
    this.paths = new SqlitePathWriter(db, runJob);
  }

  commit(account: string, table: string, writes: EncodedWrites): Promise<CommitResult> {
    return this.enqueue(() => {
      const result = this.applyCommit(account, table, writes);
      return { result, undo: !result.ok };
    });
  }

  createTable(account: string, name: string): Promise<'created' | 'exists'> {
    return this.enqueue(() => {
      const lower = name.toLowerCase();
      if (this.sql.selectTable.get(account, lower) !== undefined) return { result: 'exists', undo: false };
      const { id } = this.sql.nextTableId.get() as { id: number };
      this.sql.insertTable.run(account, lower, name, id);
      return { result: 'created', undo: false };
    });
  }

  deleteTable(account: string, name: string): Promise<boolean> {
    return this.enqueue(() => {
      const lower = name.toLowerCase();
      const row = this.sql.selectTable.get(account, lower) as { id: number } | undefined;
      this.tableIds.delete(tableCacheKey(account, name));
      if (row === undefined) return { result: false, undo: false };
      // Its indexes first: they need no upkeep while its rows go, and its id may be reused.
      for (const property of listIndexes(this.db).get(row.id) ?? [])
        this.db.exec(`DROP INDEX ${indexName(row.id, property)}`);
      this.sql.deleteTableEntities.run(row.id);
      this.sql.deleteTableSettings.run(account, lower);
      this.sql.deleteTableRow.run(account, lower);
      return { result: true, undo: false };
    });
  }

  createIndex(account: string, name: string, property: string): Promise<number | undefined> {
    return this.enqueue(() => {
      const row = this.sql.selectTable.get(account, name.toLowerCase()) as { id: number } | undefined;
      // One pass over the table's rows (about a second per million), in the group's transaction.
      if (row !== undefined) this.db.exec(createIndexSql(row.id, property));
      return { result: row?.id, undo: false };
    });
  }

  putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'> {
    return this.enqueue(() => {
      // Checked in the same transaction: a table deleted meanwhile cannot keep a setting.
      const missingTable = changes.some(
        ({ key }) => key.scope === 'table' && this.sql.selectTable.get(account, key.table.toLowerCase()) === undefined,
      );
      if (missingTable) return { result: 'tableNotFound', undo: false };
      for (const { key, value } of changes) {
        const { scope, name } = settingRow(key);
        if (value === undefined) this.sql.deleteSetting.run(account, scope, name);
        else this.sql.upsertSetting.run(account, scope, name, value);
      }
      return { result: 'ok', undo: false };
    });
  }

  /** Runs what is still queued; the caller closes the database afterwards. */
  drain(): void {
    this.flush();
  }

  private enqueue<T>(run: Job['run'], savepoint = true): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, savepoint, resolve: resolve as (result: never) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** One transaction, one fsync, for every job queued since the last flush. */
  private flush(): void {
    this.flushScheduled = false;
    const group = this.queue;
    this.queue = [];
    if (group.length === 0) return;
    const results: unknown[] = [];
    const startedMs = performance.now();
    try {
      this.sql.begin.run();
      for (const job of group) results.push(this.runJob(job));
      // Writing the clock's row only when it moved spares a queue-only group one page of log.
      const clock = this.clock.last;
      if (clock !== this.savedClock) this.sql.saveClock.run(clock);
      this.sql.commit.run();
      this.savedClock = clock;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.tableIds.clear();
      for (const job of group) job.reject(error);
      return;
    }
    this.onCommit?.({ durationMs: performance.now() - startedMs, writes: group.length });
    group.forEach((job, i) => job.resolve(results[i] as never));
  }

  /** One job inside the group's transaction, in a savepoint of its own if it may need undoing. */
  private runJob(job: Job): unknown {
    if (!job.savepoint) {
      const { result, undo } = job.run();
      assert(!undo, 'a job without a savepoint has nothing to undo');
      return result;
    }
    this.sql.savepoint.run();
    const { result, undo } = job.run();
    if (undo) this.sql.rollbackToSavepoint.run();
    this.sql.releaseSavepoint.run();
    return result;
  }

  private applyCommit(account: string, table: string, writes: EncodedWrites): CommitResult {
    const id = this.tableId(account, table);
    if (id === undefined) return { ok: false, index: 0, failure: 'tableNotFound' };
    const rows: { pk: Buffer; rk: Buffer; props: string | null }[] = [];
    let newestPrevious = 0n;
    for (let index = 0; index < writes.length / slotsPerWrite; index++) {
      const write = encodedWrite(writes, index);
      const pk = encodeKey(write.partitionKey);
      const rk = encodeKey(write.rowKey);
      const current = this.sql.selectTimestamp.get(id, pk, rk) as StoredVersion | undefined;
      if (current !== undefined && current.ts > newestPrevious) newestPrevious = current.ts;
      const failure = conditionFailure(current?.ts, write.condition);
      if (failure !== undefined) return { ok: false, index, failure };
      const props = this.nextProperties(write, current && (() => this.storedProperties(id, pk, rk)));
      if (props === 'notFound' || props === 'entityTooLarge' || props === 'tooManyProperties') {
        return { ok: false, index, failure: props };
      }
      rows.push({ pk, rk, props });
    }
    // One Timestamp for the whole commit, later than any version it replaces (Azure REST:
    // understanding-the-table-service-data-model).
    const timestamp = this.clock.next(newestPrevious);
    for (const { pk, rk, props } of rows) {
      if (props === null) this.sql.deleteEntity.run(id, pk, rk);
      else this.sql.upsertEntity.run(id, pk, rk, timestamp, props);
    }
    return { ok: true, timestamp };
  }

  /** The stored properties after the write; null deletes the entity. `current` reads them, if any. */
  private nextProperties(
    write: EncodedWrite,
    current: (() => string) | undefined,
  ): string | null | 'notFound' | 'entityTooLarge' | 'tooManyProperties' {
    switch (write.action) {
      case 'put':
        return write.properties;
      case 'merge': {
        if (current === undefined) return write.properties;
        const merged = mergeProperties(write, decodeProperties(current()), decodeProperties(write.properties));
        return typeof merged === 'string' ? merged : encodeProperties(merged);
      }
      case 'delete':
        return current === undefined ? 'notFound' : null;
    }
  }

  private storedProperties(id: number, pk: Buffer, rk: Buffer): string {
    return (this.sql.selectProperties.get(id, pk, rk) as { props: string }).props;
  }

  private tableId(account: string, table: string): number | undefined {
    const key = tableCacheKey(account, table);
    let id = this.tableIds.get(key);
    if (id === undefined) {
      const row = this.sql.selectTable.get(account, table.toLowerCase()) as { id: number } | undefined;
      if (row === undefined) return undefined;
      id = row.id;
      this.tableIds.set(key, id);
    }
    return id;
  }
}
