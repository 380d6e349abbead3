// Stores rows in a table through entity group transactions: rows of one partition go together, up
// to 100 per transaction and 4 MiB per request. Rows are grouped by partition within a window of
// the last `groupWindowRows` rows (or `groupWindowBytes`), so a file whose rows alternate between
// partitions still fills transactions; past the window, the oldest open group is sent. Transactions
// of different partitions run concurrently; those of one partition in order, so a later row of a
// key wins as in the file.
// 500/503 answers are retried with backoff (still failing after that, or no such table, stops the
// write); a transaction refused because of one entity is sent again without it, and that entity
// goes to the rejects file with the service's reason.
import assert from 'node:assert/strict';
import { RestError, type TableClient, type TransactionAction } from '@azure/data-tables';
import { CliError } from './command.js';
import { type Row, RowError, requireKeys } from './formats/row.js';
import type { RejectsFile } from './rejects.js';
import { defaultRetryPolicy, isRetryable, withRetries } from './retry.js';
import { type SdkEntity, toSdkEntity } from './sdk-entity.js';
import { errorCodeOf, reasonOf } from './service-errors.js';

export const writeModes = ['insert', 'upsert', 'merge'] as const;
export type WriteMode = (typeof writeModes)[number];

/** The service's limits for one entity group transaction (Azure REST: performing-entity-group-transactions). */
const batchEntitiesMax = 100;
/** Under the 4 MiB request limit, leaving room for the multipart envelope of 100 operations. */
const batchBytesMax = 3.5 * 1024 * 1024;
const batchesInFlightMax = 8;
/** Rows held back to group them by partition (documented in `cerulean import --help` and docs/cli.md). */
export const groupWindowRows = 10_000;
const groupWindowBytes = 64 * 1024 * 1024;

interface Item {
  readonly entity: SdkEntity;
  readonly bytes: number;
  readonly line: number | undefined;
  readonly input: unknown;
}

interface OpenGroup {
  readonly items: Item[];
  bytes: number;
  readonly rowKeys: Set<string>;
}

export interface WriterOptions {
  /** Insert mode: an entity whose keys exist already is left as it is and counted, not rejected. */
  readonly skipExisting?: boolean;
  readonly onStored?: (entities: number) => void;
}

export class EntityWriter {
  stored = 0;
  /** Entities left as they were (skipExisting). */
  skipped = 0;
  /** Open groups by PartitionKey, oldest first. */
  private readonly open = new Map<string, OpenGroup>();
  private heldRows = 0;
  private heldBytes = 0;
  private readonly inFlight = new Map<Promise<void>, string>();
  private fatal: Error | undefined;

  constructor(
    private readonly client: TableClient,
    private readonly mode: WriteMode,
    private readonly rejects: RejectsFile,
    private readonly options: WriterOptions = {},
  ) {
    assert(!options.skipExisting || mode === 'insert', 'skipExisting applies to insert mode');
  }

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
    const group = this.open.get(entity.partitionKey);
    // An entity may appear only once in a transaction: a repeated key closes the group.
    if (group !== undefined && (group.bytes + bytes > batchBytesMax || group.rowKeys.has(entity.rowKey))) {
      await this.flush(entity.partitionKey);
    }
    const target = this.open.get(entity.partitionKey) ?? this.openGroup(entity.partitionKey);
    target.items.push({ entity, bytes, line, input });
    target.bytes += bytes;
    target.rowKeys.add(entity.rowKey);
    this.heldRows++;
    this.heldBytes += bytes;
    if (target.items.length === batchEntitiesMax) await this.flush(entity.partitionKey);
    while (this.heldRows > groupWindowRows || this.heldBytes > groupWindowBytes) {
      await this.flush(this.open.keys().next().value!);
    }
  }

  /** Sends what is held and waits for every transaction; throws if the table cannot be written at all. */
  async finish(): Promise<void> {
    for (const partitionKey of [...this.open.keys()]) await this.flush(partitionKey);
    await this.settle();
  }

  /** Drops what is held (an interrupted run) and waits for the transactions under way. */
  async abandon(): Promise<number> {
    const dropped = this.heldRows;
    this.open.clear();
    this.heldRows = this.heldBytes = 0;
    await this.settle();
    return dropped;
  }

  private async settle(): Promise<void> {
    await Promise.all(this.inFlight.keys());
    if (this.fatal) throw this.fatal;
  }

  private openGroup(partitionKey: string): OpenGroup {
    const group: OpenGroup = { items: [], bytes: 0, rowKeys: new Set() };
    this.open.set(partitionKey, group);
    return group;
  }

  private async flush(partitionKey: string): Promise<void> {
    const group = this.open.get(partitionKey);
    if (group === undefined) return;
    this.open.delete(partitionKey);
    this.heldRows -= group.items.length;
    this.heldBytes -= group.bytes;
    const items = group.items;
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
      this.options.onStored?.(items.length);
      return;
    } catch (error) {
      if (isTableWide(error) || isRetryable(error)) throw tableWideError(error, this.client.tableName);
      if (this.options.skipExisting && errorCodeOf(error) === 'EntityAlreadyExists') {
        await this.sendAbsent(items);
        return;
      }
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

  /**
   * skipExisting: which of `items` (one partition) exist already is asked in one query over their
   * RowKey range, rather than one failed transaction per existing entity; the others are sent.
   */
  private async sendAbsent(items: readonly Item[]): Promise<void> {
    const partitionKey = items[0]!.entity.partitionKey;
    const rowKeys = items.map((item) => item.entity.rowKey).sort();
    const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;
    const filter =
      `PartitionKey eq ${quote(partitionKey)} and RowKey ge ${quote(rowKeys[0]!)} ` +
      `and RowKey le ${quote(rowKeys.at(-1)!)}`;
    const existing = new Set<string>();
    const pages = this.client
      .listEntities({ queryOptions: { filter, select: ['RowKey'] } })
      .byPage({ maxPageSize: 1000 });
    for await (const page of pages) for (const entity of page) existing.add(entity.rowKey!);
    const absent = items.filter((item) => !existing.has(item.entity.rowKey));
    this.skipped += items.length - absent.length;
    if (absent.length === items.length && items.length === 1) {
      this.rejects.add({
        line: items[0]!.line,
        reason: 'the service says it exists, but a query does not find it',
        input: items[0]!.input,
      });
    } else if (absent.length === items.length) {
      for (const item of items) await this.send([item]); // none exists after all: find the failing one
    } else if (absent.length > 0) {
      await this.send(absent);
    }
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
