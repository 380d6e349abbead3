// An optimistic read-modify-write of several rows of one partition as one entity group
// transaction: every row is written back under If-Match on the ETag it was read with, so the
// rows change together or not at all, and a concurrent writer makes the whole group re-read.
import type { TableClient, TransactionAction } from '@azure/data-tables';
import type { RawEntity, WireEntity } from './model.js';
import { defaultRetryPolicy, optimistic, statusOf, type RetryPolicy } from './retry.js';
import { readRaw, submitBatch } from './table.js';

/** A row's next state: a wire entity to write, or null to delete it. */
export type RowChange = WireEntity | null;

/**
 * Reads `rowKeys` of `partitionKey` (missing rows come as undefined), lets `change` compute each
 * row's next state (undefined = leave it), and writes all of them in one transaction under
 * If-Match (new rows with create, so a concurrent insert also fails the group). Retries on 412/409,
 * at most `maxAttempts` rounds. `change` may run more than once: keep it free of side effects.
 */
export async function updateGroup<T>(
  client: TableClient,
  partitionKey: string,
  rowKeys: readonly string[],
  change: (rows: (RawEntity | undefined)[]) => { writes: (RowChange | undefined)[]; result: T },
  options: { retry?: RetryPolicy; maxAttempts?: number } = {},
): Promise<T> {
  const retry = options.retry ?? defaultRetryPolicy;
  return optimistic(
    async () => {
      const rows = await Promise.all(rowKeys.map((rowKey) => readRaw(client, partitionKey, rowKey, retry)));
      const { writes, result } = change(rows);
      const actions: TransactionAction[] = [];
      writes.forEach((next, index) => {
        const current = rows[index];
        if (next === undefined) return;
        if (next !== null && (next.partitionKey !== partitionKey || next.rowKey !== rowKeys[index])) throw new Error('a group write must keep its row keys');
        if (next === null) {
          // Transaction deletes carry no If-Match; an empty merge under If-Match first would be a
          // second row operation, so a delete in a group is unconditional: use it for rows this
          // group alone writes.
          if (current) actions.push(['delete', { partitionKey, rowKey: rowKeys[index]! }]);
        } else if (current) actions.push(['update', next, 'Replace', { etag: current.etag! }]);
        else actions.push(['create', next]);
      });
      try {
        await submitBatch(client, actions);
      } catch (error) {
        // A row created meanwhile is a lost race like a changed ETag.
        if (statusOf(error) === 409) throw Object.assign(new Error('a row of the group was created concurrently'), { statusCode: 412 });
        throw error;
      }
      return result;
    },
    { retry, ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}) },
  );
}
