// Blob versions (--blob-versioning) through real clients on every engine: the official JS SDK
// (upload twice, list with includeVersions, withVersion(id).download, delete, restore by copying
// a version's URL, delete a version), raw HTTP for the headers, Debian's Python SDK
// (list_blobs(include=['versions']), download_blob(version_id=)) and the Azure CLI (`az storage
// blob list --include v`); then the server is stopped and started again on the same data, and
// every version is still there.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ContainerClient } from '@azure/storage-blob';
import { azBlob } from '../../helpers/az.js';
import { blobConnectionString, blobSend, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;
const versioning = ['--blob-versioning'];

const pythonScript = `
import json, sys
from azure.storage.blob import BlobServiceClient
from azure.core.exceptions import HttpResponseError
service = BlobServiceClient.from_connection_string(sys.argv[1])
container = service.create_container(sys.argv[2])
out = {}
blob = container.get_blob_client("b.txt")
first = blob.upload_blob(b"one")
second = blob.upload_blob(b"two", overwrite=True)
out["ids_differ"] = first["version_id"] != second["version_id"]
listed = list(container.list_blobs(include=["versions"]))
out["listed"] = [[b.name, b.version_id == first["version_id"], b.is_current_version] for b in listed]
out["first"] = blob.download_blob(version_id=first["version_id"]).readall().decode()
out["current"] = blob.download_blob().readall().decode()
blob.delete_blob()
try:
    blob.download_blob().readall()
    out["deleted_read"] = None
except HttpResponseError as error:
    out["deleted_read"] = [error.status_code, error.error_code]
out["after_delete"] = [b.version_id == second["version_id"] for b in container.list_blobs(include=["versions"])]
blob.delete_blob(version_id=first["version_id"])
out["after_version_delete"] = len(list(container.list_blobs(include=["versions"])))
print(json.dumps(out))
`;

async function text(container: ContainerClient, name: string, versionId?: string): Promise<string> {
  const client = container.getBlobClient(name);
  const body = await (versionId === undefined ? client : client.withVersion(versionId)).downloadToBuffer();
  return body.toString();
}

async function versionsOf(container: ContainerClient): Promise<[string, string | undefined, boolean | undefined][]> {
  const listed: [string, string | undefined, boolean | undefined][] = [];
  for await (const item of container.listBlobsFlat({ includeVersions: true })) {
    listed.push([item.name, item.versionId, item.isCurrentVersion]);
  }
  return listed;
}

let workDir: string;
before(() => {
  workDir = makeTempDir('cerulean-versions-');
});
after(() => {
  if (workDir !== undefined) removeDir(workDir);
});

for (const engine of storeEngines) {
  describe(`blob versions on ${engine.label}`, () => {
    let data: Awaited<ReturnType<typeof engine.data>>;
    let server: RunningServer;
    before(async () => {
      data = await engine.data();
      server = await startServer({ ...data.options, args: versioning });
    });
    after(async () => {
      await server?.stop();
      await data?.cleanup();
    });

    const containerName = uniqueContainerName('ver');
    const ids: string[] = [];

    test('JS SDK: writes make versions; list, read, delete, restore from a version, delete a version', async () => {
      const container = blobServiceClient(server).getContainerClient(containerName);
      await container.create();
      const blob = container.getBlockBlobClient('b.txt');
      const first = await blob.upload('one', 3);
      const second = await blob.upload('two', 3);
      assert.ok(first.versionId !== undefined && second.versionId !== undefined);
      assert.ok(second.versionId > first.versionId, 'version ids grow');
      const metadata = await blob.setMetadata({ k: 'v' });
      assert.ok(metadata.versionId !== undefined && metadata.versionId > second.versionId);
      await blob.setHTTPHeaders({ blobContentType: 'text/plain' }); // Set Blob Properties makes no version
      assert.deepEqual(await versionsOf(container), [
        ['b.txt', first.versionId, undefined],
        ['b.txt', second.versionId, undefined],
        ['b.txt', metadata.versionId, true],
      ]);
      const plain = [];
      for await (const item of container.listBlobsFlat()) plain.push(item.name);
      assert.deepEqual(plain, ['b.txt'], 'versions are listed only when asked');
      assert.equal(await text(container, 'b.txt', first.versionId), 'one');
      assert.equal(await text(container, 'b.txt', second.versionId), 'two');
      assert.equal(await text(container, 'b.txt', metadata.versionId), 'two', 'the current version by its id');
      const old = await blob.withVersion(first.versionId).getProperties();
      assert.deepEqual([old.versionId, old.isCurrentVersion, old.metadata], [first.versionId, undefined, {}]);
      const current = await blob.getProperties();
      assert.deepEqual([current.versionId, current.isCurrentVersion], [metadata.versionId, true]);

      // Deleting the base blob keeps it as a previous version.
      await blob.delete();
      await assert.rejects(blob.download(), { statusCode: 404, code: 'BlobNotFound' });
      const deleted = await versionsOf(container);
      assert.deepEqual(
        deleted.map(([, id, isCurrent]) => [id, isCurrent]),
        [
          [first.versionId, undefined],
          [second.versionId, undefined],
          [metadata.versionId, undefined],
        ],
      );
      // Restore: copy a version over the base blob (asynchronous copy, and the synchronous one).
      const poller = await blob.beginCopyFromURL(blob.withVersion(first.versionId).url);
      await poller.pollUntilDone();
      assert.equal(await text(container, 'b.txt'), 'one');
      const synced = await blob.syncCopyFromURL(blob.withVersion(second.versionId).url);
      assert.equal(synced.copyStatus, 'success');
      assert.equal(await text(container, 'b.txt'), 'two');

      // Deleting a previous version removes it alone.
      await blob.withVersion(first.versionId).delete();
      await assert.rejects(blob.withVersion(first.versionId).download(), { statusCode: 404 });
      const left = (await versionsOf(container)).map(([, id]) => id);
      assert.equal(left.length, 4);
      assert.ok(!left.includes(first.versionId));
      ids.push(...left.map((id) => id!));
    });

    test('tags of a version: set and read by versionid, apart from the current version and the index', async () => {
      // A container of its own: the other cases count every version of theirs.
      const container = blobServiceClient(server).getContainerClient(uniqueContainerName('vtag'));
      await container.create();
      const blob = container.getBlockBlobClient('tagged.txt');
      const first = await blob.upload('one', 3, { tags: { stage: 'draft' } });
      await blob.upload('two', 3, { tags: { stage: 'done' } });
      const old = blob.withVersion(first.versionId!);
      assert.deepEqual((await old.getTags()).tags, { stage: 'draft' });
      await old.setTags({ stage: 'archived' });
      assert.deepEqual((await old.getTags()).tags, { stage: 'archived' });
      assert.deepEqual((await blob.getTags()).tags, { stage: 'done' }, 'the current version keeps its own');
      const found = [];
      for await (const item of container.findBlobsByTags(`stage='archived'`)) found.push(item.name);
      assert.deepEqual(found, [], 'only base blobs are indexed');
    });

    test('raw HTTP: HEAD answers x-ms-version-id, and x-ms-is-current-version for the current one', async () => {
      const target = `${containerName}/b.txt`;
      const head = await blobSend(server, { method: 'HEAD', target });
      assert.equal(head.status, 200);
      assert.equal(head.headers['x-ms-version-id'], ids.at(-1));
      assert.equal(head.headers['x-ms-is-current-version'], 'true');
      const old = await blobSend(server, { method: 'HEAD', target: `${target}?versionid=${ids[0]}` });
      assert.equal(old.status, 200);
      assert.deepEqual([old.headers['x-ms-version-id'], old.headers['x-ms-is-current-version']], [ids[0], undefined]);
      const write = await blobSend(server, {
        method: 'PUT',
        target: `${target}?versionid=${ids[0]}`,
        headers: { 'x-ms-blob-type': 'BlockBlob' },
        body: 'x',
      });
      assert.equal(write.status, 400, 'a write never addresses a version');
      const bad = await blobSend(server, { method: 'GET', target: `${target}?versionid=yesterday` });
      assert.equal(bad.status, 400);
      const tags = await blobSend(server, { method: 'GET', target: `${target}?comp=blocklist&versionid=${ids[0]}` });
      assert.equal(tags.status, 400, 'not served for a version: refused, never answered by the base blob');
    });

    test("Debian's Python SDK: list_blobs(include=['versions']), download_blob(version_id=), delete_blob", async () => {
      const name = uniqueContainerName('pyv');
      const args = ['-c', pythonScript, blobConnectionString(server), name];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      const out = JSON.parse(stdout);
      assert.equal(out.ids_differ, true);
      assert.deepEqual(out.listed, [
        ['b.txt', true, null],
        ['b.txt', false, true],
      ]);
      assert.equal(out.first, 'one');
      assert.equal(out.current, 'two');
      assert.deepEqual(out.deleted_read, [404, 'BlobNotFound']);
      assert.deepEqual(out.after_delete, [false, true]);
      assert.equal(out.after_version_delete, 1);
    });

    test('az storage blob list --include v', async () => {
      const listed = await azBlob(
        join(workDir, `config-${engine.label}`),
        server,
        'storage',
        'blob',
        'list',
        '--container-name',
        containerName,
        '--include',
        'v',
      );
      assert.deepEqual(
        listed.map((item: { versionId: string }) => item.versionId),
        ids,
      );
    });

    test('a blob written before versioning was on is kept as a version of its Last-Modified time', async () => {
      await server.stop();
      server = await startServer({ ...data.options });
      const container = blobServiceClient(server).getContainerClient(containerName);
      const before = await container.getBlockBlobClient('early').upload('early', 5);
      assert.equal(before.versionId, undefined, 'no version id without --blob-versioning');
      await server.stop();
      server = await startServer({ ...data.options, args: versioning });
      const restarted = blobServiceClient(server).getContainerClient(containerName);
      const after = await restarted.getBlockBlobClient('early').upload('later', 5);
      const listed = (await versionsOf(restarted)).filter(([name]) => name === 'early');
      assert.equal(listed.length, 2);
      const [kept] = listed[0]!.slice(1) as [string];
      // Last-Modified is sent in whole seconds.
      assert.equal(Math.floor(Date.parse(kept) / 1000) * 1000, before.lastModified!.getTime(), 'its Last-Modified');
      assert.deepEqual(listed[1], ['early', after.versionId, true]);
      assert.equal(await text(restarted, 'early', kept), 'early');
      await restarted.getBlobClient('early').delete();
      await restarted.getBlobClient('early').withVersion(kept).delete();
      await restarted.getBlobClient('early').withVersion(after.versionId!).delete();
    });

    test('stopped and started again on the same data: every version is there', async () => {
      await server.stop();
      server = await startServer({ ...data.options, args: versioning });
      const container = blobServiceClient(server).getContainerClient(containerName);
      assert.deepEqual(
        (await versionsOf(container)).map(([, id]) => id),
        ids,
      );
      assert.equal(await text(container, 'b.txt', ids[0]), 'two');
      assert.equal(await text(container, 'b.txt'), 'two');
    });
  });
}
