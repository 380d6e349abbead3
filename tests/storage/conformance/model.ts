// The model store: the TableStore contract (src/storage/table-store.ts) as plain maps in memory, written to
// be obviously right rather than fast. Every scan sorts the whole table; a commit checks every
// write against the state before it, then applies all of them. It is the oracle of the model test
// (model-test.ts) and passes the conformance suite itself (tests/storage/model.test.ts), so the
// suite and the model vouch for each other. It never stands in for an engine anywhere else.
import type { Entity, Properties } from '../../../src/domain/entity.js';
import type { KeyRange } from '../../../src/domain/keys.js';
import type {
  CommitResult,
  ScanRequest,
  ScanStep,
  SettingChange,
  TableCommit,
  TableEntity,
  SettingKey,
  TableStore,
  TableInfo,
  Write,
  WriteFailure,
} from '../../../src/storage/table-store.js';
import { getTableThenCommit, getTableThenEntity } from '../../../src/storage/table-calls.js';
import { accountedBytes, compareKeys, compareText, inRange, keyText } from './support.js';

/**
 * Azure REST: understanding-the-table-service-data-model, restated here rather than imported: 252 custom properties, 1
 * MiB.
 */
const customPropertiesMax = 252;
const entityBytesMax = 1024 * 1024;

interface ModelTable {
  readonly name: string;
  /** By keyText(keys). */
  readonly entities: Map<string, Entity>;
}

export interface ModelOptions {
  /** Rows one scan step returns at most (small, so that callers meet continuations). */
  readonly stepRowsMax?: number;
  /** Rows one scan step examines at most, kept or not. */
  readonly stepExamineMax?: number;
}

export class ModelStore implements TableStore {
  /** Account → lower-cased table name → table. */
  private readonly tables = new Map<string, Map<string, ModelTable>>();
  /** `${account}\n${scope}\n${name}` → value; table settings under the lower-cased name. */
  private readonly settings = new Map<string, string>();
  private lastTicks = 0n;
  private readonly stepRowsMax: number;
  private readonly stepExamineMax: number;

  constructor(options: ModelOptions = {}) {
    this.stepRowsMax = options.stepRowsMax ?? 5;
    this.stepExamineMax = options.stepExamineMax ?? 7;
  }

  async createTable(account: string, name: string): Promise<'created' | 'exists'> {
    const tables = this.accountTables(account);
    if (tables.has(name.toLowerCase())) return 'exists';
    tables.set(name.toLowerCase(), { name, entities: new Map() });
    return 'created';
  }

  async deleteTable(account: string, name: string): Promise<boolean> {
    const deleted = this.accountTables(account).delete(name.toLowerCase());
    this.settings.delete(settingId(account, { scope: 'table', table: name }));
    return deleted;
  }

  async getTable(account: string, name: string): Promise<TableInfo | undefined> {
    const table = this.table({ account, name });
    return table && { account, name: table.name };
  }

  async listTables(account: string, fromLower: string | undefined, limit: number): Promise<TableInfo[]> {
    return [...this.accountTables(account).entries()]
      .filter(([lower]) => fromLower === undefined || compareText(lower, fromLower) >= 0)
      .sort(([a], [b]) => compareText(a, b))
      .slice(0, limit)
      .map(([, table]) => ({ account, name: table.name }));
  }

  async getEntity(info: TableInfo, partitionKey: string, rowKey: string): Promise<Entity | undefined> {
    const entity = this.table(info)?.entities.get(keyText({ partitionKey, rowKey }));
    return entity && copy(entity);
  }

  async scan(info: TableInfo, range: KeyRange, request: ScanRequest): Promise<ScanStep> {
    const rows = [...(this.table(info)?.entities.values() ?? [])].filter((e) => inRange(e, range)).sort(compareKeys);
    const entities: Entity[] = [];
    let examined = 0;
    let bytes = 0;
    for (const row of rows) {
      if (entities.length === Math.min(request.limit, this.stepRowsMax) || examined === this.stepExamineMax) {
        const last = rows[examined - 1]!;
        return {
          entities,
          examined,
          bytes,
          next: { partitionKey: last.partitionKey, rowKey: last.rowKey, inclusive: false },
        };
      }
      examined++;
      // A prefilter may keep any row that has the property: the model keeps them all.
      if (request.conditions.every((c) => c.kind === 'timestamp' || row.properties.has(c.property))) {
        entities.push(copy(row));
        bytes += accountedBytes(row.partitionKey, row.rowKey, row.properties);
      }
    }
    return { entities, examined, bytes, next: undefined };
  }

