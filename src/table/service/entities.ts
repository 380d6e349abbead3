// Entity operations (Azure REST: operations-on-entities) and entity group transactions (Azure REST:
// performing-entity-group-transactions): each
// operation becomes one conditional write, a batch's writes one atomic commit that shares one
// Timestamp. Single requests and $batch parts arrive here as the same EntityOperation.
import assert from 'node:assert/strict';
import type { Entity, EntityKeys, Properties } from '../../domain/entity.js';
import { validateKey } from '../../domain/entity.js';
import { BatchOperationError, StorageError } from '../../errors.js';
import { batchOperationsMax } from '../../limits.js';
import type {
  CommitResult,
  TableStore,
  StoredProperties,
  TableInfo,
  Write,
  WriteAction,
  WriteCondition,
  WriteFailure,
} from '../../storage/table-store.js';
import { mayNameTable, requireTable } from './tables.js';

/**
 * A decoded entity body as a write needs it (the wire decoder's EntityBody is one): its keys if
 * it names them, its properties as stored, and decoded on demand.
 */
export interface EntityBody {
  readonly partitionKey: string | undefined;
  readonly rowKey: string | undefined;
  readonly stored: StoredProperties;
  readonly properties: Properties;
}

/** An If-Match header: `*`, or the stored version an ETag names. */
export type IfMatch = { readonly kind: 'any' } | { readonly kind: 'version'; readonly timestamp: bigint };

export type UpdateMode = 'replace' | 'merge';

export type EntityOperation =
  /** Insert Entity; the body must name both keys. */
  | { readonly kind: 'insert'; readonly body: EntityBody }
  /** Update or Merge with If-Match; without it, Insert Or Replace / Insert Or Merge. */
  | {
      readonly kind: 'update';
      readonly keys: EntityKeys;
      readonly body: EntityBody;
      readonly mode: UpdateMode;
      readonly ifMatch: IfMatch | undefined;
    }
  | { readonly kind: 'delete'; readonly keys: EntityKeys; readonly ifMatch: IfMatch };

/** What a write answers with: the entity's keys and its new version. */
export interface Written extends EntityKeys {
  readonly timestamp: bigint;
}

export class EntityService {
  constructor(private readonly store: TableStore) {}

  async get(table: TableInfo, keys: EntityKeys): Promise<Entity> {
    return found(keys, await this.store.getEntity(table, keys.partitionKey, keys.rowKey));
  }

  /**
   * The table `tableName` names (404 TableNotFound) and one of its entities (404
   * ResourceNotFound), in one store call.
   */
  async getIn(account: string, tableName: string, keys: EntityKeys): Promise<{ table: TableInfo; entity: Entity }> {
    if (!mayNameTable(tableName)) throw new StorageError('TableNotFound');
    const read = await this.store.getTableEntity(account, tableName, keys.partitionKey, keys.rowKey);
    if (read === undefined) throw new StorageError('TableNotFound');
    return { table: read.table, entity: found(keys, read.entity) };
  }

  /** One operation as its own commit; failures are the single operation's errors. */
  async execute(table: TableInfo, operation: EntityOperation): Promise<Written> {
    const write = writeOf(operation);
    return written(write, await this.store.commit(table, [write]));
  }

  /**
   * execute() on the table `tableName` names (404 TableNotFound), in one store call. A missing
   * table is reported before an invalid operation, as when the table is looked up first.
   */
  async executeIn(
    account: string,
    tableName: string,
    operation: EntityOperation,
  ): Promise<{ table: TableInfo; written: Written }> {
    let write: Write | undefined;
    try {
      write = writeOf(operation);
    } catch {
      // Reported below, after the table.
    }
    if (write === undefined || !mayNameTable(tableName)) {
      const table = await requireTable(this.store, account, tableName);
      return { table, written: await this.execute(table, operation) };
    }
    const { table, result } = await this.store.commitToTable(account, tableName, [write]);
    if (table === undefined) throw new StorageError('TableNotFound');
    return { table, written: written(write, result) };
  }

  /**
   * An entity group transaction: one table, one partition, each entity at most once, all
   * operations applied atomically in order. Returns the shared Timestamp; throws
   * BatchOperationError naming the operation that failed.
   */
  async executeBatch(table: TableInfo, operations: readonly EntityOperation[]): Promise<bigint> {
    const writes = operations.map((operation, index) => atIndex(index, () => writeOf(operation)));
    checkOneEntityGroup(writes);
    const result: CommitResult = await this.store.commit(table, writes);
    if (!result.ok) {
      throw atFailedIndex(result.failure === 'tableNotFound' ? 0 : result.index, failureError(result.failure));
    }
    return result.timestamp;
  }
}

/** The entity a point read found, or 404 ResourceNotFound. */
function found(keys: EntityKeys, entity: Entity | undefined): Entity {
  if (entity === undefined) throw new StorageError('ResourceNotFound');
  assert(
    entity.partitionKey === keys.partitionKey && entity.rowKey === keys.rowKey,
    'the store returned another entity',
  );
  return entity;
}

