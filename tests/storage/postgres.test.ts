// The PostgreSQL engine against the TableStore conformance suite, the model test and the fault test,
// each store on a database of its own (created and dropped here). Skipped, loudly, without a
// PostgreSQL (and failing under CI): tests/helpers/postgres.ts.
import { test } from 'node:test';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { createDatabase, dropDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { runEngineConformance } from './conformance/index.js';
import type { StoreUnderTest } from './conformance/support.js';

/** Small, so that the conformance cases' conditional scans build property indexes and then read them. */
const autoIndexRows = 200;

async function onPostgres(): Promise<StoreUnderTest> {
  const url = await createDatabase();
  const subject = {
    store: await PostgresStore.open({ url, autoIndexRows }),
    async close() {
      await subject.store.close();
      await dropDatabase(url);
    },
    async reopen() {
      await subject.store.close();
      subject.store = await PostgresStore.open({ url, autoIndexRows });
      return subject.store;
    },
  };
  return subject;
}

const unavailable = postgresUnavailable();
if (unavailable === undefined) {
  // Every commit waits for the database's fsync: fewer model sequences, as on SQLite on disk.
  runEngineConformance('PostgreSQL', onPostgres, { model: { sequences: 6 } });
} else {
  test('PostgreSQL conformance', { skip: unavailable }, () => undefined);
}
