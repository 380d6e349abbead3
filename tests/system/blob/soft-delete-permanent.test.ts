// Permanent delete of soft-deleted snapshots and versions (Delete Blob's deletetype=permanent,
// DeleteRetentionPolicy's AllowPermanentDelete) through real clients on every engine: raw HTTP
// (the JS SDK does not send deletetype: its authors left permanent delete out on purpose), a
// service SAS made by the JS SDK with and without Permanent Delete (y), and Debian's Python SDK
// (delete_blob(blob_delete_type='permanent')); then the server is stopped and started again, and
// what was deleted permanently stays gone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { BlobSASPermissions, type ContainerClient } from '@azure/storage-blob';
import { blobConnectionString, blobSend, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;

const propertiesTarget = '?restype=service&comp=properties';
const policyBody = (allowPermanentDelete: boolean) =>
  '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><DeleteRetentionPolicy>' +
  `<Enabled>true</Enabled><Days>7</Days><AllowPermanentDelete>${allowPermanentDelete}</AllowPermanentDelete>` +
  '</DeleteRetentionPolicy></StorageServiceProperties>';

async function setPolicy(server: RunningServer, allowPermanentDelete: boolean): Promise<void> {
  const set = await blobSend(server, {
    method: 'PUT',
    target: propertiesTarget,
    body: policyBody(allowPermanentDelete),
  });
  assert.equal(set.status, 202, set.body.toString());
}

/** Every entry of the name, soft-deleted ones too: [snapshot or version id, deleted]. */
async function entries(container: ContainerClient, name: string): Promise<[string, boolean][]> {
  const listed: [string, boolean][] = [];
  const options = { includeDeleted: true, includeSnapshots: true, includeVersions: true, prefix: name };
  for await (const item of container.listBlobsFlat(options)) {
    if (item.name === name) listed.push([item.snapshot || item.versionId || '', item.deleted === true]);
  }
  return listed;
}

const pythonScript = `
import json, sys
from azure.storage.blob import BlobServiceClient
from azure.core.exceptions import HttpResponseError
service = BlobServiceClient.from_connection_string(sys.argv[1])
container = service.get_container_client(sys.argv[2])
blob = container.get_blob_client("py.txt")
blob.upload_blob(b"python")
snapshot = blob.create_snapshot()["snapshot"]
container.get_blob_client("py.txt", snapshot=snapshot).delete_blob()
out = {}
container.get_blob_client("py.txt", snapshot=snapshot).delete_blob(blob_delete_type="permanent")
listed = container.list_blobs(name_starts_with="py.txt", include=["deleted", "snapshots"])
out["listed"] = [[b.snapshot, b.deleted] for b in listed]
try:
    blob.delete_blob(blob_delete_type="permanent")
    out["base"] = None
except HttpResponseError as error:
    out["base"] = [error.status_code, error.error_code]
print(json.dumps(out))
`;

const pythonListing = `
import json, sys
from azure.storage.blob import BlobServiceClient
container = BlobServiceClient.from_connection_string(sys.argv[1]).get_container_client(sys.argv[2])
print(json.dumps([[b.name, b.has_versions_only] for b in container.list_blobs(include=["deletedwithversions"])]))
`;

for (const engine of storeEngines) {
  describe(`blob permanent delete on ${engine.label}`, () => {
    let data: Awaited<ReturnType<typeof engine.data>>;
    let server: RunningServer;
    before(async () => {
      data = await engine.data();
      server = await startServer({ ...data.options, args: ['--blob-versioning'] });
    });
    after(async () => {
      await server?.stop();
      await data?.cleanup();
    });

    const containerName = uniqueContainerName('perm');

    test('AllowPermanentDelete is kept; deletetype=permanent removes a soft-deleted snapshot and version', async () => {
      await setPolicy(server, true);
      const properties = await blobSend(server, { method: 'GET', target: propertiesTarget });
      assert.match(properties.body.toString(), /<AllowPermanentDelete>true<\/AllowPermanentDelete>/);
      const container = blobServiceClient(server).getContainerClient(containerName);
      await container.create();
      const blob = container.getBlockBlobClient('b.txt');
      const first = await blob.upload('one', 3);
      await blob.upload('two', 3);
      const { snapshot } = await blob.createSnapshot();
      await blob.withSnapshot(snapshot!).delete();
      await blob.withVersion(first.versionId!).delete();
      assert.deepEqual(await entries(container, 'b.txt'), [
        [snapshot!, true],
        [first.versionId!, true],
        [(await blob.getProperties()).versionId!, false],
      ]);
      const target = (query: string) => `${containerName}/b.txt?${query}`;
      for (const query of [`snapshot=${snapshot}`, `versionid=${first.versionId}`]) {
        const deleted = await blobSend(server, { method: 'DELETE', target: target(`${query}&deletetype=permanent`) });
        assert.equal(deleted.status, 202, deleted.body.toString());
        assert.equal(deleted.headers['x-ms-delete-type-permanent'], 'true');
        const again = await blobSend(server, { method: 'DELETE', target: target(`${query}&deletetype=permanent`) });
        assert.equal(again.status, 404, 'gone: nothing soft-deleted of that key is left');
      }
      await blob.undelete();
      assert.deepEqual(await entries(container, 'b.txt'), [[(await blob.getProperties()).versionId!, false]]);
      await assert.rejects(blob.withSnapshot(snapshot!).download(), { statusCode: 404 });
      await assert.rejects(blob.withVersion(first.versionId!).download(), { statusCode: 404 });
    });

    test('raw HTTP: the errors (a policy without it, no snapshot or version, an active one, another value)', async () => {
      const container = blobServiceClient(server).getContainerClient(containerName);
      const blob = container.getBlockBlobClient('e.txt');
      await blob.upload('e', 1);
      const { snapshot } = await blob.createSnapshot();
      const send = (query: string) => blobSend(server, { method: 'DELETE', target: `${containerName}/e.txt?${query}` });
      const base = await send('deletetype=permanent');
      assert.equal(base.status, 400);
      assert.match(base.body.toString(), /InvalidQueryParameterValue/);
      const active = await send(`snapshot=${snapshot}&deletetype=permanent`);
      assert.equal(active.status, 404, 'an active snapshot is not deleted permanently');
      assert.equal((await blob.withSnapshot(snapshot!).downloadToBuffer()).toString(), 'e');
      const other = await send(`snapshot=${snapshot}&deletetype=soft`);
      assert.equal(other.status, 400);
      assert.match(other.body.toString(), /InvalidQueryParameterValue/);
      await blob.withSnapshot(snapshot!).delete();
      await setPolicy(server, false);
      const refused = await send(`snapshot=${snapshot}&deletetype=permanent`);
      assert.equal(refused.status, 400, 'AllowPermanentDelete is false');
      assert.match(refused.body.toString(), /InvalidQueryParameterValue/);
      await setPolicy(server, true);
    });

    test('a service SAS needs Permanent Delete (y); Delete (d) alone is refused', async () => {
      const container = blobServiceClient(server).getContainerClient(containerName);
      const blob = container.getBlockBlobClient('s.txt');
      await blob.upload('s', 1);
      const { snapshot } = await blob.createSnapshot();
      await blob.withSnapshot(snapshot!).delete();
      const expiresOn = new Date(Date.now() + 3_600_000);
      const query = `&snapshot=${encodeURIComponent(snapshot!)}&deletetype=permanent`;
      for (const [letters, status] of [
        ['d', 403],
        ['y', 202],
      ] as const) {
        const url = await blob.generateSasUrl({ permissions: BlobSASPermissions.parse(letters), expiresOn });
        const response = await fetch(`${url}${query}`, { method: 'DELETE' });
        assert.equal(response.status, status, `${letters}: ${await response.text()}`);
      }
      assert.deepEqual(await entries(container, 's.txt'), [[(await blob.getProperties()).versionId!, false]]);
    });

    test("Debian's Python SDK: delete_blob(blob_delete_type='permanent') of a soft-deleted snapshot", async () => {
      const args = ['-c', pythonScript, blobConnectionString(server), containerName];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.listed, [[null, null]]);
      assert.deepEqual(out.base, [400, 'InvalidQueryParameterValue']);
    });

    test('List Blobs include=deletedwithversions: a deleted blob with versions is listed once, HasVersionsOnly', async () => {
      const container = blobServiceClient(server).getContainerClient(uniqueContainerName('dwv'));
      await container.create();
      const gone = container.getBlockBlobClient('d.txt');
      const first = await gone.upload('one', 3);
      const second = await gone.upload('two', 3);
      await gone.delete();
      await container.getBlockBlobClient('live.txt').upload('live', 4);
      const list = async (options: Parameters<ContainerClient['listBlobsFlat']>[0], pageSize?: number) => {
        const items: [string, string | undefined, boolean][] = [];
        for await (const page of container.listBlobsFlat(options).byPage({ maxPageSize: pageSize ?? 5000 })) {
          for (const item of page.segment.blobItems) {
            items.push([item.name, item.versionId, item.hasVersionsOnly === true]);
          }
        }
        return items;
      };
      const live = (await container.getBlockBlobClient('live.txt').getProperties()).versionId;
      assert.deepEqual(await list({}), [['live.txt', live, false]], 'not listed without it');
      assert.deepEqual(await list({ includeDeletedWithVersions: true }), [
        ['d.txt', undefined, true],
        ['live.txt', live, false],
      ]);
      const withVersions = [
        ['d.txt', undefined, true],
        ['d.txt', first.versionId, false],
        ['d.txt', second.versionId, false],
        ['live.txt', live, false],
      ];
      const both = { includeDeletedWithVersions: true, includeVersions: true };
      assert.deepEqual(await list(both), withVersions);
      for (const pageSize of [1, 2, 3])
        assert.deepEqual(await list(both, pageSize), withVersions, `pages of ${pageSize}`);
      assert.deepEqual(await list({ includeDeletedWithVersions: true }, 1), [
        ['d.txt', undefined, true],
        ['live.txt', live, false],
      ]);
      const args = ['-c', pythonListing, blobConnectionString(server), container.containerName];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      assert.deepEqual(JSON.parse(stdout), [
        ['d.txt', true],
        ['live.txt', null],
      ]);
    });

    test('stopped and started again: what was deleted permanently stays gone, the policy stays', async () => {
      await server.stop();
      server = await startServer({ ...data.options, args: ['--blob-versioning'] });
      const container = blobServiceClient(server).getContainerClient(containerName);
      const blob = container.getBlockBlobClient('b.txt');
      assert.deepEqual(await entries(container, 'b.txt'), [[(await blob.getProperties()).versionId!, false]]);
      const properties = await blobSend(server, { method: 'GET', target: propertiesTarget });
      assert.match(properties.body.toString(), /<AllowPermanentDelete>true<\/AllowPermanentDelete>/);
    });
  });
}
