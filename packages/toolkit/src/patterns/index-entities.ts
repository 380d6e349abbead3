// Index entities (design guide): one row per indexed value listing the keys of the entities that
// hold it, e.g. every employee with last name "Jones". The list row lives in the entity's partition
// and is written in the same transaction as the entity, both under If-Match, so it cannot drift.
// A lookup is one point read of the list plus point reads of the entities it names.
import type { TableClient } from '@azure/data-tables';
import { codecs, joinComponents } from '../keys.js';
import { limits, LimitError } from '../limits.js';
import { isDeleting, wireString, type Model, type RawEntity, type Stored, type WireEntity } from '../model.js';
import { updateGroup } from '../group.js';
import { ConcurrencyConflictError, defaultRetryPolicy, newOperationId, type RetryPolicy } from '../retry.js';
import type { Infer, Schema } from '../schema.js';
import { readRaw } from '../table.js';

const listProperty = 'rowKeys';

export class IndexEntityTable<S extends Schema> {
  private readonly retry: RetryPolicy;

  constructor(
    readonly client: TableClient,
    readonly model: Model<S>,
    /** The indexed field (a string field). */
    readonly field: keyof S & string,
    options: { retry?: RetryPolicy } = {},
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
  }

  /** RowKey of the list row for a value. */
  listRowKey(value: string): string {
    return joinComponents([
      '!index',
      codecs.text().encode(this.model.kind),
      codecs.text().encode(this.field),
      codecs.text().encode(value),
    ]);
  }

  private listRow(partitionKey: string, value: string, rowKeys: string[]): WireEntity | null {
    if (rowKeys.length === 0) return null;
    const text = JSON.stringify(rowKeys.sort());
    if (text.length > limits.stringUtf16Units) {
      throw new LimitError(
        'PropertyValueTooLarge',
        `the index entity for ${JSON.stringify(value)} would list ${rowKeys.length} entities (${text.length} characters)`,
      );
    }
    return {
      partitionKey,
      rowKey: this.listRowKey(value),
      [listProperty]: { value: text, type: 'String' },
      _kind: { value: `${this.model.kind}#list`, type: 'String' },
    };
  }

  private static listOf(raw: RawEntity | undefined): string[] {
    return raw && !isDeleting(raw) ? (JSON.parse(wireString(raw[listProperty]) ?? '[]') as string[]) : [];
  }

  /**
   * Writes the entity (insert, or replace when `change` is given for an existing one) and moves its
   * key between list rows as the indexed value changes, all in one transaction under If-Match.
   * `values` gives the keys; `change` maps the current entity (undefined if none) to its next state,
   * or to null to delete it.
   */
  async write(key: Partial<Infer<S>>, change: (current: Infer<S> | undefined) => Infer<S> | null): Promise<void> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    const valueOf = (v: Infer<S> | null | undefined) => (v ? String(v[this.field as keyof typeof v]) : undefined);
    const decode = (raw: RawEntity | undefined) => (raw && !isDeleting(raw) ? this.model.fromEntity(raw) : undefined);
    for (let round = 1; round <= 32; round++) {
      // The list rows involved depend on the old and new values: plan them from a first read.
      const before = decode(await readRaw(this.client, partitionKey, rowKey, this.retry));
      const planned = valueOf(before);
      const values = [...new Set([planned, valueOf(change(before && structuredClone(before)))])].filter(
        (v): v is string => v !== undefined,
      );
      const operationId = newOperationId();
      const done = await updateGroup(
        this.client,
        partitionKey,
        [rowKey, ...values.map((value) => this.listRowKey(value))],
        ([entity, ...lists]) => {
          const current = decode(entity);
          const next = change(current && structuredClone(current));
          // The value changed since the plan: plan again.
          if (valueOf(current) !== planned || (next && !values.includes(valueOf(next)!)))
            return { writes: [], result: false };
          const writes: (WireEntity | null)[] = [next ? this.model.toEntity(next, operationId, entity) : null];
          values.forEach((value, index) => {
            const listed = new Set(IndexEntityTable.listOf(lists[index]));
            listed.delete(rowKey);
            if (valueOf(next) === value) listed.add(rowKey);
            writes.push(this.listRow(partitionKey, value, [...listed]));
          });
          return { writes, result: true };
        },
        { retry: this.retry },
      );
      if (done) return;
    }
    throw new ConcurrencyConflictError('the indexed value kept changing; giving up');
  }

  /** Entities of a partition whose field equals `value`: one read of the list, then point reads. */
  async find(partitionValues: Partial<Infer<S>>, value: string): Promise<Stored<Infer<S>>[]> {
    const partitionKey = this.model.partitionKey.encode(partitionValues);
    const list = IndexEntityTable.listOf(await readRaw(this.client, partitionKey, this.listRowKey(value), this.retry));
    const rows = await Promise.all(list.map((rowKey) => readRaw(this.client, partitionKey, rowKey, this.retry)));
    return rows.flatMap((raw) => (raw && !isDeleting(raw) ? [this.model.fromEntity(raw)] : []));
  }
}
