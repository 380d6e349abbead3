// The store as the workload watch and the throttle see it: every point read and every commit is
// admitted by the throttle (if any) before it reaches the engine, and noted by the watch (if any).
// Everything else passes straight through.
import type { Entity } from '../domain/entity.js';
import type { KeyRange } from '../domain/keys.js';
import type {
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
} from '../storage/table-store.js';
import { getTableThenCommit, getTableThenEntity } from '../storage/table-calls.js';
import type { Throttle } from './throttle.js';
import type { Workload } from './workload.js';

export interface Watchers {
  readonly throttle: Throttle | undefined;
  readonly workload: Workload | undefined;
}

export class ObservedStore implements TableStore {
  constructor(
    private readonly engine: TableStore,
    private readonly watchers: Watchers,
  ) {}

  async getTableEntity(
    account: string,
    name: string,
    partitionKey: string,
    rowKey: string,
  ): Promise<TableEntity | undefined> {
    // A throttle admits by the table's stored name, which only the lookup gives: then two calls.
    if (this.watchers.throttle !== undefined) return getTableThenEntity(this, account, name, partitionKey, rowKey);
    const read = await this.engine.getTableEntity(account, name, partitionKey, rowKey);
    if (read !== undefined) this.watchers.workload?.touched(account, read.table.name, partitionKey, 1);
    return read;
  }

  async commitToTable(account: string, name: string, writes: readonly Write[]): Promise<TableCommit> {
    if (this.watchers.throttle !== undefined) return getTableThenCommit(this, account, name, writes);
    const committed = await this.engine.commitToTable(account, name, writes);
    if (committed.table !== undefined && committed.result.ok && writes.length > 0) {
      this.watchers.workload?.wrote(account, committed.table.name, writes);
    }
    return committed;
  }

  getEntity(table: TableInfo, partitionKey: string, rowKey: string): Promise<Entity | undefined> {
    this.watchers.throttle?.admit(table.account, table.name, partitionKey, 1);
    this.watchers.workload?.touched(table.account, table.name, partitionKey, 1);
    return this.engine.getEntity(table, partitionKey, rowKey);
  }

  async commit(table: TableInfo, writes: readonly Write[]): Promise<CommitResult> {
    // A commit is one entity or one entity group transaction: one partition.
    this.watchers.throttle?.admit(table.account, table.name, writes[0]?.partitionKey, writes.length);
    const result = await this.engine.commit(table, writes);
    if (result.ok && writes.length > 0) this.watchers.workload?.wrote(table.account, table.name, writes);
    return result;
  }

  createTable(account: string, name: string): Promise<'created' | 'exists'> {
    return this.engine.createTable(account, name);
  }

  deleteTable(account: string, name: string): Promise<boolean> {
    return this.engine.deleteTable(account, name);
  }

  getTable(account: string, name: string): Promise<TableInfo | undefined> {
    return this.engine.getTable(account, name);
  }

  listTables(account: string, fromLower: string | undefined, limit: number): Promise<TableInfo[]> {
    return this.engine.listTables(account, fromLower, limit);
  }

  scan(table: TableInfo, range: KeyRange, request: ScanRequest): Promise<ScanStep> {
    return this.engine.scan(table, range, request);
  }

  getSetting(account: string, key: SettingKey): Promise<string | undefined> {
    return this.engine.getSetting(account, key);
  }

  putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'> {
    return this.engine.putSettings(account, changes);
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}
