// Index entities (design guide): one row per indexed value listing the keys of the entities that
// hold it, e.g. every employee with last name "Jones". The list row lives in the entity's partition
// and is written in the same transaction as the entity, both under If-Match, so it cannot drift.
// A lookup is one point read of the list plus point reads of the entities it names.
//
// Option `blobs`: the lists live in blobs instead (the guide's first option, for lists beyond what
// one property holds): one blob per (partition, value), read and replaced under ETag conditions so
// concurrent writers never lose each other's keys. A blob cannot join the entity's transaction, so
// the order does the work: the key joins the new value's list before the entity is written, the
// list is rewritten once more after (see write()), and the key leaves the old value's list only
// while the entity does not hold that value. A lookup drops keys whose entity no longer holds the
// value, so a list may hold stale keys (after a writer died mid-way) but never misses an entity.
import { createHash } from 'node:crypto';
import type { TableClient } from '@azure/data-tables';
import type { ContainerClient } from '@azure/storage-blob';
import { readBlob, updateBlob } from '../blob.js';
import { codecs, joinComponents } from '../keys.js';
import { limits, LimitError } from '../limits.js';
import { isDeleting, wireString, type Model, type RawEntity, type Stored, type WireEntity } from '../model.js';
import { updateGroup } from '../group.js';
import { ConcurrencyConflictError, defaultRetryPolicy, newOperationId, type RetryPolicy } from '../retry.js';
import type { Infer, Schema } from '../schema.js';
import { readRaw } from '../table.js';

const listProperty = 'rowKeys';

export interface IndexEntityOptions {
  retry?: RetryPolicy;
  /** Keep the lists in blobs of this container (which must exist) instead of list rows. */
  blobs?: ContainerClient;
}

export class IndexEntityTable<S extends Schema> {
  private readonly retry: RetryPolicy;
  private readonly blobs: ContainerClient | undefined;

  constructor(
    readonly client: TableClient,
    readonly model: Model<S>,
    /** The indexed field (a string field). */
    readonly field: keyof S & string,
    options: IndexEntityOptions = {},
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
    this.blobs = options.blobs;
  }

  /** With the blobs option: the blob listing the keys of a partition's entities with `value`. */
  listBlobName(partitionKey: string, value: string): string {
    const identity = [this.client.tableName, this.model.kind, this.field, partitionKey, value];
    return `index/${createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`;
  }

  private valueOf(entity: Infer<S> | null | undefined): string | undefined {
    return entity ? String(entity[this.field as keyof typeof entity]) : undefined;
  }

  private decode(raw: RawEntity | undefined): Infer<S> | undefined {
    return raw && !isDeleting(raw) ? this.model.fromEntity(raw) : undefined;
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
    if (this.blobs) return this.writeWithBlobs(this.blobs, key, change);
    const { partitionKey, rowKey } = this.model.keysOf(key);
    const valueOf = (v: Infer<S> | null | undefined) => this.valueOf(v);
    const decode = (raw: RawEntity | undefined) => this.decode(raw);
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

  /**
   * The blobs option's write: (1) the key joins the new value's list, (2) the entity is written
   * under If-Match on the version read (re-planned if it changed), (3) the new value's list is
   * rewritten, key included, so that a writer removing the key from it since (1), having read the
   * entity before (2), loses its ETag race and re-reads, (4) the key leaves the old value's list.
   */
  private async writeWithBlobs(
    blobs: ContainerClient,
    key: Partial<Infer<S>>,
    change: (current: Infer<S> | undefined) => Infer<S> | null,
  ): Promise<void> {
    const { partitionKey, rowKey } = this.model.keysOf(key);
    for (let round = 1; round <= 32; round++) {
      const before = this.decode(await readRaw(this.client, partitionKey, rowKey, this.retry));
      const planned = this.valueOf(before);
      const target = this.valueOf(change(before && structuredClone(before)));
      if (target !== undefined) await this.updateList(blobs, partitionKey, target, rowKey, 'add');
      const operationId = newOperationId();
      const done = await updateGroup(
        this.client,
        partitionKey,
        [rowKey],
        ([entity]) => {
          const current = this.decode(entity);
          const next = change(current && structuredClone(current));
          if (this.valueOf(current) !== planned || this.valueOf(next) !== target) return { writes: [], result: false };
          return { writes: [next ? this.model.toEntity(next, operationId, entity) : null], result: true };
        },
        { retry: this.retry },
      );
      if (!done) continue;
      if (target !== undefined) await this.updateList(blobs, partitionKey, target, rowKey, 'touch');
      if (planned !== undefined && planned !== target)
        await this.updateList(blobs, partitionKey, planned, rowKey, 'remove');
      return;
    }
    throw new ConcurrencyConflictError('the indexed value kept changing; giving up');
  }

  /**
   * One ETag-conditional change of a list blob. 'add' writes only if the key is missing; 'touch'
   * always writes (a new ETag); 'remove' takes the key out only if its entity, read after the
   * list, does not hold `value`, and deletes a list left empty.
   */
  private async updateList(
    blobs: ContainerClient,
    partitionKey: string,
    value: string,
    rowKey: string,
    how: 'add' | 'touch' | 'remove',
  ): Promise<void> {
    const holdsValue = async () =>
      this.valueOf(this.decode(await readRaw(this.client, partitionKey, rowKey, this.retry))) === value;
    await updateBlob(
      blobs,
      this.listBlobName(partitionKey, value),
      async (content) => {
        const keys = new Set(listInBlob(content));
        if (how === 'add' && keys.has(rowKey)) return undefined;
        if (how !== 'remove') keys.add(rowKey);
        else if (!keys.has(rowKey) || (await holdsValue())) return undefined;
        else keys.delete(rowKey);
        if (keys.size === 0) return null;
        return Buffer.from(JSON.stringify({ partitionKey, value, rowKeys: [...keys].sort() }));
      },
      { retry: this.retry },
    );
  }

  /**
   * Entities of a partition whose field equals `value`: one read of the list (a row, or a blob
   * with the blobs option), then point reads; keys whose entity no longer holds the value are left out.
   */
  async find(partitionValues: Partial<Infer<S>>, value: string): Promise<Stored<Infer<S>>[]> {
    const partitionKey = this.model.partitionKey.encode(partitionValues);
    const list = this.blobs
      ? listInBlob((await readBlob(this.blobs, this.listBlobName(partitionKey, value), this.retry))?.content)
      : IndexEntityTable.listOf(await readRaw(this.client, partitionKey, this.listRowKey(value), this.retry));
    const rows = await Promise.all(list.map((rowKey) => readRaw(this.client, partitionKey, rowKey, this.retry)));
    return rows.flatMap((raw) => {
      const entity = raw && !isDeleting(raw) ? this.model.fromEntity(raw) : undefined;
      return entity && this.valueOf(entity) === value ? [entity] : [];
    });
  }
}

function listInBlob(content: Buffer | undefined): string[] {
  return content === undefined ? [] : (JSON.parse(content.toString('utf8')) as { rowKeys: string[] }).rowKeys;
}
