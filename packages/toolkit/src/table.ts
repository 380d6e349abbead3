// A model bound to a table: point reads, writes that are safe to retry, optimistic updates,
// queries with typed filters, $select and page-by-page continuation.
import { TableClient, type TableServiceClientOptions, type TransactionAction } from '@azure/data-tables';
import { limits, LimitError } from './limits.js';
import { reserved, writtenBy, type Model, type RawEntity, type Stored, type WireEntity } from './model.js';
import type { Filter } from './filter.js';
import {
  defaultRetryPolicy,
  newOperationId,
  optimistic,
  raceOnMissingRow,
  statusOf,
  withRetry,
  type RetryPolicy,
} from './retry.js';
import type { Infer, Schema } from './schema.js';

/**
 * A TableClient for the toolkit. The SDK's own retries are off (`maxRetries: 0`) because the
 * toolkit retries itself, and only where a repeat is safe; other options pass through.
 */
export function connect(
  connectionString: string,
  tableName: string,
  options: TableServiceClientOptions = {},
): TableClient {
  return TableClient.fromConnectionString(connectionString, tableName, {
    allowInsecureConnection: true,
    ...options,
    retryOptions: { maxRetries: 0, ...options.retryOptions },
  });
}

/** Creates the table if it is not there yet (idempotent). */
export async function ensureTable(client: TableClient, retry: RetryPolicy = defaultRetryPolicy): Promise<void> {
  await withRetry(async () => {
    try {
      await client.createTable();
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
    }
  }, retry);
}

export interface Page<T> {
  items: T[];
  /** Pass it back to continue after this page; undefined on the last page. */
  continuationToken: string | undefined;
}

export interface QueryOptions {
  filter?: Filter | string;
  /** Properties to return ($select); keys and ETag always come back. */
  select?: readonly string[];
  /** Entities per page (the service returns at most 1,000). */
  pageSize?: number;
  /** Resume where an earlier page ended. */
  continuationToken?: string;
}

/** Pages of raw rows, each page fetched with retries; resumable through its continuation token. */
export async function* rawPages(
  client: TableClient,
  options: QueryOptions,
  retry: RetryPolicy = defaultRetryPolicy,
): AsyncGenerator<Page<RawEntity>> {
  const filter = options.filter === undefined ? undefined : String(options.filter);
  let token = options.continuationToken;
  do {
    const page = await withRetry(async () => {
      const iterator = client
        .listEntities<Record<string, unknown>>({
          queryOptions: {
            ...(filter !== undefined ? { filter } : {}),
            ...(options.select ? { select: [...options.select] } : {}),
          },
          disableTypeConversion: true,
        })
        .byPage({
          maxPageSize: options.pageSize ?? 1000,
          ...(token !== undefined ? { continuationToken: token } : {}),
        });
      const result = await iterator.next();
      if (result.done) return { items: [] as RawEntity[], continuationToken: undefined };
      const items = [...result.value] as unknown as RawEntity[];
      return { items, continuationToken: (result.value as { continuationToken?: string }).continuationToken };
    }, retry);
    yield page;
    token = page.continuationToken;
  } while (token !== undefined);
}

