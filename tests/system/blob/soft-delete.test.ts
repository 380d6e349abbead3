// Blob soft delete through real clients on every engine: the official JS SDK (setProperties with
// deleteRetentionPolicy, delete with and without snapshots, listBlobsFlat({ includeDeleted }),
// undelete), raw HTTP (Days out of range, x-ms-delete-type-permanent, a new blob at a soft-deleted
// name), Debian's Python SDK (set_service_properties, list_blobs(include=['deleted']),
// undelete_blob) and the Azure CLI (`az storage blob service-properties delete-policy update`,
// `az storage blob undelete`); then the server is stopped and started again on the same data, and
// what was soft-deleted is still there and can be undeleted.
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

const pythonScript = `
import json, sys
from azure.storage.blob import BlobServiceClient, RetentionPolicy
from azure.core.exceptions import HttpResponseError
service = BlobServiceClient.from_connection_string(sys.argv[1])
service.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=True, days=7))
policy = service.get_service_properties()["delete_retention_policy"]
container = service.create_container(sys.argv[2])
out = {"policy": [policy.enabled, policy.days]}
blob = container.get_blob_client("p.txt")
blob.upload_blob(b"python")
blob.delete_blob()
try:
    blob.download_blob().readall()
    out["deleted_read"] = None
except HttpResponseError as error:
    out["deleted_read"] = [error.status_code, error.error_code]
out["plain"] = [b.name for b in container.list_blobs()]
out["deleted"] = [[b.name, b.deleted, b.remaining_retention_days, b.deleted_time is not None]
                  for b in container.list_blobs(include=["deleted"])]
blob.undelete_blob()
out["restored"] = blob.download_blob().readall().decode()
print(json.dumps(out))
`;

type Listed = [name: string, deleted: boolean, snapshot: string | undefined, days: number | undefined];

async function listedWithDeleted(container: ContainerClient): Promise<Listed[]> {
  const listed: Listed[] = [];
  for await (const item of container.listBlobsFlat({ includeDeleted: true, includeSnapshots: true })) {
    listed.push([item.name, item.deleted === true, item.snapshot || undefined, item.properties.remainingRetentionDays]);
  }
  return listed;
}

async function names(container: ContainerClient): Promise<string[]> {
  const listed: string[] = [];
  for await (const item of container.listBlobsFlat({ includeSnapshots: true })) listed.push(item.name);
  return listed;
}

const propertiesTarget = '?restype=service&comp=properties';
const policyBody = (inner: string) =>
  `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><DeleteRetentionPolicy>${inner}` +
  '</DeleteRetentionPolicy></StorageServiceProperties>';

