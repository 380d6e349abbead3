// Eventually consistent transactions and the inter-partition secondary index (design guide).
// A change that spans partitions or tables is recorded as an outbox message in the source
// partition, in the same entity group transaction as the source change, so it exists if and only
// if the source change happened. A worker then applies each message's operations to their targets
// and deletes the message. Every target write carries the version of the change that produced it
// and is applied only over an older version (deletes leave a versioned tombstone), so applying a
// message twice, late or out of order never undoes a newer change: a worker killed at any point
// simply starts again.
import { randomUUID } from 'node:crypto';
import type { TableClient, TransactionAction } from '@azure/data-tables';
import { codecs, joinComponents } from '../keys.js';
import { limits, LimitError } from '../limits.js';
import { keys } from '../filter.js';
import {
  deletingProperty,
  isDeleting,
  reserved,
  wireString,
  writtenBy,
  type Model,
  type RawEntity,
  type Stored,
  type WireEntity,
} from '../model.js';
import {
  defaultRetryPolicy,
  newOperationId,
  optimistic,
  raceOnMissingRow,
  statusOf,
  withRetry,
  type RetryPolicy,
} from '../retry.js';
import type { Infer, Schema, WireProperties } from '../schema.js';
import { deleteIfPresent, readRaw, rawPages, submitBatch } from '../table.js';

/** One operation on a row of another partition or table. */
export interface TargetOperation {
  table: string;
  partitionKey: string;
  rowKey: string;
  action: 'upsert' | 'delete';
  /** For upserts: the row's properties in wire form. */
  properties?: WireProperties;
}

interface Message {
  version: string;
  operations: TargetOperation[];
}

/**
 * First RowKey component of outbox rows: `!o` is no escape the text codec produces, so no entity key starts with it.
 */
const outboxMarker = '!outbox';
const versionProperty = '_v';
const tombstoneProperty = '_tombstone';
const messageProperty = 'message';
const versionCodec = codecs.int64();

/** The RowKey range holding the outbox rows of any partition. */
export const outboxRange = { ge: outboxMarker + ' ', lt: outboxMarker + '!' };

function versionOf(raw: RawEntity | undefined): bigint {
  const text = raw && wireString(raw[versionProperty]);
  return text === undefined ? -1n : BigInt(text);
}

/** Whether a target row is a tombstone left by a delete (readers must skip these). */
export function isTombstone(raw: RawEntity): boolean {
  return wireString(raw[tombstoneProperty]) === 'true';
}

/**
 * Deletes the tombstones of a target table last written before `olderThan` (each under If-Match,
 * so one rewritten meanwhile stays). A tombstone stops a late, older message from bringing a
 * deleted row back; purge only those older than any message can be late. Returns how many.
 */
export async function purgeTombstones(
  target: TableClient,
  olderThan: Date,
  retry: RetryPolicy = defaultRetryPolicy,
): Promise<number> {
  const filter = `${tombstoneProperty} eq true and Timestamp lt datetime'${olderThan.toISOString()}'`;
  let purged = 0;
  for await (const page of rawPages(target, { filter }, retry)) {
    for (const row of page.items) {
      if (!isTombstone(row)) continue;
      try {
        await deleteIfPresent(target, row.partitionKey, row.rowKey, retry, row.etag!);
        purged++;
      } catch (error) {
        if (statusOf(error) !== 412) throw error;
      }
    }
  }
  return purged;
}

/** The outbox row carrying `operations`, to be written in the same transaction as the source change. */
export function outboxRow(partitionKey: string, version: bigint, operations: TargetOperation[]): WireEntity {
  const message: Message = { version: version.toString(), operations };
  const text = JSON.stringify(message);
  if (text.length > limits.stringUtf16Units)
    throw new LimitError('PropertyValueTooLarge', `outbox message of ${text.length} characters`);
  return {
    partitionKey,
    rowKey: joinComponents([outboxMarker, versionCodec.encode(version), randomUUID()]),
    [messageProperty]: { value: text, type: 'String' },
  };
}

/**
 * The version of the next change of a source row: above the row's own version (read under the
 * If-Match that guards the change, so versions of one entity only grow, whichever process writes).
 */
function versionAfter(raw: RawEntity): bigint {
  const next = nextVersion();
  const current = versionOf(raw);
  return next > current ? next : current + 1n;
}

/** A fresh version for a change: microseconds since the epoch, above any earlier one from this process. */
let lastVersion = 0n;
export function nextVersion(): bigint {
  const now = BigInt(Date.now()) * 1000n;
  lastVersion = now > lastVersion ? now : lastVersion + 1n;
  return lastVersion;
}

/**
 * Submits `sourceActions` (all in one partition) together with an outbox message for `operations`,
 * as one entity group transaction. Returns the message's version.
 */
export async function transact(
  source: TableClient,
  partitionKey: string,
  sourceActions: TransactionAction[],
  operations: TargetOperation[],
  version = nextVersion(),
): Promise<bigint> {
  await submitBatch(source, [...sourceActions, ['create', outboxRow(partitionKey, version, operations)]]);
  return version;
}

