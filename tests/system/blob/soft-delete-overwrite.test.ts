// Blob soft delete of overwritten data (soft-delete-blob-overview, "Blob soft delete protection by
// operation"), versioning off, through real clients on every engine: with the JS SDK, Put Blob, Put
// Block List and Copy Blob over a blob each keep its prior state as a soft-deleted snapshot, Set
// Blob Metadata and Properties keep nothing, a blob in the archive tier is not kept, and Undelete
// Blob restores the snapshots; Debian's Python SDK overwrites and undeletes too; then the server
// is stopped and started again and the soft-deleted snapshots are still there.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { BlockBlobClient, ContainerClient } from '@azure/storage-blob';
import { blobConnectionString, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;

/** [snapshot, deleted] of every entry of the name, soft-deleted ones too, in listing order. */
async function entries(container: ContainerClient, name: string): Promise<[string, boolean][]> {
  const listed: [string, boolean][] = [];
  const options = { includeDeleted: true, includeSnapshots: true, prefix: name };
  for await (const item of container.listBlobsFlat(options)) {
    if (item.name === name) listed.push([item.snapshot ?? '', item.deleted === true]);
  }
  return listed;
}

async function snapshotTexts(blob: BlockBlobClient, container: ContainerClient): Promise<string[]> {
  const texts: string[] = [];
  for (const [snapshot, deleted] of await entries(container, blob.name)) {
    assert.equal(deleted, false);
    if (snapshot !== '') texts.push((await blob.withSnapshot(snapshot).downloadToBuffer()).toString());
  }
  return texts.sort();
}

const pythonScript = `
import json, sys
from azure.storage.blob import BlobServiceClient
service = BlobServiceClient.from_connection_string(sys.argv[1])
container = service.get_container_client(sys.argv[2])
blob = container.get_blob_client("py.txt")
blob.upload_blob(b"first")
blob.upload_blob(b"second", overwrite=True)
out = {"listed": [[b.deleted, b.snapshot is not None] for b in
                  container.list_blobs(name_starts_with="py.txt", include=["deleted", "snapshots"])]}
blob.undelete_blob()
snapshots = [b.snapshot for b in container.list_blobs(name_starts_with="py.txt", include=["snapshots"]) if b.snapshot]
out["kept"] = [container.get_blob_client("py.txt", snapshot=s).download_blob().readall().decode() for s in snapshots]
out["now"] = blob.download_blob().readall().decode()
print(json.dumps(out))
`;

for (const engine of storeEngines) {
  describe(`blob soft delete of overwrites on ${engine.label}`, () => {
    let data: Awaited<ReturnType<typeof engine.data>>;
    let server: RunningServer;
    before(async () => {
      data = await engine.data();
      server = await startServer({ ...data.options });
    });
    after(async () => {
      await server?.stop();
      await data?.cleanup();
    });

    const containerName = uniqueContainerName('over');

    test('JS SDK: Put Blob, Put Block List and Copy Blob keep a soft-deleted snapshot; undelete restores them', async () => {
      const service = blobServiceClient(server);
      const container = service.getContainerClient(containerName);
      await container.create();
      const blob = container.getBlockBlobClient('o.txt');
      await blob.upload('zero', 4);
      await blob.upload('one', 3);
      assert.deepEqual(await entries(container, 'o.txt'), [['', false]], 'soft delete off: nothing kept');
      await service.setProperties({ deleteRetentionPolicy: { enabled: true, days: 7 } });
      await blob.upload('two', 3); // Put Blob over 'one'
      const blockId = Buffer.from('b1').toString('base64');
      await blob.stageBlock(blockId, 'three', 5);
      await blob.commitBlockList([blockId]); // Put Block List over 'two'
      const source = container.getBlockBlobClient('source.txt');
      await source.upload('four', 4);
      await (await blob.beginCopyFromURL(source.url)).pollUntilDone(); // Copy Blob over 'three'
      await blob.setMetadata({ a: 'b' });
      await blob.setHTTPHeaders({ blobContentType: 'text/plain' });
      const listed = await entries(container, 'o.txt');
      assert.equal(listed.length, 4, JSON.stringify(listed));
      assert.deepEqual(
        listed.map(([snapshot, deleted]) => [snapshot === '', deleted]),
        [
          [false, true],
          [false, true],
          [false, true],
          [true, false],
        ],
        'three soft-deleted snapshots, none for metadata or properties; then the blob',
      );
      assert.deepEqual(
        (await container.listBlobsFlat({ includeSnapshots: true, prefix: 'o.txt' }).byPage().next()).value.segment
          .blobItems.length,
        1,
        'not listed without includeDeleted',
      );
      await blob.undelete();
      assert.deepEqual(await snapshotTexts(blob, container), ['one', 'three', 'two']);
      assert.equal((await blob.downloadToBuffer()).toString(), 'four');
    });

    test('a blob in the archive tier is not kept when it is overwritten', async () => {
      const container = blobServiceClient(server).getContainerClient(containerName);
      const blob = container.getBlockBlobClient('a.txt');
      await blob.upload('cold', 4, { tier: 'Archive' });
      await blob.upload('warm', 4);
      assert.deepEqual(await entries(container, 'a.txt'), [['', false]]);
    });

    test("Debian's Python SDK: upload_blob(overwrite=True) keeps a soft-deleted snapshot; undelete_blob", async () => {
      const args = ['-c', pythonScript, blobConnectionString(server), containerName];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.listed, [
        [true, true],
        [null, false],
      ]);
      assert.deepEqual(out.kept, ['first']);
      assert.equal(out.now, 'second');
    });

    test('stopped and started again: a soft-deleted snapshot of an overwrite is still there', async () => {
      const container = blobServiceClient(server).getContainerClient(containerName);
      const blob = container.getBlockBlobClient('r.txt');
      await blob.upload('before', 6);
      await blob.upload('after', 5);
      await server.stop();
      server = await startServer({ ...data.options });
      const again = blobServiceClient(server).getContainerClient(containerName);
      const restarted = again.getBlockBlobClient('r.txt');
      assert.deepEqual(
        (await entries(again, 'r.txt')).map(([, deleted]) => deleted),
        [true, false],
      );
      await restarted.undelete();
      assert.deepEqual(await snapshotTexts(restarted, again), ['before']);
    });
  });
}
