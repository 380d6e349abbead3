// Entity group transactions (batch.md §1): one table, one partition, each entity at most once,
// all writes in one atomic commit that shares one Timestamp.
import { TableError } from '../errors.js';
import { BatchOperationError } from '../protocol/batch.js';
import type { DecodedEntity } from '../protocol/entity-json.js';
import type { EntityKeys } from '../protocol/keys.js';
import type { Store, TableInfo, Write } from '../storage/store.js';
import { deleteWrite, failureError, insertWrite, updateWrite, type IfMatch, type UpdateMode } from './entities.js';

export type BatchOperation =
  | { readonly kind: 'insert'; readonly body: DecodedEntity }
  | {
      readonly kind: 'update';
      readonly keys: EntityKeys;
      readonly body: DecodedEntity;
      readonly mode: UpdateMode;
      readonly ifMatch: IfMatch;
    }
  | { readonly kind: 'delete'; readonly keys: EntityKeys; readonly ifMatch: Exclude<IfMatch, undefined> };

/** Runs the operations in order, atomically. Returns the shared Timestamp. Throws BatchOperationError naming the failed operation. */
export async function executeBatch(store: Store, table: TableInfo, operations: readonly BatchOperation[]): Promise<bigint> {
  const writes = operations.map((operation, index) => atIndex(index, () => writeOf(operation)));
  checkOneEntityGroup(writes);
  const result = await store.commit(table, writes);
  if (!result.ok) throw atFailedIndex(result.failure === 'tableNotFound' ? 0 : result.index, failureError(result.failure));
  return result.timestamp;
}

function writeOf(operation: BatchOperation): Write {
  switch (operation.kind) {
    case 'insert':
      return insertWrite(operation.body);
    case 'update':
      return updateWrite(operation.keys, operation.body, operation.mode, operation.ifMatch);
    case 'delete':
      return deleteWrite(operation.keys, operation.ifMatch);
  }
}

/** Same PartitionKey everywhere, no (PK, RK) twice (batch.md §3.3 codes, partly unverified). */
function checkOneEntityGroup(writes: readonly Write[]): void {
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

/** Runs `step`, tagging a TableError it throws with the operation's index. */
export function atIndex<T>(index: number, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof TableError && !(error instanceof BatchOperationError)) throw atFailedIndex(index, error);
    throw error;
  }
}

function atFailedIndex(index: number, error: TableError): BatchOperationError {
  return new BatchOperationError(index, error.code, error.message);
}
