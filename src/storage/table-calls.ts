// TableStore.getTableEntity and TableStore.commitToTable for a store whose table lookup is cheap (an
// embedded engine, a model, a wrapper that must see the table first): getTable, then the
// entity call, as two calls. An engine where every call is a database round trip does both in
// one statement instead (postgres/).
import type { TableStore, TableCommit, TableEntity, Write } from './table-store.js';

type Parts = Pick<TableStore, 'getTable' | 'getEntity' | 'commit'>;

export async function getTableThenEntity(
  store: Parts,
  account: string,
  name: string,
  partitionKey: string,
  rowKey: string,
): Promise<TableEntity | undefined> {
  const table = await store.getTable(account, name);
  if (table === undefined) return undefined;
  return { table, entity: await store.getEntity(table, partitionKey, rowKey) };
}

export async function getTableThenCommit(
  store: Parts,
  account: string,
  name: string,
  writes: readonly Write[],
): Promise<TableCommit> {
  const table = await store.getTable(account, name);
  if (table === undefined) return { table, result: { ok: false, index: 0, failure: 'tableNotFound' } };
  return { table, result: await store.commit(table, writes) };
}
