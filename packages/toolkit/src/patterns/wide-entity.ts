// Wide entities (design guide): a logical entity with more than 252 properties (or more than
// 1 MiB) split across rows of one partition, written in one entity group transaction and read back
// whole with one range query. Every part records the write it belongs to and how many parts that
// write has, so a reader can prove it saw one complete version.
import { randomUUID } from 'node:crypto';
import type { TableClient, TransactionAction } from '@azure/data-tables';
import { codecs, joinComponents, prefixRange } from '../keys.js';
import { limits, LimitError, validateEntity, validatePropertyName } from '../limits.js';
import { keys } from '../filter.js';
import { wireString, type RawEntity } from '../model.js';
import { defaultRetryPolicy, optimistic, raceOnMissingRow, statusOf, type RetryPolicy } from '../retry.js';
import type { WireProperties } from '../schema.js';
import { rawPages, submitBatch } from '../table.js';

const meta = { write: '_write', part: '_part', parts: '_parts' } as const;
/** Room left in each part for the bookkeeping properties and the keys. */
const propertiesPerPart = limits.customProperties - Object.keys(meta).length;
const bytesPerPart = limits.entityBytes - 8 * 1024;
const partCodec = codecs.uint(3);
const readAttempts = 3;

export class IntegrityError extends Error {
  override name = 'IntegrityError';
}

export class WideEntityStore {
  private readonly retry: RetryPolicy;

  constructor(
    readonly client: TableClient,
    options: { retry?: RetryPolicy } = {},
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
  }

  private partKey(rowKey: string, part: number): string {
    return joinComponents([codecs.text().encode(rowKey), partCodec.encode(part)]);
  }

  /** Splits the properties into parts that each respect the per-entity limits. */
  private split(partitionKey: string, rowKey: string, properties: WireProperties): WireProperties[] {
    const parts: WireProperties[] = [];
    let current: WireProperties = {};
    let count = 0;
    let bytes = 0;
    for (const [name, value] of Object.entries(properties)) {
      validatePropertyName(name);
      if (name.startsWith('_'))
        throw new LimitError('PropertyNameInvalid', `${name}: names starting with _ are reserved for the toolkit`);
      // The larger of the service's accounting and the JSON the property takes (Azurite counts that).
      const size = Math.max(
        validateEntity(partitionKey, this.partKey(rowKey, 0), { [name]: value }),
        Buffer.byteLength(JSON.stringify({ [name]: value.value, [`${name}@odata.type`]: `Edm.${value.type}` })),
      );
      if (count === propertiesPerPart || bytes + size > bytesPerPart) {
        parts.push(current);
        current = {};
        count = 0;
        bytes = 0;
      }
      current[name] = value;
      count++;
      bytes += size;
    }
    parts.push(current);
    if (parts.length > limits.operationsPerBatch)
      throw new LimitError('TooManyOperations', `a wide entity of ${parts.length} parts does not fit one transaction`);
    return parts;
  }

  /**
   * Replaces the whole logical entity in one transaction: its parts are written and the parts of
   * an earlier, longer version deleted. Safe to retry: a repeat after a lost response rewrites the
   * same content.
   */
  async write(partitionKey: string, rowKey: string, properties: WireProperties): Promise<void> {
    const parts = this.split(partitionKey, rowKey, properties);
    const writeId = randomUUID();
    // Every write touches part 0 under If-Match (or creates it), so two writes of the same entity
    // cannot interleave: the later one to commit fails whole, re-reads and goes again.
    await optimistic(
      async () => {
        const existing = await this.readParts(partitionKey, rowKey);
        const etags = new Map(existing.map((row) => [row.rowKey, row.etag!]));
        const actions: TransactionAction[] = parts.map((part, index) => {
          const row = {
            partitionKey,
            rowKey: this.partKey(rowKey, index),
            ...part,
            [meta.write]: { value: writeId, type: 'String' },
            [meta.part]: { value: index, type: 'Int32' },
            [meta.parts]: { value: parts.length, type: 'Int32' },
          };
          const etag = etags.get(row.rowKey);
          return etag === undefined ? ['create', row] : ['update', row, 'Replace', { etag }];
        });
        for (const row of existing.slice(parts.length)) actions.push(['delete', { partitionKey, rowKey: row.rowKey }]);
        try {
          await raceOnMissingRow(() => submitBatch(this.client, actions));
        } catch (error) {
          if (statusOf(error) === 409)
            throw Object.assign(new Error('a part was created concurrently'), { statusCode: 412 });
          throw error;
        }
      },
      { retry: this.retry },
    );
  }

  private async readParts(partitionKey: string, rowKey: string): Promise<RawEntity[]> {
    const range = prefixRange([codecs.text().encode(rowKey)]);
    const filter = keys.partitionKey('eq', partitionKey).and(keys.rowKeyRange(range));
    const rows: RawEntity[] = [];
    for await (const page of rawPages(this.client, { filter }, this.retry)) rows.push(...page.items);
    return rows;
  }

  /** The whole logical entity, or undefined; IntegrityError if its parts are not one complete write. */
  async read(partitionKey: string, rowKey: string): Promise<WireProperties | undefined> {
    // A query whose pages straddle a concurrent write can see parts of two writes; read again.
    for (let attempt = 1; ; attempt++) {
      const rows = await this.readParts(partitionKey, rowKey);
      if (rows.length === 0) return undefined;
      const writeIds = new Set(rows.map((row) => wireString(row[meta.write])));
      const expected = Number(wireString(rows[0]![meta.parts]));
      if (writeIds.size === 1 && rows.length === expected) return this.merge(rows);
      if (attempt === readAttempts) {
        throw new IntegrityError(
          `${rowKey}: ${rows.length} parts from ${writeIds.size} writes, expected ${expected} parts of one write`,
        );
      }
    }
  }

  private merge(rows: RawEntity[]): WireProperties {
    const whole: WireProperties = {};
    for (const row of rows) {
      for (const [name, value] of Object.entries(row)) {
        if (
          name.startsWith('_') ||
          name === 'partitionKey' ||
          name === 'rowKey' ||
          name === 'etag' ||
          name === 'timestamp'
        )
          continue;
        const typed = value as { value: string; type: WireProperties[string]['type'] };
        whole[name] = { value: typed.value, type: typed.type };
      }
    }
    return whole;
  }

  /** Deletes every part in one transaction. */
  async delete(partitionKey: string, rowKey: string): Promise<void> {
    await optimistic(
      async () => {
        const rows = await this.readParts(partitionKey, rowKey);
        await raceOnMissingRow(() =>
          submitBatch(
            this.client,
            rows.map((row): TransactionAction => ['delete', { partitionKey, rowKey: row.rowKey }]),
          ),
        );
      },
      { retry: this.retry },
    );
  }
}
