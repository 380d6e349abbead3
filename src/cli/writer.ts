// Stores rows in a table through entity group transactions: consecutive rows of one partition go
// together, up to 100 per transaction and 4 MiB per request. Transactions of different partitions
// run concurrently; those of one partition in order, so a later row of a key wins as in the file.
// 500/503 answers are retried with backoff (still failing after that, or no such table, stops the
// write); a transaction refused because of one entity is sent again without it, and that entity
// goes to the rejects file with the service's reason.
import { RestError, type TableClient, type TransactionAction } from '@azure/data-tables';
import { CliError } from './command.js';
import { type Row, RowError, requireKeys } from './formats/row.js';
import type { RejectsFile } from './rejects.js';
import { defaultRetryPolicy, isRetryable, withRetries } from './retry.js';
import { type SdkEntity, toSdkEntity } from './sdk-entity.js';
import { errorCodeOf, reasonOf } from './service-errors.js';

export const writeModes = ['insert', 'upsert', 'merge'] as const;
export type WriteMode = (typeof writeModes)[number];

/** The service's limits for one entity group transaction (batch-and-transactions.md). */
const batchEntitiesMax = 100;
/** Under the 4 MiB request limit, leaving room for the multipart envelope of 100 operations. */
const batchBytesMax = 3.5 * 1024 * 1024;
const batchesInFlightMax = 8;

interface Item {
  readonly entity: SdkEntity;
  readonly bytes: number;
  readonly line: number | undefined;
  readonly input: unknown;
}

export class EntityWriter {
  stored = 0;
  private batch: Item[] = [];
  private batchBytes = 0;
  private readonly batchRowKeys = new Set<string>();
  private readonly inFlight = new Map<Promise<void>, string>();
  private fatal: Error | undefined;

  constructor(
    private readonly client: TableClient,
    private readonly mode: WriteMode,
    private readonly rejects: RejectsFile,
    private readonly onStored: (entities: number) => void = () => {},
  ) {}

  /** Queues a row (or a row the reader could not parse: `row` is then a RowError). */
  async add(row: Row | RowError, line: number | undefined, input: unknown): Promise<void> {
    if (this.fatal) throw this.fatal;
    let entity: SdkEntity;
    try {
      if (row instanceof RowError) throw row;
      entity = toSdkEntity(row, requireKeys(row));
    } catch (error) {
      if (!(error instanceof RowError)) throw error;
      this.rejects.add({ line, reason: error.message, input });
      return;
    }
    const bytes = Buffer.byteLength(JSON.stringify(entity));
    const current = this.batch[0]?.entity.partitionKey;
    if (
      (current !== undefined && current !== entity.partitionKey) ||
      this.batch.length === batchEntitiesMax ||
      this.batchBytes + bytes > batchBytesMax ||
      this.batchRowKeys.has(entity.rowKey) // an entity may appear only once in a transaction
    ) {
      await this.flush();
    }
    this.batch.push({ entity, bytes, line, input });
    this.batchBytes += bytes;
    this.batchRowKeys.add(entity.rowKey);
  }

  /** Sends what is queued and waits for every transaction; throws if the table cannot be written at all. */
  async finish(): Promise<void> {
    await this.flush();
    await Promise.all(this.inFlight.keys());
    if (this.fatal) throw this.fatal;
  }

  private async flush(): Promise<void> {
    if (this.batch.length === 0) return;
    const items = this.batch;
    const partitionKey = items[0]!.entity.partitionKey;
    this.batch = [];
    this.batchBytes = 0;
    this.batchRowKeys.clear();
    // Wait for a free slot and for the previous transaction of this partition.
    while (this.inFlight.size >= batchesInFlightMax || [...this.inFlight.values()].includes(partitionKey)) {
      await Promise.race(this.inFlight.keys());
    }
    if (this.fatal) throw this.fatal;
    const sending: Promise<void> = this.send(items)
      .catch((error: unknown) => {
        this.fatal ??= error as Error;
      })
      .finally(() => this.inFlight.delete(sending));
    this.inFlight.set(sending, partitionKey);
  }

  /** Stores `items`, rejecting those the service refuses; throws only for table-wide failures. */
  private async send(items: readonly Item[]): Promise<void> {
    try {
      await withRetries(() => this.submit(items));
      this.stored += items.length;
      this.onStored(items.length);
      return;
    } catch (error) {
      if (isTableWide(error) || isRetryable(error)) throw tableWideError(error, this.client.tableName);
      if (items.length === 1) {
        this.rejects.add({ line: items[0]!.line, reason: reasonOf(error), input: items[0]!.input });
        return;
      }
      const index = failedIndex(error);
      if (index !== undefined && index < items.length) {
        const item = items[index]!;
        this.rejects.add({ line: item.line, reason: reasonOf(error), input: item.input });
        await this.send(items.filter((_, i) => i !== index));
        return;
      }
    }
    for (const item of items) await this.send([item]); // the failing entity is unknown: one by one
  }

  private async submit(items: readonly Item[]): Promise<void> {
    if (items.length === 1) {
      const entity = items[0]!.entity;
      if (this.mode === 'insert') await this.client.createEntity(entity);
      else await this.client.upsertEntity(entity, this.mode === 'upsert' ? 'Replace' : 'Merge');
      return;
    }
    const actions: TransactionAction[] = items.map(({ entity }) =>
      this.mode === 'insert' ? ['create', entity] : ['upsert', entity, this.mode === 'upsert' ? 'Replace' : 'Merge'],
    );
    await this.client.submitTransaction(actions);
  }
}

/** Failures no row can avoid: no such table, no access. */
function isTableWide(error: unknown): boolean {
  if (!(error instanceof RestError)) return false;
  return error.statusCode === 401 || error.statusCode === 403 || errorCodeOf(error) === 'TableNotFound';
}

/** Stops the whole write: the table is missing or closed to us, or the service stayed unavailable. */
function tableWideError(error: unknown, table: string): Error {
  if (errorCodeOf(error) === 'TableNotFound') {
    return new CliError(`table ${table} does not exist (--create-table creates it)`);
  }
  const retried = isRetryable(error) ? ` (gave up after ${defaultRetryPolicy.attemptsMax} attempts)` : '';
  return new CliError(`cannot write to table ${table}: ${reasonOf(error)}${retried}`);
}

/** The index of the failed operation: the service prefixes a transaction's error message with it. */
function failedIndex(error: unknown): number | undefined {
  if (!(error instanceof RestError)) return undefined;
  const match = /^(\d+):/.exec(error.message) ?? /"value":"(\d+):/.exec(error.message);
  return match === null ? undefined : Number(match[1]);
}