export interface WorkerOptions {
  /** The client of a target table by name. */
  tables: (name: string) => TableClient;
  retry?: RetryPolicy;
  /** Called after each message is applied and removed (progress, logging). */
  onApplied?: (message: { partitionKey: string; rowKey: string; operations: number }) => void;
}

/** Applies outbox messages of one source table; idempotent, resumable, safe to run twice. */
export class OutboxWorker {
  private readonly retry: RetryPolicy;

  constructor(
    readonly source: TableClient,
    private readonly options: WorkerOptions,
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
  }

  /** Applies every pending message of one partition, oldest first. Returns how many. */
  async drainPartition(partitionKey: string): Promise<number> {
    return this.drain(keys.partitionKey('eq', partitionKey).and(keys.rowKeyRange(outboxRange)).text);
  }

  /** Applies every pending message of the table (a scan of the outbox key range of all partitions). */
  async drainAll(): Promise<number> {
    return this.drain(keys.rowKeyRange(outboxRange).text);
  }

  private async drain(filter: string): Promise<number> {
    let applied = 0;
    for await (const page of rawPages(this.source, { filter }, this.retry)) {
      for (const raw of page.items) {
        await this.applyMessage(raw);
        applied++;
      }
    }
    return applied;
  }

  /**
   * Applies one outbox row (as read from the source table) and deletes it. Safe to call again, late
   * or out of order: each target keeps the newest version it was given.
   */
  async applyMessage(raw: RawEntity): Promise<void> {
    const message = JSON.parse(wireString(raw[messageProperty])!) as Message;
    const version = BigInt(message.version);
    for (const operation of message.operations) await this.applyOperation(operation, version);
    await deleteIfPresent(this.source, raw.partitionKey, raw.rowKey, this.retry);
    this.options.onApplied?.({
      partitionKey: raw.partitionKey,
      rowKey: raw.rowKey,
      operations: message.operations.length,
    });
  }

  /** Writes the target row at `version` unless it already holds that version or a newer one. */
  private async applyOperation(operation: TargetOperation, version: bigint): Promise<void> {
    const client = this.options.tables(operation.table);
    const properties: WireProperties =
      operation.action === 'upsert'
        ? { ...operation.properties }
        : { [tombstoneProperty]: { value: true, type: 'Boolean' } };
    properties[versionProperty] = { value: version.toString(), type: 'Int64' };
    const row = { partitionKey: operation.partitionKey, rowKey: operation.rowKey, ...properties };
    await optimistic(
      async () => {
        const current = await readRaw(client, operation.partitionKey, operation.rowKey, this.retry);
        if (versionOf(current) >= version) return;
        try {
          if (current === undefined) await client.createEntity(row);
          else await raceOnMissingRow(() => client.updateEntity(row, 'Replace', { etag: current.etag! }));
        } catch (error) {
          // Someone created it meanwhile: a lost race like a 412.
          if (statusOf(error) === 409) throw Object.assign(new Error('created concurrently'), { statusCode: 412 });
          throw error;
        }
      },
      { maxAttempts: 32, retry: this.retry },
    );
  }
}

/**
 * Inter-partition secondary index: entities live in their partition of the source table; each
 * index maps an attribute to the entity's keys in a partition (or table) of its own, kept up to
 * date through the outbox. Lookups across partitions are one range query; they may lag writes
 * until the worker has run (eventual consistency), never diverge for good.
 */
export class OutboxIndexedTable<S extends Schema> {
  private readonly retry: RetryPolicy;
  readonly worker: OutboxWorker;

  constructor(
    readonly source: TableClient,
    readonly model: Model<S>,
    private readonly index: {
      table: string;
      /** Index partition and row keys for an entity, e.g. PartitionKey = the e-mail address. */
      keys: (values: Infer<S>) => { partitionKey: string; rowKey: string };
      /** Fields copied into the index row (denormalized); the entity's keys are always stored. */
      copy?: readonly (keyof S & string)[];
    },
    options: WorkerOptions,
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
    this.worker = new OutboxWorker(source, options);
    this.tables = options.tables;
  }

  private readonly tables: (name: string) => TableClient;

  private indexOperations(
    before: Infer<S> | undefined,
    after: Infer<S> | undefined,
    entityKeys: { partitionKey: string; rowKey: string },
  ): TargetOperation[] {
    const operations: TargetOperation[] = [];
    const oldKeys = before && this.index.keys(before);
    const newKeys = after && this.index.keys(after);
    if (oldKeys && (!newKeys || oldKeys.partitionKey !== newKeys.partitionKey || oldKeys.rowKey !== newKeys.rowKey)) {
      operations.push({ table: this.index.table, ...oldKeys, action: 'delete' });
    }
    if (newKeys && after) {
      const properties: WireProperties = {
        sourcePartitionKey: { value: entityKeys.partitionKey, type: 'String' },
        sourceRowKey: { value: entityKeys.rowKey, type: 'String' },
      };
      const copied = this.model.toEntity(after);
      for (const name of this.index.copy ?? [])
        if (copied[name] !== undefined) properties[name] = copied[name] as WireProperties[string];
      operations.push({ table: this.index.table, ...newKeys, action: 'upsert', properties });
    }
    return operations;
  }