/** What a lone write answers, or its failure's error. */
function written(write: Write, result: CommitResult): Written {
  if (!result.ok) throw failureError(result.failure);
  return { partitionKey: write.partitionKey, rowKey: write.rowKey, timestamp: result.timestamp };
}

function writeOf(operation: EntityOperation): Write {
  switch (operation.kind) {
    case 'insert': {
      const { body } = operation;
      const keys = requireKeys(body);
      return { ...keys, condition: { kind: 'absent' }, action: bodyAction('put', body) };
    }
    case 'update': {
      const { keys, body, mode, ifMatch } = operation;
      checkBodyKeys(keys, body);
      return {
        ...keys,
        condition: conditionOf(ifMatch),
        action: bodyAction(mode === 'replace' ? 'put' : 'merge', body),
      };
    }
    case 'delete': {
      const { keys, ifMatch } = operation;
      validateKey(keys.partitionKey, 'PartitionKey');
      validateKey(keys.rowKey, 'RowKey');
      return { ...keys, condition: conditionOf(ifMatch), action: { kind: 'delete' } };
    }
  }
}

/** A put or merge of the body's properties; they stay undecoded unless the store or a watcher reads them. */
function bodyAction(kind: 'put' | 'merge', body: EntityBody): WriteAction {
  return {
    kind,
    stored: body.stored,
    get properties() {
      return body.properties;
    },
  };
}

/** Keys of an insert body: both required (400 PropertiesNeedValue) and valid. */
function requireKeys(body: EntityBody): EntityKeys {
  const { partitionKey, rowKey } = body;
  if (partitionKey === undefined || rowKey === undefined) throw new StorageError('PropertiesNeedValue');
  validateKey(partitionKey, 'PartitionKey');
  validateKey(rowKey, 'RowKey');
  return { partitionKey, rowKey };
}

/** Keys in an update body may be omitted but must not contradict the URL (unverified: 400 InvalidInput). */
function checkBodyKeys(keys: EntityKeys, body: EntityBody): void {
  validateKey(keys.partitionKey, 'PartitionKey');
  validateKey(keys.rowKey, 'RowKey');
  const contradicts =
    (body.partitionKey !== undefined && body.partitionKey !== keys.partitionKey) ||
    (body.rowKey !== undefined && body.rowKey !== keys.rowKey);
  if (contradicts)
    throw new StorageError('InvalidInput', 'The keys in the request body do not match the keys in the URL.');
}

function conditionOf(ifMatch: IfMatch | undefined): WriteCondition {
  if (ifMatch === undefined) return { kind: 'none' };
  return ifMatch.kind === 'any' ? { kind: 'present' } : ifMatch;
}

/**
 * Same PartitionKey everywhere, no (PK, RK) twice (Azure REST: performing-entity-group-transactions codes, partly
 * unverified).
 */
function checkOneEntityGroup(writes: readonly Write[]): void {
  assert(writes.length >= 1 && writes.length <= batchOperationsMax, 'the batch parser bounds a change set');
  const seen = new Set<string>();
  writes.forEach((write, index) => {
    if (write.partitionKey !== writes[0]!.partitionKey) {
      throw new BatchOperationError(index, 'CommandsInBatchActOnDifferentPartitions');
    }
    if (seen.has(write.rowKey)) {
      throw new BatchOperationError(
        index,
        'InvalidDuplicateRow',
        'The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.',
      );
    }
    seen.add(write.rowKey);
  });
}

/**
 * Runs `step`, tagging a StorageError it throws with the operation's index when the failure is the
 * operation's own. A failure of the server (503 ServerBusy while the database is out of reach, 500
 * OperationTimedOut or InternalError) is no operation's: it stays untagged and fails the whole
 * request with its own status, so that clients retry the transaction as they retry any 503.
 */
export function atIndex<T>(index: number, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof StorageError && !(error instanceof BatchOperationError) && isOperationsOwn(error)) {
      throw atFailedIndex(index, error);
    }
    throw error;
  }
}

/** A client's error (4xx, or 501 for what the operation asks that is not implemented), not the server's. */
function isOperationsOwn(error: StorageError): boolean {
  return error.status < 500 || error.code === 'NotImplemented';
}

function atFailedIndex(index: number, error: StorageError): BatchOperationError {
  return new BatchOperationError(index, error.code, error.message);
}

function failureError(failure: WriteFailure): StorageError {
  switch (failure) {
    case 'tableNotFound':
      return new StorageError('TableNotFound');
    case 'exists':
      return new StorageError('EntityAlreadyExists');
    case 'notFound':
      return new StorageError('ResourceNotFound');
    case 'versionMismatch':
      return new StorageError('UpdateConditionNotSatisfied');
    case 'entityTooLarge':
      return new StorageError('EntityTooLarge');
    case 'tooManyProperties':
      return new StorageError('TooManyProperties');
  }
}
