// Intra-partition secondary index (design guide): each indexed attribute gets a copy of the entity
// in the same partition under a RowKey built from that attribute. The entity and all its copies
// are written in one entity group transaction, guarded by If-Match on the entity, so the copies can
// never drift from it: either every row changes or none does.
import type { TableClient, TransactionAction } from '@azure/data-tables';
import { codecs } from '../keys.js';
import {
  deletingProperty,
  isDeleting,
  KeyTemplate,
  reserved,
  writtenBy,
  type KeyPart,
  type Model,
  type RawEntity,
  type Stored,
  type WireEntity,
} from '../model.js';
import { keys } from '../filter.js';
import {
  defaultRetryPolicy,
  newOperationId,
  optimistic,
  raceOnMissingRow,
  statusOf,
  withRetry,
  type RetryPolicy,
} from '../retry.js';
import type { Infer, Schema } from '../schema.js';
import { readRaw, rawPages, submitBatch } from '../table.js';

export interface IndexDefinition<S extends Schema> {
  /** Fields of the index key, e.g. ['email'] or ['lastName', 'firstName']. */
  key: readonly KeyPart<S>[];
  /** Unique: the index key alone is the RowKey, so a second entity with the same value is refused (409). */
  unique?: boolean;
}

/** Marks index rows; the kind marker tells them from the entity. */
const indexKindSuffix = '#index:';

export class IndexedTable<S extends Schema, I extends string> {
  private readonly templates: ReadonlyMap<I, { template: KeyTemplate<S>; unique: boolean }>;
  private readonly retry: RetryPolicy;

  constructor(
    readonly client: TableClient,
    readonly model: Model<S>,
    indexes: Record<I, IndexDefinition<S>>,
    options: { retry?: RetryPolicy; maxConflictRetries?: number } = {},
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
    this.maxConflictRetries = options.maxConflictRetries ?? 32;
    const entries = Object.entries(indexes) as [I, IndexDefinition<S>][];
    this.templates = new Map(
      entries.map(([name, def]) => [
        name,
        // RowKey: <kind> <index name> <index fields…> [<entity RowKey>]; the constant prefix keeps
        // each index in its own key range, away from the entities.
        {
          template: new KeyTemplate(model.schema, [{ literal: `${model.kind}${indexKindSuffix}${name}` }, ...def.key]),
          unique: def.unique ?? false,
        },
      ]),
    );
  }

  private readonly maxConflictRetries: number;

  /** RowKey of index `name`'s row for these values. */
  indexRowKey(name: I, values: Infer<S>, entityRowKey: string): string {
    const { template, unique } = this.templates.get(name)!;
    const key = template.encode(values);
    return unique ? key : `${key} ${codecs.text().encode(entityRowKey)}`;
  }

  /** Every row (entity first, then its index copies) for these values. */
  private rowsFor(values: Infer<S>, operationId: string, previous?: RawEntity): WireEntity[] {
    const entity = this.model.toEntity(values, operationId, previous);
    const rows = [entity];
    for (const name of this.templates.keys()) {
      const copy: WireEntity = { ...entity, rowKey: this.indexRowKey(name, values, entity.rowKey) };
      copy[reserved.kind] = { value: `${this.model.kind}${indexKindSuffix}${name}`, type: 'String' };
      rows.push(copy);
    }
    return rows;
  }

