// An optimistic read-modify-write of several rows of one partition as one entity group
// transaction: every row is written back under If-Match on the ETag it was read with, so the
// rows change together or not at all, and a concurrent writer makes the whole group re-read.
import type { TableClient, TransactionAction } from '@azure/data-tables';
import { deletingProperty, isDeleting, type RawEntity, type WireEntity } from './model.js';
import { defaultRetryPolicy, optimistic, raceOnMissingRow, statusOf, withRetry, type RetryPolicy } from './retry.js';
import { readRaw, submitBatch } from './table.js';

/** A row's next state: a wire entity to write, or null to delete it. */
export type RowChange = WireEntity | null;

/**
 * Reads `rowKeys` of `partitionKey` (missing rows and rows marked deleted come as undefined), lets
 * `change` compute each row's next state (undefined = leave it), and writes all of them in one
 * transaction under If-Match (new rows with create, so a concurrent insert also fails the group).
 * Retries on 412/409, at most `maxAttempts` rounds. `change` may run more than once: keep it free
 * of side effects.
 *
 * A transaction delete cannot carry If-Match, so a row to delete is first replaced, under If-Match
 * in the group, by a marker that every reader treats as absent; after the group committed, each
 * marker is deleted with If-Match on its own ETag (a row re-created meanwhile stays).
 */
export async function updateGroup<T>(
  client: TableClient,
  partitionKey: string,
  rowKeys: readonly string[],
  change: (rows: (RawEntity | undefined)[]) => { writes: (RowChange | undefined)[]; result: T },
  options: { retry?: RetryPolicy; maxAttempts?: number } = {},
): Promise<T> {
  const retry = options.retry ?? defaultRetryPolicy;
  const result = await optimistic(
    async () => {
      const stored = await Promise.all(rowKeys.map((rowKey) => readRaw(client, partitionKey, rowKey, retry)));
      const { writes, result } = change(stored.map((raw) => (raw && !isDeleting(raw) ? raw : undefined)));
      const actions: TransactionAction[] = [];
      writes.forEach((next, index) => {
        const current = stored[index];
        const rowKey = rowKeys[index]!;
        if (next === undefined) return;
        if (next !== null && (next.partitionKey !== partitionKey || next.rowKey !== rowKey))
          throw new Error('a group write must keep its row keys');
        const row: WireEntity = next ?? { partitionKey, rowKey, [deletingProperty]: { value: true, type: 'Boolean' } };
        if (current) actions.push(['update', row, 'Replace', { etag: current.etag! }]);
        else if (next) actions.push(['create', row]);
      });
      try {
        await raceOnMissingRow(() => submitBatch(client, actions));
      } catch (error) {
        // A row created meanwhile is a lost race like a changed ETag.
        if (statusOf(error) === 409)
          throw Object.assign(new Error('a row of the group was created concurrently'), { statusCode: 412 });
        throw error;
      }
      return result;
    },
    { retry, ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}) },
  );
  await removeMarkers(client, partitionKey, rowKeys, retry);
  return result;
}

/** Deletes the rows among `rowKeys` that are markers, each under If-Match on the marker's ETag. */
async function removeMarkers(
  client: TableClient,
  partitionKey: string,
  rowKeys: readonly string[],
  retry: RetryPolicy,
): Promise<void> {
  for (const rowKey of rowKeys) {
    const raw = await readRaw(client, partitionKey, rowKey, retry);
    if (!raw || !isDeleting(raw)) continue;
    await withRetry(async () => {
      try {
        await client.deleteEntity(partitionKey, rowKey, { etag: raw.etag! });
      } catch (error) {
        // Gone, or replaced by a newer write: either way the marker is no longer ours to remove.
        if (statusOf(error) !== 404 && statusOf(error) !== 412) throw error;
      }
    }, retry);
  }
}