  /** Inserts the entity with its outbox message in one transaction; 409 if it exists. */
  async create(values: Infer<S>): Promise<bigint> {
    const operationId = newOperationId();
    const version = nextVersion();
    const entity = this.model.toEntity(values, operationId);
    entity[versionProperty] = { value: version.toString(), type: 'Int64' };
    const operations = this.indexOperations(undefined, values, entity);
    await withRetry(async () => {
      try {
        await transact(this.source, entity.partitionKey, [['create', entity]], operations, version);
      } catch (error) {
        if (
          statusOf(error) !== 409 ||
          !writtenBy(await readRaw(this.source, entity.partitionKey, entity.rowKey, this.retry), operationId)
        )
          throw error;
      }
    }, this.retry);
    return version;
  }

  /** Optimistic update (If-Match, bounded retries on 412) with its outbox message in the same transaction. */
  async update(key: Partial<Infer<S>>, change: (current: Infer<S>) => Infer<S>): Promise<Stored<Infer<S>> | undefined> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    return optimistic(
      async (operationId) => {
        const raw = await readRaw(this.source, partitionKey, rowKey, this.retry);
        if (raw === undefined || isDeleting(raw)) return undefined;
        if (!writtenBy(raw, operationId)) {
          const current = this.model.fromEntity(raw);
          const next = change(structuredClone(current));
          const entity = this.model.toEntity(next, operationId, raw);
          if (entity.partitionKey !== partitionKey || entity.rowKey !== rowKey)
            throw new Error('update must not change the entity keys');
          const version = versionAfter(raw);
          entity[versionProperty] = { value: version.toString(), type: 'Int64' };
          await raceOnMissingRow(() =>
            transact(
              this.source,
              partitionKey,
              [['update', entity, 'Replace', { etag: raw.etag! }]],
              this.indexOperations(current, next, entity),
              version,
            ),
          );
        }
        return this.model.fromEntity((await readRaw(this.source, partitionKey, rowKey, this.retry))!);
      },
      { retry: this.retry },
    );
  }

  /**
   * Deletes the entity; its index row is removed by the worker. A transaction delete cannot carry
   * If-Match, so the guard is a first transaction that marks the row deleted under If-Match and
   * records the message; the row is then removed. Readers and writers treat a marked row as absent,
   * and the next delete of that key finishes a delete that stopped half-way.
   */
  async delete(key: Partial<Infer<S>>): Promise<void> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    await optimistic(
      async (operationId) => {
        const raw = await readRaw(this.source, partitionKey, rowKey, this.retry);
        if (raw === undefined) return;
        if (!isDeleting(raw) && !writtenBy(raw, operationId)) {
          const current = this.model.fromEntity(raw);
          const marked = this.model.toEntity(current, operationId, raw);
          const version = versionAfter(raw);
          marked[versionProperty] = { value: version.toString(), type: 'Int64' };
          marked[deletingProperty] = { value: true, type: 'Boolean' };
          await raceOnMissingRow(() =>
            transact(
              this.source,
              partitionKey,
              [['update', marked, 'Replace', { etag: raw.etag! }]],
              this.indexOperations(current, undefined, raw),
              version,
            ),
          );
        }
        // Only the marked row, under If-Match: a row re-created meanwhile is not ours to delete.
        const marked = await readRaw(this.source, partitionKey, rowKey, this.retry);
        if (marked && isDeleting(marked)) {
          await deleteIfPresent(this.source, partitionKey, rowKey, this.retry, marked.etag!).catch((error) => {
            if (statusOf(error) !== 412) throw error;
          });
        }
      },
      { retry: this.retry },
    );
  }

  async get(key: Partial<Infer<S>>): Promise<Stored<Infer<S>> | undefined> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    const raw = await readRaw(this.source, partitionKey, rowKey, this.retry);
    return raw && !isDeleting(raw) ? this.model.fromEntity(raw) : undefined;
  }

  /** Index rows under an index partition (tombstones skipped): source keys plus the copied fields. */
  async lookup(indexPartitionKey: string): Promise<RawEntity[]> {
    const rows: RawEntity[] = [];
    for await (const page of rawPages(
      this.tables(this.index.table),
      { filter: keys.partitionKey('eq', indexPartitionKey) },
      this.retry,
    )) {
      rows.push(...page.items.filter((raw) => !isTombstone(raw)));
    }
    return rows;
  }

  /** The entity an index row points to, read from its source partition (the authoritative copy). */
  async resolve(indexRow: RawEntity): Promise<Stored<Infer<S>> | undefined> {
    const raw = await readRaw(
      this.source,
      wireString(indexRow.sourcePartitionKey)!,
      wireString(indexRow.sourceRowKey)!,
      this.retry,
    );
    return raw && !isDeleting(raw) ? this.model.fromEntity(raw) : undefined;
  }
}

export { reserved };