  getTableEntity(
    account: string,
    name: string,
    partitionKey: string,
    rowKey: string,
  ): Promise<TableEntity | undefined> {
    return getTableThenEntity(this, account, name, partitionKey, rowKey);
  }

  commitToTable(account: string, name: string, writes: readonly Write[]): Promise<TableCommit> {
    return getTableThenCommit(this, account, name, writes);
  }

  async commit(info: TableInfo, writes: readonly Write[]): Promise<CommitResult> {
    const table = this.table(info);
    if (table === undefined) return { ok: false, index: 0, failure: 'tableNotFound' };
    const next: (Properties | undefined)[] = [];
    let newestPrevious = 0n;
    for (const [index, write] of writes.entries()) {
      const current = table.entities.get(keyText(write));
      if (current !== undefined && current.timestamp > newestPrevious) newestPrevious = current.timestamp;
      const outcome = this.outcome(write, current);
      if (typeof outcome === 'string') return { ok: false, index, failure: outcome };
      next.push(outcome.properties);
    }
    const timestamp = this.nextTicks(newestPrevious);
    writes.forEach((write, i) => {
      const properties = next[i];
      if (properties === undefined) table.entities.delete(keyText(write));
      else
        table.entities.set(keyText(write), {
          partitionKey: write.partitionKey,
          rowKey: write.rowKey,
          timestamp,
          properties: new Map(properties),
        });
    });
    return { ok: true, timestamp };
  }

  async getSetting(account: string, key: SettingKey): Promise<string | undefined> {
    return this.settings.get(settingId(account, key));
  }

  async putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'> {
    if (changes.some(({ key }) => key.scope === 'table' && this.table({ account, name: key.table }) === undefined))
      return 'tableNotFound';
    for (const { key, value } of changes) {
      if (value === undefined) this.settings.delete(settingId(account, key));
      else this.settings.set(settingId(account, key), value);
    }
    return 'ok';
  }

  async close(): Promise<void> {}

  /** The entity's properties after `write` (undefined: deleted), or why it does not apply. */
  private outcome(write: Write, current: Entity | undefined): { properties: Properties | undefined } | WriteFailure {
    const { condition, action } = write;
    if (condition.kind === 'absent' && current !== undefined) return 'exists';
    if (condition.kind === 'present' && current === undefined) return 'notFound';
    if (condition.kind === 'version') {
      if (current === undefined) return 'notFound';
      if (current.timestamp !== condition.timestamp) return 'versionMismatch';
    }
    if (action.kind === 'delete') return current === undefined ? 'notFound' : { properties: undefined };
    if (action.kind === 'put' || current === undefined) return { properties: new Map(action.properties) };
    const merged = new Map(current.properties);
    for (const [name, value] of action.properties) merged.set(name, value);
    if (merged.size > customPropertiesMax) return 'tooManyProperties';
    if (accountedBytes(write.partitionKey, write.rowKey, merged) > entityBytesMax) return 'entityTooLarge';
    return { properties: merged };
  }

  /** Wall-clock ticks since 1970, one more than the last when the clock did not advance. */
  private nextTicks(after: bigint): bigint {
    let ticks = BigInt(Date.now()) * 10_000n;
    if (ticks <= this.lastTicks) ticks = this.lastTicks + 1n;
    if (ticks <= after) ticks = after + 1n;
    this.lastTicks = ticks;
    return ticks;
  }

  private accountTables(account: string): Map<string, ModelTable> {
    let tables = this.tables.get(account);
    if (tables === undefined) this.tables.set(account, (tables = new Map()));
    return tables;
  }

  private table({ account, name }: TableInfo): ModelTable | undefined {
    return this.tables.get(account)?.get(name.toLowerCase());
  }
}

function settingId(account: string, key: SettingKey): string {
  return key.scope === 'account' ? `${account}\naccount\n${key.name}` : `${account}\ntable\n${key.table.toLowerCase()}`;
}

function copy(entity: Entity): Entity {
  return {
    partitionKey: entity.partitionKey,
    rowKey: entity.rowKey,
    timestamp: entity.timestamp,
    properties: new Map(entity.properties),
  };
}
