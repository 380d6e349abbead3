// Loading and reading back whole tables for the cases.
import assert from 'node:assert/strict';
import type { Entity, Properties } from '../../../../src/domain/entity.js';
import type { TableStore, TableInfo, Write } from '../../../../src/storage/table-store.js';
import { assertSameProperties, checkEntity, compareKeys, keyText, put, show, walk, type Keys } from '../support.js';

export interface Row extends Keys {
  readonly properties: Properties;
}

/**
 * Puts every row, one commit per partition and at most 100 writes (as the service commits), all
 * issued together (an engine may group them into one durable step).
 */
export async function seedRows(store: TableStore, table: TableInfo, rows: readonly Row[]): Promise<bigint[]> {
  const byPartition = new Map<string, Write[]>();
  for (const row of rows) {
    const writes = byPartition.get(row.partitionKey) ?? [];
    writes.push(put(row.partitionKey, row.rowKey, row.properties));
    byPartition.set(row.partitionKey, writes);
  }
  const batches = [...byPartition.values()].flatMap((writes) =>
    Array.from({ length: Math.ceil(writes.length / 100) }, (_, i) => writes.slice(100 * i, 100 * i + 100)),
  );
  const results = await Promise.all(batches.map((batch) => store.commit(table, batch)));
  return results.map((result) => {
    assert.ok(result.ok, `seeding ${table.name}: ${show(result)}`);
    return result.timestamp;
  });
}

/** The rows sorted by key, as a scan must return them. */
export function sortedRows<T extends Keys>(rows: readonly T[]): T[] {
  return [...rows].sort(compareKeys);
}

/** A table's whole content, read with one scan walk. */
export async function snapshot(store: TableStore, table: TableInfo): Promise<Entity[]> {
  return (await walk(store, table, {})).entities;
}

/** Two snapshots hold the same entities: keys, versions and properties. */
export function assertSameSnapshot(actual: readonly Entity[], expected: readonly Entity[], what: string): void {
  assert.deepEqual(actual.map(keyText), expected.map(keyText), `${what}: the same keys`);
  actual.forEach((entity, i) => {
    assert.equal(entity.timestamp, expected[i]!.timestamp, `${what}: version of ${keyText(entity)} unchanged`);
    assertSameProperties(entity.properties, expected[i]!.properties, `${what}: ${keyText(entity)}`);
  });
}

/** getEntity, with the keys checked and the entity's invariants. */
export async function read(
  store: TableStore,
  table: TableInfo,
  partitionKey: string,
  rowKey: string,
): Promise<Entity | undefined> {
  const entity = await store.getEntity(table, partitionKey, rowKey);
  if (entity === undefined) return undefined;
  assert.equal(entity.partitionKey, partitionKey, 'getEntity returns the requested PartitionKey');
  assert.equal(entity.rowKey, rowKey, 'getEntity returns the requested RowKey');
  return checkEntity(entity);
}
