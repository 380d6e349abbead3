// Delete Container of a container of many blobs through the official JS SDK (@azure/storage-blob),
// on SQLite and PostgreSQL: 202 at once, then every read and write of it is 404
// ContainerNotFound, and a container of the same name may be created again at once, empty. The
// server then gets SIGKILL before its periodic reclaim has run (a crash between the delete and
// the reclaim); the store, opened directly, removes the old rows a small batch at a time (so
// several batches), after which no blob row of the old container is left, the content nothing
// names is reclaimed, and what the other containers name is all there. A restart on the same
// data serves the new container and the others as they were.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { BlobServiceClient } from '@azure/storage-blob';
import type { BlobStore } from '../../../src/storage/blob-store.js';
import { PostgresStore } from '../../../src/storage/postgres/postgres-store.js';
import { databaseFileName } from '../../../src/storage/sqlite/schema.js';
import { SqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { blobServiceClient } from '../../helpers/blob.js';
import { contentCensus, storeEngines, type StoreAt } from '../../helpers/blob-store-check.js';
import { onDatabase } from '../../helpers/postgres.js';
import { refused } from '../../helpers/rest-errors.js';
import { startServer } from '../../helpers/server.js';

/** Blobs in the deleted container: a few dozen, enough for several batches of `batchPieces`. */
const blobCount = 40;
/** The reclaim batch (reclaimContent's limit) the test runs with, instead of the server's 500. */
const batchPieces = 7;

/** The blob store at `at`, opened directly (the server stopped), for `use`. */
async function withStore<T>(at: StoreAt, use: (blobs: BlobStore) => Promise<T>): Promise<T> {
  if ('location' in at) {
    const tables = await SqliteStore.open({ location: at.location });
    const blobs = await tables.openBlobStore();
    try {
      return await use(blobs);
    } finally {
      blobs.close();
      await tables.close();
    }
  }
  const tables = await PostgresStore.open({ url: at.database });
  try {
    return await use(tables.openBlobStore());
  } finally {
    await tables.close();
  }
}

/** Blob rows (base blobs and snapshots) of every container, deleted or not. */
async function blobRows(at: StoreAt): Promise<number> {
  if ('database' in at) {
    return onDatabase(at.database, async (client) => {
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM cerulean.blobs');
      return Number(rows[0]!.n);
    });
  }
  const db = new Database(join(at.location, databaseFileName), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM blobs').pluck().get() as number;
  } finally {
    db.close();
  }
}

/** `blobCount` blobs (every fifth larger than a row of content), a snapshot and an uncommitted block. */
async function fill(service: BlobServiceClient, name: string): Promise<void> {
  const container = service.getContainerClient(name);
  await container.create();
  for (let i = 0; i < blobCount; i++) {
    const body = Buffer.alloc(i % 5 === 0 ? 100 * 1024 : 100, i);
    await container.getBlockBlobClient(`blob-${i}`).upload(body, body.length);
  }
  await container.getBlobClient('blob-1').createSnapshot();
  await container.getBlockBlobClient('uncommitted').stageBlock('AAAA', 'x', 1);
}

async function checkGone(service: BlobServiceClient, name: string): Promise<void> {
  const container = service.getContainerClient(name);
  await refused(container.getProperties(), 404, 'ContainerNotFound');
  await refused(container.listBlobsFlat().next(), 404, 'ContainerNotFound');
  await refused(container.getBlobClient('blob-3').download(), 404, 'ContainerNotFound');
  await refused(container.getBlockBlobClient('blob-3').upload('x', 1), 404, 'ContainerNotFound');
  await refused(container.delete(), 404, 'ContainerNotFound');
  const names: string[] = [];
  for await (const each of service.listContainers({ prefix: name })) names.push(each.name);
  assert.deepEqual(names, []);
}

async function blobNames(service: BlobServiceClient, name: string): Promise<string[]> {
  const names: string[] = [];
  const options = { includeSnapshots: true, includeUncommitedBlobs: true };
  for await (const each of service.getContainerClient(name).listBlobsFlat(options)) names.push(each.name);
  return names;
}

/** Reclaim passes of `batchPieces` each at `atMs` until one removes nothing; how many removed something. */
async function reclaimInBatches(blobs: BlobStore, atMs: number): Promise<number> {
  for (let passes = 0; ; passes++) {
    const removed = await blobs.reclaimContent(atMs, 0, batchPieces);
    assert.ok(removed <= batchPieces, `a pass removed ${removed} with a limit of ${batchPieces}`);
    if (removed === 0) return passes;
    assert.ok(passes < 1000, 'reclaim comes to an end');
  }
}

for (const engine of storeEngines) {
  describe(`Delete Container of many blobs on ${engine.label}`, () => {
    test('gone at once, its name free at once, its blobs and content reclaimed in batches after kill -9', async () => {
      const { options, at, cleanup } = await engine.data();
      try {
        const server = await startServer(options);
        const service = blobServiceClient(server);
        await fill(service, 'big');
        const kept = Buffer.alloc(100 * 1024, 'k');
        await service.getContainerClient('other').create();
        await service.getContainerClient('other').getBlockBlobClient('kept').upload(kept, kept.length);
        const deleted = await service.getContainerClient('big').delete();
        assert.equal(deleted._response.status, 202);
        await checkGone(service, 'big');
        await service.getContainerClient('big').create();
        assert.deepEqual(await blobNames(service, 'big'), [], 'the new container of the old name is empty');
        await service.getContainerClient('big').getBlockBlobClient('fresh').upload('fresh', 5);
        assert.deepEqual(await blobNames(service, 'big'), ['fresh']);
        await server.kill9();

        // blobCount bases and a snapshot, beside 'fresh' and 'kept'.
        assert.equal(await blobRows(at), blobCount + 1 + 2, 'the delete left the rows to reclaim');
        const passes = await withStore(at, (blobs) => reclaimInBatches(blobs, Date.now()));
        // Each blob, the snapshot, the staged block and the container: several batches.
        assert.ok(passes >= Math.ceil((blobCount + 3) / batchPieces), `${passes} passes`);
        assert.equal(await blobRows(at), 2, 'only the blobs of live containers are left');
        const census = await contentCensus(at);
        assert.deepEqual([...census.stored].sort(), [...census.referenced].sort(), 'the content of live blobs only');
        assert.equal(census.referenced.size, 2);

        const again = await startServer(options);
        try {
          const client = blobServiceClient(again);
          assert.deepEqual(await blobNames(client, 'big'), ['fresh']);
          assert.deepEqual(await client.getContainerClient('other').getBlobClient('kept').downloadToBuffer(), kept);
          assert.equal(
            (await client.getContainerClient('big').getBlobClient('fresh').downloadToBuffer()).toString(),
            'fresh',
          );
        } finally {
          await again.stop();
        }
      } finally {
        await cleanup();
      }
    });
  });
}