for (const engine of storeEngines) {
  describe(`blob soft delete on ${engine.label}`, () => {
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

    const containerName = uniqueContainerName('soft');

    test('JS SDK: a policy of 7 days; delete, list with includeDeleted, undelete the blob and its snapshots', async () => {
      const service = blobServiceClient(server);
      await service.setProperties({ deleteRetentionPolicy: { enabled: true, days: 7 } });
      const properties = await service.getProperties();
      const policy = properties.deleteRetentionPolicy;
      assert.deepEqual([policy?.enabled, policy?.days], [true, 7]);
      const container = service.getContainerClient(containerName);
      await container.create();
      const blob = container.getBlockBlobClient('b.txt');
      await blob.upload('one', 3);
      const snapshot = await blob.createSnapshot();
      const deleted = await blob.delete({ deleteSnapshots: 'include' });
      assert.equal(deleted._response.headers.get('x-ms-delete-type-permanent'), 'false');
      await assert.rejects(blob.download(), { statusCode: 404, code: 'BlobNotFound' });
      await assert.rejects(blob.withSnapshot(snapshot.snapshot!).download(), { statusCode: 404 });
      assert.deepEqual(await names(container), [], 'not listed without includeDeleted');
      assert.deepEqual(await listedWithDeleted(container), [
        ['b.txt', true, undefined, 7],
        ['b.txt', true, snapshot.snapshot, 7],
      ]);
      for await (const item of container.listBlobsFlat({ includeDeleted: true })) {
        const deletedOn = item.properties.deletedOn!;
        assert.ok(Math.abs(deletedOn.getTime() - Date.now()) < 60_000, 'DeletedTime is the deletion time');
      }
      const undeleted = await blob.undelete();
      assert.equal(undeleted._response.status, 200);
      assert.equal((await blob.downloadToBuffer()).toString(), 'one');
      assert.equal((await blob.withSnapshot(snapshot.snapshot!).downloadToBuffer()).toString(), 'one');
      assert.deepEqual(await listedWithDeleted(container), [
        ['b.txt', false, snapshot.snapshot, undefined],
        ['b.txt', false, undefined, undefined],
      ]);
      // A snapshot deleted alone, then the blob's snapshots only: each soft-deleted, undeleted with the blob.
      await container.getBlobClient('b.txt').withSnapshot(snapshot.snapshot!).delete();
      await assert.rejects(blob.withSnapshot(snapshot.snapshot!).download(), { statusCode: 404 });
      assert.deepEqual(await names(container), ['b.txt']);
      await blob.undelete();
      assert.equal((await blob.withSnapshot(snapshot.snapshot!).downloadToBuffer()).toString(), 'one');
      await blob.delete({ deleteSnapshots: 'only' });
      assert.deepEqual(await names(container), ['b.txt']);
      await blob.undelete();
      assert.deepEqual(await names(container), ['b.txt', 'b.txt']);
    });

    test('index tags: a soft-deleted blob is not found by its tags, an undeleted one is again', async () => {
      const service = blobServiceClient(server);
      await service.setProperties({ deleteRetentionPolicy: { enabled: true, days: 7 } });
      const container = service.getContainerClient(uniqueContainerName('softtag'));
      await container.create();
      const blob = container.getBlockBlobClient('tagged.txt');
      await blob.upload('one', 3, { tags: { stage: 'done' } });
      const found = async () => {
        const names: string[] = [];
        for await (const item of container.findBlobsByTags(`stage='done'`)) names.push(item.name);
        return names;
      };
      assert.deepEqual(await found(), ['tagged.txt']);
      await blob.delete();
      assert.deepEqual(await found(), [], 'soft-deleted: not found');
      await blob.undelete();
      assert.deepEqual(await found(), ['tagged.txt'], 'undeleted: found again');
      assert.deepEqual((await blob.getTags()).tags, { stage: 'done' });
    });

    test('raw HTTP: Days 1-365, undelete of nothing, a blob written at a soft-deleted name', async () => {
      for (const days of ['0', '366']) {
        const body = policyBody(`<Enabled>true</Enabled><Days>${days}</Days>`);
        const refused = await blobSend(server, { method: 'PUT', target: propertiesTarget, body });
        assert.equal(refused.status, 400, `Days ${days}`);
        assert.match(refused.body.toString(), /InvalidXmlNodeValue/);
      }
      const missing = await blobSend(server, {
        method: 'PUT',
        target: `${containerName}/none?comp=undelete`,
      });
      assert.equal(missing.status, 404);
      assert.match(missing.body.toString(), /BlobNotFound/);
      const container = blobServiceClient(server).getContainerClient(containerName);
      const blob = container.getBlockBlobClient('n.txt');
      await blob.upload('old', 3);
      await blob.delete();
      await blob.upload('new', 3);
      const undelete = await blobSend(server, { method: 'PUT', target: `${containerName}/n.txt?comp=undelete` });
      assert.equal(undelete.status, 200);
      assert.equal((await blob.downloadToBuffer()).toString(), 'new', 'the blob written meanwhile stays');
      const listed = (await listedWithDeleted(container)).filter(([name]) => name === 'n.txt');
      assert.equal(listed.length, 2, 'the soft-deleted blob came back as a snapshot');
      const [kept] = listed;
      assert.equal((await blob.withSnapshot(kept![2]!).downloadToBuffer()).toString(), 'old');
    });

    test("Debian's Python SDK: set_service_properties, list_blobs(include=['deleted']), undelete_blob", async () => {
      const name = uniqueContainerName('pysoft');
      const args = ['-c', pythonScript, blobConnectionString(server), name];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.policy, [true, 7]);
      assert.deepEqual(out.deleted_read, [404, 'BlobNotFound']);
      assert.deepEqual(out.plain, []);
      assert.deepEqual(out.deleted, [['p.txt', true, 7, true]]);
      assert.equal(out.restored, 'python');
    });

    test('az storage blob service-properties delete-policy update, az storage blob undelete', async (t) => {
      const configDir = makeTempDir('cerulean-soft-delete-az-');
      t.after(() => removeDir(configDir));
      const config = join(configDir, 'config');
      const policy = await azBlob(
        config,
        server,
        ...['storage', 'blob', 'service-properties', 'delete-policy', 'update'],
        ...['--enable', 'true', '--days-retained', '5'],
      );
      assert.deepEqual([policy.enabled, policy.days], [true, 5]);
      const container = blobServiceClient(server).getContainerClient(containerName);
      const blob = container.getBlockBlobClient('az.txt');
      await blob.upload('az', 2);
      await blob.delete();
      const listed = (await listedWithDeleted(container)).filter(([name]) => name === 'az.txt');
      assert.deepEqual(listed, [['az.txt', true, undefined, 5]]);
      await azBlob(
        config,
        server,
        'storage',
        'blob',
        'undelete',
        '--container-name',
        containerName,
        '--name',
        'az.txt',
      );
      assert.equal((await blob.downloadToBuffer()).toString(), 'az');
      await blob.delete(); // kept soft-deleted for the restart below
    });

    test('stopped and started again on the same data: the soft-deleted blob is there, and undeleted', async () => {
      await server.stop();
      server = await startServer({ ...data.options });
      const container = blobServiceClient(server).getContainerClient(containerName);
      const listed = (await listedWithDeleted(container)).filter(([name]) => name === 'az.txt');
      assert.deepEqual(listed, [['az.txt', true, undefined, 5]]);
      await container.getBlobClient('az.txt').undelete();
      assert.equal((await container.getBlobClient('az.txt').downloadToBuffer()).toString(), 'az');
      const properties = await blobServiceClient(server).getProperties();
      const policy = properties.deleteRetentionPolicy;
      assert.deepEqual([policy?.enabled, policy?.days], [true, 5]);
    });
  });
}

