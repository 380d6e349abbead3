// The PostgreSQL engine's path store against the path conformance suite, on a database of its own.
// Skipped, loudly, without a PostgreSQL: tests/helpers/postgres.ts.
import { describe } from 'node:test';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { createDatabase, dropDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { runPathConformance } from './path-conformance/index.js';

const skip = postgresUnavailable();
if (skip !== undefined) {
  describe('path store conformance: PostgreSQL', { skip }, () => undefined);
} else {
  runPathConformance('PostgreSQL', async () => {
    const url = await createDatabase();
    const tables = await PostgresStore.open({ url });
    return {
      blobs: tables.openBlobStore({ chunkBytes: 5 }),
      paths: tables.openPathStore(),
      async close() {
        await tables.close();
        await dropDatabase(url);
      },
    };
  });
}
