// The SQLite engine's path store against the path conformance suite, in memory (writer inline) and
// on disk (writer thread).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { runPathConformance } from './path-conformance/index.js';

runPathConformance('SQLite in memory', async () => {
  const tables = await SqliteStore.open({ location: undefined });
  const blobs = await tables.openBlobStore();
  return { blobs, paths: tables.openPathStore(), close: () => tables.close() };
});

runPathConformance('SQLite on disk', async () => {
  const location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-path-conformance-'));
  const tables = await SqliteStore.open({ location });
  const blobs = await tables.openBlobStore();
  return {
    blobs,
    paths: tables.openPathStore(),
    async close() {
      blobs.close();
      await tables.close();
      rmSync(location, { recursive: true, force: true });
    },
  };
});
