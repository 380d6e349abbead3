// The PostgreSQL engine's queue store against the queue conformance suite and the model test, on
// a database of its own per group; concurrent claims race between two stores with pools of their
// own (two processes' views). Skipped, loudly, without a PostgreSQL: tests/helpers/postgres.ts.
import { test } from 'node:test';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { createDatabase, dropDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { runQueueEngineConformance, type QueueStoreUnderTest } from './queue-conformance/index.js';

async function onPostgres(): Promise<QueueStoreUnderTest> {
  const url = await createDatabase();
  const [opened, other] = await Promise.all([PostgresStore.open({ url }), PostgresStore.open({ url })]);
  let first = opened;
  let queues = first.openQueueStore();
  const second = other.openQueueStore();
  return {
    get store() {
      return queues;
    },
    second,
    async close() {
      await Promise.all([first.close(), other.close()]);
      await dropDatabase(url);
    },
    async reopen() {
      await first.close();
      first = await PostgresStore.open({ url });
      queues = first.openQueueStore();
      return queues;
    },
  };
}

const unavailable = postgresUnavailable();
if (unavailable === undefined) {
  // Every write waits for the database's fsync: fewer model sequences, as on SQLite on disk.
  runQueueEngineConformance('PostgreSQL', onPostgres, { model: { sequences: 5 } });
} else {
  test('PostgreSQL queue conformance', { skip: unavailable }, () => undefined);
}
