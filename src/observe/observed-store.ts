// The stores as the workload watch and the throttle see them: interceptors (http/interceptors.ts)
// around the methods that read or write entities or messages. A table's point read and commit are
// admitted by the throttle (if any) before they reach the engine, and noted by the watch (if any);
// a queue's message operations are admitted against the account's bucket and one per queue.
// Every other method is the engine's own.
import { interceptMethods } from '../http/interceptors.js';
import type { QueueStore } from '../storage/queue-store.js';
import type { TableStore } from '../storage/table-store.js';
import { getTableThenCommit, getTableThenEntity } from '../storage/table-calls.js';
import type { Throttle } from './throttle.js';
import type { Workload } from './workload.js';

export interface Watchers {
  readonly throttle: Throttle | undefined;
  readonly workload: Workload | undefined;
}

/** The table store with its entity reads and commits throttled and watched. */
export function watchedTableStore(engine: TableStore, { throttle, workload }: Watchers): TableStore {
  const watched: TableStore = interceptMethods(engine, {
    getTableEntity: (next) => async (account, name, partitionKey, rowKey) => {
      // A throttle admits by the table's stored name, which only the lookup gives: then two calls.
      if (throttle !== undefined) return getTableThenEntity(watched, account, name, partitionKey, rowKey);
      const read = await next(account, name, partitionKey, rowKey);
      if (read !== undefined) workload?.touched(account, read.table.name, partitionKey, 1);
      return read;
    },
    commitToTable: (next) => async (account, name, writes) => {
      if (throttle !== undefined) return getTableThenCommit(watched, account, name, writes);
      const committed = await next(account, name, writes);
      if (committed.table !== undefined && committed.result.ok && writes.length > 0) {
        workload?.wrote(account, committed.table.name, writes);
      }
      return committed;
    },
    getEntity: (next) => (table, partitionKey, rowKey) => {
      throttle?.admit(table.account, table.name, partitionKey, 1);
      workload?.touched(table.account, table.name, partitionKey, 1);
      return next(table, partitionKey, rowKey);
    },
    commit: (next) => async (table, writes) => {
      // A commit is one entity or one entity group transaction: one partition.
      throttle?.admit(table.account, table.name, writes[0]?.partitionKey, writes.length);
      const result = await next(table, writes);
      if (result.ok && writes.length > 0) workload?.wrote(table.account, table.name, writes);
      return result;
    },
  });
  return watched;
}

/** The throttle's table name for queues: \u0001 is in no table name, so no table shares a bucket. */
const queueScope = '\u0001queue';

/**
 * The queue store with its message operations throttled (`--throttle`). The Queue service's targets
 * match the Table service's the throttle already holds: 2,000 messages per second per queue,
 * 20,000 per account (https://learn.microsoft.com/azure/storage/queues/scalability-targets), so a
 * queue takes a partition's bucket and its rate. A get or peek costs the messages it asks for.
 */
export function throttledQueueStore(engine: QueueStore, throttle: Throttle): QueueStore {
  const admit = (account: string, queue: string, messages: number): void =>
    throttle.admit(account, queueScope, queue, messages);
  return interceptMethods(engine, {
    putMessage: (next) => (account, name, message) => {
      admit(account, name, 1);
      return next(account, name, message);
    },
    getMessages: (next) => (account, name, claim) => {
      admit(account, name, claim.count);
      return next(account, name, claim);
    },
    peekMessages: (next) => (account, name, peek) => {
      admit(account, name, peek.count);
      return next(account, name, peek);
    },
    deleteMessage: (next) => (account, name, target) => {
      admit(account, name, 1);
      return next(account, name, target);
    },
    updateMessage: (next) => (account, name, update) => {
      admit(account, name, 1);
      return next(account, name, update);
    },
  });
}
