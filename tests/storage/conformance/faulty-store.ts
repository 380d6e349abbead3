// A TableStore that fails its Nth call (after SQLite's test_vfs TestFaultInject, at our storage
// seam). It wraps a real engine and passes every other call through; the failing call throws at
// once, rejects without reaching the engine, or reaches the engine and rejects after it applied
// (an acknowledgement lost on its way back). Only the fault test uses it.
import type { KeyRange } from '../../../src/domain/keys.js';
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
} from '../../../src/storage/table-store.js';
import type { Entity } from '../../../src/domain/entity.js';

export type FaultKind = 'throw' | 'reject' | 'rejectAfterApplying';

export const faultKinds: readonly FaultKind[] = ['throw', 'reject', 'rejectAfterApplying'];

export class InjectedFault extends Error {
  constructor(
    readonly call: number,
    readonly method: string,
    readonly kind: FaultKind,
  ) {
    super(`injected fault: call ${call} (${method}, ${kind})`);
  }
}

export class FaultyStore implements TableStore {
  /** Calls made since the last arm(). */
  calls = 0;
  /** The fault once it has fired. */
  fired: InjectedFault | undefined;
  private failAt: number | undefined;
  private kind: FaultKind = 'reject';

  constructor(private inner: TableStore) {}

  /** Wraps `inner` from now on, counting from zero; call `failAt` (1-based) fails, if given. */
  arm(inner: TableStore, failAt: number | undefined, kind: FaultKind = 'reject'): void {
    this.inner = inner;
    this.calls = 0;
    this.fired = undefined;
    this.failAt = failAt;
    this.kind = kind;
  }

  createTable(account: string, name: string): Promise<'created' | 'exists'> {
    return this.call('createTable', () => this.inner.createTable(account, name));
  }

  deleteTable(account: string, name: string): Promise<boolean> {
    return this.call('deleteTable', () => this.inner.deleteTable(account, name));
  }

  getTable(account: string, name: string): Promise<TableInfo | undefined> {
    return this.call('getTable', () => this.inner.getTable(account, name));
  }

  listTables(account: string, fromLower: string | undefined, limit: number): Promise<TableInfo[]> {
    return this.call('listTables', () => this.inner.listTables(account, fromLower, limit));
  }

  getEntity(table: TableInfo, partitionKey: string, rowKey: string): Promise<Entity | undefined> {
    return this.call('getEntity', () => this.inner.getEntity(table, partitionKey, rowKey));
  }

  scan(table: TableInfo, range: KeyRange, request: ScanRequest): Promise<ScanStep> {
    return this.call('scan', () => this.inner.scan(table, range, request));
  }

  commit(table: TableInfo, writes: readonly Write[]): Promise<CommitResult> {
    return this.call('commit', () => this.inner.commit(table, writes));
  }

  getTableEntity(
    account: string,
    name: string,
    partitionKey: string,
    rowKey: string,
  ): Promise<TableEntity | undefined> {
    return this.call('getTableEntity', () => this.inner.getTableEntity(account, name, partitionKey, rowKey));
  }

  commitToTable(account: string, name: string, writes: readonly Write[]): Promise<TableCommit> {
    return this.call('commitToTable', () => this.inner.commitToTable(account, name, writes));
  }

  getSetting(account: string, key: SettingKey): Promise<string | undefined> {
    return this.call('getSetting', () => this.inner.getSetting(account, key));
  }

  putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'> {
    return this.call('putSettings', () => this.inner.putSettings(account, changes));
  }

  /** Closing is the owner's business, never a fault site. */
  close(): Promise<void> {
    return this.inner.close();
  }

  private call<T>(method: string, run: () => Promise<T>): Promise<T> {
    const call = ++this.calls;
    if (call !== this.failAt) return run();
    const fault = new InjectedFault(call, method, this.kind);
    this.fired = fault;
    switch (this.kind) {
      case 'throw':
        throw fault;
      case 'reject':
        return Promise.reject(fault);
      case 'rejectAfterApplying':
        return run().then(() => Promise.reject(fault));
    }
  }
}