/** A point read of a raw row with retries; undefined when there is none. */
export async function readRaw(
  client: TableClient,
  partitionKey: string,
  rowKey: string,
  retry: RetryPolicy = defaultRetryPolicy,
): Promise<RawEntity | undefined> {
  return withRetry(async () => {
    try {
      return (await client.getEntity(partitionKey, rowKey, { disableTypeConversion: true })) as unknown as RawEntity;
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }, retry);
}

/** Deletes one row (with If-Match when an ETag is given), with retries; a row already gone is not an error. */
export async function deleteIfPresent(
  client: TableClient,
  partitionKey: string,
  rowKey: string,
  retry: RetryPolicy = defaultRetryPolicy,
  etag = '*',
): Promise<void> {
  await withRetry(async () => {
    try {
      await client.deleteEntity(partitionKey, rowKey, { etag });
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
    }
  }, retry);
}

/** Rough size of a batch on the wire, to refuse one over the service's 4 MiB before sending it. */
function batchBytes(actions: readonly TransactionAction[]): number {
  return actions.reduce((sum, action) => sum + 600 + Buffer.byteLength(JSON.stringify(action[1])), 0);
}

/** Checks an entity group transaction against the service's limits, then submits it. */
export async function submitBatch(client: TableClient, actions: TransactionAction[]): Promise<void> {
  if (actions.length === 0) return;
  if (actions.length > limits.operationsPerBatch) {
    throw new LimitError(
      'TooManyOperations',
      `${actions.length} operations in one transaction, the limit is ${limits.operationsPerBatch}`,
    );
  }
  const partition = actions[0]![1].partitionKey;
  const rows = new Set<string>();
  for (const action of actions) {
    if (action[1].partitionKey !== partition)
      throw new LimitError('InvalidInput', 'a transaction spans more than one partition');
    if (rows.has(action[1].rowKey!))
      throw new LimitError('InvalidDuplicateRow', `row ${action[1].rowKey} appears twice in one transaction`);
    rows.add(action[1].rowKey!);
  }
  const bytes = batchBytes(actions);
  if (bytes > limits.batchPayloadBytes)
    throw new LimitError(
      'RequestBodyTooLarge',
      `transaction of about ${bytes} bytes, the limit is ${limits.batchPayloadBytes}`,
    );
  await client.submitTransaction(actions);
}

export interface TableOptions {
  retry?: RetryPolicy;
  /** Bound on optimistic re-read-and-retry rounds. */
  maxConflictRetries?: number;
}

export class ModelTable<S extends Schema> {
  readonly retry: RetryPolicy;
  readonly maxConflictRetries: number;

  constructor(
    readonly client: TableClient,
    readonly model: Model<S>,
    options: TableOptions = {},
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
    this.maxConflictRetries = options.maxConflictRetries ?? 16;
  }

  async get(key: Partial<Infer<S>>): Promise<Stored<Infer<S>> | undefined> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    const raw = await readRaw(this.client, partitionKey, rowKey, this.retry);
    return raw && this.model.fromEntity(raw);
  }

  /**
   * Inserts; fails with 409 if the row exists. Safe to retry: a retry that meets the row this
   * very call wrote (same operation id) counts as success.
   */
  async create(values: Infer<S>): Promise<Stored<Infer<S>>> {
    const operationId = newOperationId();
    const entity = this.model.toEntity(values, operationId);
    await withRetry(async () => {
      try {
        await this.client.createEntity(entity);
      } catch (error) {
        if (statusOf(error) !== 409) throw error;
        const existing = await readRaw(this.client, entity.partitionKey, entity.rowKey, this.retry);
        if (!writtenBy(existing, operationId)) throw error;
      }
    }, this.retry);
    return (await this.get(values))!;
  }

  /** Insert-or-replace: idempotent, so always safe to retry. */
  async upsert(values: Infer<S>): Promise<void> {
    const entity = this.model.toEntity(values);
    await withRetry(() => this.client.upsertEntity(entity, 'Replace'), this.retry);
  }

  /**
   * Read, apply `change`, write back with If-Match; on 412 re-read and apply again, at most
   * `maxConflictRetries` times. `change` must not alter the keys. Returns the stored result, or
   * undefined if the entity does not exist.
   */
  async update(key: Partial<Infer<S>>, change: (current: Infer<S>) => Infer<S>): Promise<Stored<Infer<S>> | undefined> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    return optimistic(
      async (operationId) => {
        const raw = await readRaw(this.client, partitionKey, rowKey, this.retry);
        if (raw === undefined) return undefined;
        if (writtenBy(raw, operationId)) return this.model.fromEntity(raw);
        const next = change(this.model.fromEntity(raw));
        const entity = this.model.toEntity(next, operationId, raw);
        if (entity.partitionKey !== partitionKey || entity.rowKey !== rowKey)
          throw new Error('update must not change the keys');
        await raceOnMissingRow(() => this.client.updateEntity(entity, 'Replace', { etag: raw.etag! }));
        return (await this.get(key))!;
      },
      { maxAttempts: this.maxConflictRetries, retry: this.retry },
    );
  }

  /** Deletes (with If-Match when an ETag is given); a missing row is not an error, so retries are safe. */
  async delete(key: Partial<Infer<S>>, etag = '*'): Promise<void> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    await deleteIfPresent(this.client, partitionKey, rowKey, this.retry, etag);
  }

  /** Pages of entities of this model (rows of other kinds in the same range are skipped). */
  async *pages(options: QueryOptions = {}): AsyncGenerator<Page<Stored<Infer<S>>>> {
    const select = options.select ? [...new Set([...options.select, reserved.kind])] : undefined;
    for await (const page of rawPages(this.client, { ...options, ...(select ? { select } : {}) }, this.retry)) {
      yield {
        items: page.items
          .filter((raw) => this.model.isKind(raw))
          .map((raw) => this.model.fromEntity(raw, options.select)),
        continuationToken: page.continuationToken,
      };
    }
  }

  /** Every entity matching, across pages. */
  async *query(options: QueryOptions = {}): AsyncGenerator<Stored<Infer<S>>> {
    for await (const page of this.pages(options)) yield* page.items;
  }

  async list(options: QueryOptions = {}): Promise<Stored<Infer<S>>[]> {
    const all: Stored<Infer<S>>[] = [];
    for await (const item of this.query(options)) all.push(item);
    return all;
  }
}

export type { WireEntity };
