// Single-entity operations (operations.md §5): each becomes one conditional write or one read.
import { TableError } from '../errors.js';
import type { Entity } from '../protocol/edm.js';
import { validateKey, type DecodedEntity } from '../protocol/entity-json.js';
import type { EntityKeys } from '../protocol/keys.js';
import type { CommitResult, Store, TableInfo, Write, WriteCondition } from '../storage/store.js';

/** An If-Match header: `*` or one exact ETag; undefined when absent. */
export type IfMatch = { readonly kind: 'any' } | { readonly kind: 'etag'; readonly etag: string } | undefined;

export type UpdateMode = 'replace' | 'merge';

export class EntityService {
  constructor(private readonly store: Store) {}

  /** Insert Entity; the body must name both keys. Returns the stored entity. */
  async insert(table: TableInfo, body: DecodedEntity): Promise<Entity> {
    const write = insertWrite(body);
    const { timestamp } = committed(await this.store.commit(table, [write]));
    return { partitionKey: write.partitionKey, rowKey: write.rowKey, timestamp, properties: body.properties };
  }

  async get(table: TableInfo, keys: EntityKeys): Promise<Entity> {
    const entity = await this.store.getEntity(table, keys.partitionKey, keys.rowKey);
    if (entity === undefined) throw new TableError('ResourceNotFound');
    return entity;
  }

  /** Update or Merge with If-Match; without it, Insert Or Replace / Insert Or Merge. Returns the new Timestamp. */
  async update(table: TableInfo, keys: EntityKeys, body: DecodedEntity, mode: UpdateMode, ifMatch: IfMatch): Promise<bigint> {
    const write = updateWrite(keys, body, mode, ifMatch);
    return committed(await this.store.commit(table, [write])).timestamp;
  }

  async delete(table: TableInfo, keys: EntityKeys, ifMatch: Exclude<IfMatch, undefined>): Promise<void> {
    committed(await this.store.commit(table, [deleteWrite(keys, ifMatch)]));
  }
}

/** The write of an insert: the body names both keys, and no entity may have them yet. */
export function insertWrite(body: DecodedEntity): Write {
  return { ...requireKeys(body), condition: { kind: 'absent' }, action: { kind: 'put', properties: body.properties } };
}

/** The write of an update, merge or upsert addressed by URL keys. */
export function updateWrite(keys: EntityKeys, body: DecodedEntity, mode: UpdateMode, ifMatch: IfMatch): Write {
  checkBodyKeys(keys, body);
  return {
    ...keys,
    condition: conditionOf(ifMatch),
    action: { kind: mode === 'replace' ? 'put' : 'merge', properties: body.properties },
  };
}

export function deleteWrite(keys: EntityKeys, ifMatch: Exclude<IfMatch, undefined>): Write {
  validateKey(keys.partitionKey, 'PartitionKey');
  validateKey(keys.rowKey, 'RowKey');
  return { ...keys, condition: conditionOf(ifMatch), action: { kind: 'delete' } };
}

/** Keys of an insert body: both required (400 PropertiesNeedValue) and valid. */
function requireKeys(body: DecodedEntity): EntityKeys {
  const { partitionKey, rowKey } = body;
  if (partitionKey === undefined || rowKey === undefined) throw new TableError('PropertiesNeedValue');
  validateKey(partitionKey, 'PartitionKey');
  validateKey(rowKey, 'RowKey');
  return { partitionKey, rowKey };
}

/** Keys in an update body may be omitted but must not contradict the URL (unverified: 400 InvalidInput). */
function checkBodyKeys(keys: EntityKeys, body: DecodedEntity): void {
  validateKey(keys.partitionKey, 'PartitionKey');
  validateKey(keys.rowKey, 'RowKey');
  const contradicts =
    (body.partitionKey !== undefined && body.partitionKey !== keys.partitionKey) ||
    (body.rowKey !== undefined && body.rowKey !== keys.rowKey);
  if (contradicts) throw new TableError('InvalidInput', 'The keys in the request body do not match the keys in the URL.');
}

function conditionOf(ifMatch: IfMatch): WriteCondition {
  if (ifMatch === undefined) return { kind: 'none' };
  return ifMatch.kind === 'any' ? { kind: 'present' } : { kind: 'etag', etag: ifMatch.etag };
}

/** The commit's Timestamp, or the failure as the service reports it for a single operation. */
export function committed(result: CommitResult): { timestamp: bigint } {
  if (result.ok) return result;
  throw failureError(result.failure);
}

export function failureError(failure: Exclude<CommitResult, { ok: true }>['failure']): TableError {
  switch (failure) {
    case 'tableNotFound':
      return new TableError('TableNotFound');
    case 'exists':
      return new TableError('EntityAlreadyExists');
    case 'notFound':
      return new TableError('ResourceNotFound');
    case 'etagMismatch':
      return new TableError('UpdateConditionNotSatisfied');
    case 'entityTooLarge':
      return new TableError('EntityTooLarge');
    case 'tooManyProperties':
      return new TableError('TooManyProperties');
  }
}