describe('blob soft delete with --blob-versioning, on SQLite', () => {
  let location: string;
  let server: RunningServer;
  before(async () => {
    location = makeTempDir('cerulean-soft-versions-');
    server = await startServer({ location, args: ['--blob-versioning'] });
  });
  after(async () => {
    await server?.stop();
    if (location !== undefined) removeDir(location);
  });

  test('deleting the blob keeps a version; a version deleted explicitly is soft-deleted, and undeleted', async () => {
    const service = blobServiceClient(server);
    await service.setProperties({ deleteRetentionPolicy: { enabled: true, days: 3 } });
    const container = service.getContainerClient(uniqueContainerName('softv'));
    await container.create();
    const blob = container.getBlockBlobClient('v.txt');
    const first = await blob.upload('one', 3);
    const second = await blob.upload('two', 3);
    const deleted = await blob.delete();
    assert.equal(deleted._response.headers.get('x-ms-delete-type-permanent'), 'false');
    await blob.withVersion(first.versionId!).delete();
    await assert.rejects(blob.withVersion(first.versionId!).download(), { statusCode: 404 });
    const listed: [string | undefined, boolean][] = [];
    for await (const item of container.listBlobsFlat({ includeVersions: true, includeDeleted: true })) {
      listed.push([item.versionId, item.deleted === true]);
    }
    assert.deepEqual(listed, [
      [second.versionId, false],
      [first.versionId, true],
    ]);
    await blob.undelete();
    assert.equal((await blob.withVersion(first.versionId!).downloadToBuffer()).toString(), 'one');
  });
});