  async get(key: Partial<Infer<S>>): Promise<Stored<Infer<S>> | undefined> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    const raw = await readRaw(this.client, partitionKey, rowKey, this.retry);
    return raw && !isDeleting(raw) ? this.model.fromEntity(raw) : undefined;
  }

  /** Inserts the entity and its index rows atomically; 409 if the entity or a unique value exists. */
  async create(values: Infer<S>): Promise<void> {
    const operationId = newOperationId();
    const rows = this.rowsFor(values, operationId);
    await withRetry(async () => {
      try {
        await submitBatch(
          this.client,
          rows.map((row): TransactionAction => ['create', row]),
        );
      } catch (error) {
        if (statusOf(error) !== 409) throw error;
        const existing = await readRaw(this.client, rows[0]!.partitionKey, rows[0]!.rowKey, this.retry);
        // A retry after a lost response meets its own rows: that is success.
        if (writtenBy(existing, operationId)) return;
        // A delete that stopped half-way: finish it, then insert.
        if (existing && isDeleting(existing)) {
          await this.finishDelete(existing.partitionKey, existing.rowKey);
          return submitBatch(
            this.client,
            rows.map((row): TransactionAction => ['create', row]),
          );
        }
        throw error;
      }
    }, this.retry);
  }

  /**
   * Optimistic update of the entity and its index rows in one transaction (If-Match on the entity):
   * a concurrent writer makes it fail with 412 and re-read, at most `maxConflictRetries` times.
   */
  async update(key: Partial<Infer<S>>, change: (current: Infer<S>) => Infer<S>): Promise<Stored<Infer<S>> | undefined> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    return optimistic(
      async (operationId) => {
        const raw = await readRaw(this.client, partitionKey, rowKey, this.retry);
        if (raw === undefined || isDeleting(raw)) return undefined;
        if (writtenBy(raw, operationId)) return this.model.fromEntity(raw);
        const current = this.model.fromEntity(raw);
        const next = change(structuredClone(current));
        const [entity, ...copies] = this.rowsFor(next, operationId, raw);
        if (entity!.partitionKey !== partitionKey || entity!.rowKey !== rowKey)
          throw new Error('update must not change the entity keys');
        const oldKeys = new Set([...this.templates.keys()].map((name) => this.indexRowKey(name, current, rowKey)));
        const actions: TransactionAction[] = [['update', entity!, 'Replace', { etag: raw.etag! }]];
        for (const copy of copies) {
          // A unique value that changed must be created (409 if another entity holds it).
          const unique = oldKeys.has(copy.rowKey) ? false : this.isUniqueKey(copy.rowKey);
          actions.push(unique ? ['create', copy] : ['upsert', copy, 'Replace']);
          oldKeys.delete(copy.rowKey);
        }
        for (const stale of oldKeys) actions.push(['delete', { partitionKey, rowKey: stale }]);
        await raceOnMissingRow(() => submitBatch(this.client, actions));
        return this.get(key);
      },
      { maxAttempts: this.maxConflictRetries, retry: this.retry },
    );
  }

  private isUniqueKey(indexRowKey: string): boolean {
    for (const [name, { unique }] of this.templates) {
      if (unique && indexRowKey.startsWith(this.templates.get(name)!.template.range({}).ge + ' ')) return true;
    }
    return false;
  }

  /**
   * Deletes the entity and its index rows. The SDK sends transaction deletes without If-Match, so
   * every step is guarded by If-Match on the entity row instead: (1) mark the entity and its copies
   * deleted; (2) delete the copies and reduce the entity to a bare marker; (3) delete the marker with
   * If-Match. Readers and writers treat marked rows as absent, and whoever meets a marked row (the
   * next delete or create of that key) finishes the steps, so a crash in between loses nothing and
   * an entity re-created meanwhile is never touched.
   */
  async delete(key: Partial<Infer<S>>): Promise<void> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    await optimistic(
      async (operationId) => {
        const raw = await readRaw(this.client, partitionKey, rowKey, this.retry);
        if (raw === undefined) return;
        if (!isDeleting(raw)) {
          const rows = this.rowsFor(this.model.fromEntity(raw), operationId, raw);
          for (const row of rows) row[deletingProperty] = { value: true, type: 'Boolean' };
          const [entity, ...copies] = rows;
          await raceOnMissingRow(() =>
            submitBatch(this.client, [
              ['update', entity!, 'Replace', { etag: raw.etag! }],
              ...copies.map((copy): TransactionAction => ['upsert', copy, 'Replace']),
            ]),
          );
        }
        await this.finishDelete(partitionKey, rowKey);
      },
      { maxAttempts: this.maxConflictRetries, retry: this.retry },
    );
  }

  /** Steps 2 and 3 of a delete, from whatever state a marked row is in; returns when no marked row is left. */
  private async finishDelete(partitionKey: string, rowKey: string): Promise<void> {
    await optimistic(
      async () => {
        const raw = await readRaw(this.client, partitionKey, rowKey, this.retry);
        if (raw === undefined || !isDeleting(raw)) return; // finished, or re-created by someone else
        if (this.model.isKind(raw)) {
          const current = this.model.fromEntity(raw);
          const marker: WireEntity = { partitionKey, rowKey, [deletingProperty]: { value: true, type: 'Boolean' } };
          const actions: TransactionAction[] = [['update', marker, 'Replace', { etag: raw.etag! }]];
          for (const name of this.templates.keys())
            actions.push(['delete', { partitionKey, rowKey: this.indexRowKey(name, current, rowKey) }]);
          await raceOnMissingRow(() => submitBatch(this.client, actions));
        }
        const marker = await readRaw(this.client, partitionKey, rowKey, this.retry);
        if (marker === undefined || !isDeleting(marker) || this.model.isKind(marker))
          throw Object.assign(new Error('the row changed'), { statusCode: 412 });
        await raceOnMissingRow(() => this.client.deleteEntity(partitionKey, rowKey, { etag: marker.etag! }));
      },
      { maxAttempts: this.maxConflictRetries, retry: this.retry },
    );
  }

  /**
   * Entities of one partition by an indexed attribute: `values` holds the partition key fields and a
   * leading part of the index key (all of it for an exact match). One range query, no second read.
   */
  async findBy(name: I, values: Partial<Infer<S>>): Promise<Stored<Infer<S>>[]> {
    const { template } = this.templates.get(name)!;
    const partitionKey = this.model.partitionKey.encode(values);
    const range = template.range(values);
    const filter = keys.partitionKey('eq', partitionKey).and(keys.rowKeyRange(range));
    const found: Stored<Infer<S>>[] = [];
    for await (const page of rawPages(this.client, { filter }, this.retry)) {
      for (const raw of page.items) if (!isDeleting(raw)) found.push(this.model.decodeRow(raw));
    }
    return found;
  }

  /** Entities of one partition (the index rows skipped). */
  async listPartition(values: Partial<Infer<S>>): Promise<Stored<Infer<S>>[]> {
    const partitionKey = this.model.partitionKey.encode(values);
    const found: Stored<Infer<S>>[] = [];
    for await (const page of rawPages(this.client, { filter: keys.partitionKey('eq', partitionKey) }, this.retry)) {
      for (const raw of page.items)
        if (this.model.isKind(raw) && !isDeleting(raw)) found.push(this.model.fromEntity(raw));
    }
    return found;
  }

  /**
   * Checks one partition's invariant: every entity has exactly its index rows, with equal content,
   * and there is no other index row. Returns the differences (empty when consistent).
   */
  async verifyPartition(values: Partial<Infer<S>>): Promise<string[]> {
    const partitionKey = this.model.partitionKey.encode(values);
    const expected = new Map<string, string>();
    const actual = new Map<string, string>();
    const content = (raw: RawEntity) =>
      JSON.stringify(
        Object.entries(this.model.decodeRow(raw))
          .filter(([name]) => name in this.model.schema)
          .map(([n, v]) => [n, String(v)]),
      );
    for await (const page of rawPages(this.client, { filter: keys.partitionKey('eq', partitionKey) }, this.retry)) {
      for (const raw of page.items) {
        if (this.model.isKind(raw)) {
          const current = this.model.fromEntity(raw);
          for (const name of this.templates.keys())
            expected.set(this.indexRowKey(name, current, raw.rowKey), content(raw));
        } else if (
          String((raw[reserved.kind] as { value?: unknown })?.value ?? '').startsWith(this.model.kind + indexKindSuffix)
        ) {
          actual.set(raw.rowKey, content(raw));
        }
      }
    }
    const problems: string[] = [];
    for (const [rowKey, body] of expected) {
      if (!actual.has(rowKey)) problems.push(`missing index row ${rowKey}`);
      else if (actual.get(rowKey) !== body) problems.push(`index row ${rowKey} differs from its entity`);
    }
    for (const rowKey of actual.keys()) if (!expected.has(rowKey)) problems.push(`orphan index row ${rowKey}`);
    return problems;
  }
}
