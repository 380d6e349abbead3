// Container soft delete through real clients on every engine, with --container-soft-delete-days 7:
// the official JS SDK (delete, listContainers({ includeDeleted }), a new container of the name,
// undeleteContainer refused while the name is taken, then restoring blobs, snapshots, tags,
// metadata and stored access policies), raw HTTP (the headers Restore Container needs, paging
// through live and deleted containers of one name), Debian's Python SDK
// (list_containers(include_deleted=True), undelete_container), a restart on the same data, and the
// purge once the days have passed (the test clock moved on).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { BlobServiceClient, ContainerItem } from '@azure/storage-blob';
import { blobConnectionString, blobSend, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { TestClock } from '../../helpers/queue.js';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { setTimeout as sleep } from 'node:timers/promises';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;
const dayMs = 24 * 60 * 60_000;
const softDeleteArgs = ['--container-soft-delete-days', '7', '--blob-reclaim-grace', '1'];

const pythonScript = `
import json, sys
from azure.storage.blob import BlobServiceClient
from azure.core.exceptions import HttpResponseError
service = BlobServiceClient.from_connection_string(sys.argv[1])
name = sys.argv[2]
container = service.create_container(name)
container.upload_blob("p.txt", b"python")
container.delete_container()
out = {"plain": [c.name for c in service.list_containers(name_starts_with=name)]}
deleted = [c for c in service.list_containers(name_starts_with=name, include_deleted=True)]
out["deleted"] = [[c.name, c.deleted, len(c.version)] for c in deleted]
restored = service.undelete_container(name, deleted[0].version)
out["restored"] = restored.get_blob_client("p.txt").download_blob().readall().decode()
try:
    service.undelete_container(name, deleted[0].version)
    out["again"] = None
except HttpResponseError as error:
    out["again"] = [error.status_code, error.error_code]
print(json.dumps(out))
`;

async function listed(service: BlobServiceClient, prefix: string, includeDeleted: boolean): Promise<ContainerItem[]> {
  const items: ContainerItem[] = [];
  for await (const item of service.listContainers({ prefix, includeDeleted, includeMetadata: true })) items.push(item);
  return items;
}

const restoreRequest = (name: string, headers: Record<string, string>) => ({
  method: 'PUT',
  target: `${name}?restype=container&comp=undelete`,
  headers,
});

for (const engine of storeEngines) {
  describe(`container soft delete on ${engine.label}`, () => {
    let data: Awaited<ReturnType<typeof engine.data>>;
    let server: RunningServer;
    const clock = new TestClock();
    before(async () => {
      data = await engine.data();
      server = await startServer({ ...data.options, args: softDeleteArgs, env: clock.env });
    });
    after(async () => {
      await server?.stop();
      await data?.cleanup();
    });

    test('JS SDK: delete, list with includeDeleted, the name taken meanwhile, undeleteContainer restores it all', async () => {
      const service = blobServiceClient(server);
      const name = uniqueContainerName('csd');
      const container = service.getContainerClient(name);
      await container.create({ metadata: { team: 'blue' } });
      const expiresOn = new Date(Date.UTC(2030, 0, 1));
      await container.setAccessPolicy(undefined, [
        { id: 'p1', accessPolicy: { permissions: 'r', startsOn: new Date(Date.UTC(2026, 0, 1)), expiresOn } },
      ]);
      const blob = container.getBlockBlobClient('b.txt');
      await blob.upload('kept', 4, { tags: { stage: 'done' }, metadata: { m: '1' } });
      const snapshot = await blob.createSnapshot();
      await container.delete();
      await assert.rejects(blob.download(), { statusCode: 404, code: 'ContainerNotFound' });
      assert.deepEqual(await listed(service, name, false), [], 'not listed without includeDeleted');
      const [deleted, ...more] = await listed(service, name, true);
      assert.deepEqual(more, []);
      assert.equal(deleted!.name, name);
      assert.equal(deleted!.deleted, true);
      assert.match(deleted!.version!, /^[0-9A-F]{16}$/);
      assert.equal(deleted!.properties.remainingRetentionDays, 7);
      assert.ok(Math.abs(deleted!.properties.deletedOn!.getTime() - Date.now()) < 60_000);
      assert.deepEqual(deleted!.metadata, { team: 'blue' });

      // A container of the name meanwhile: empty; the restore is refused while it is there.
      await container.create();
      assert.deepEqual(await listed(service, name, true).then((all) => all.map((c) => c.deleted ?? false)), [
        false,
        true,
      ]);
      await assert.rejects(service.undeleteContainer(name, deleted!.version!), {
        statusCode: 409,
        code: 'ContainerAlreadyExists',
      });
      await container.delete();
      await assert.rejects(service.undeleteContainer(name, '00000000000000FF'), {
        statusCode: 404,
        code: 'ContainerNotFound',
      });
      const { containerClient } = await service.undeleteContainer(name, deleted!.version!);
      assert.equal(containerClient.containerName, name);
      assert.equal((await blob.downloadToBuffer()).toString(), 'kept');
      assert.equal((await blob.withSnapshot(snapshot.snapshot!).downloadToBuffer()).toString(), 'kept');
      assert.deepEqual((await blob.getTags()).tags, { stage: 'done' });
      assert.deepEqual((await blob.getProperties()).metadata, { m: '1' });
      assert.deepEqual((await container.getProperties()).metadata, { team: 'blue' });
      const policies = await container.getAccessPolicy();
      assert.deepEqual(
        policies.signedIdentifiers.map((each) => each.id),
        ['p1'],
      );
      const found: string[] = [];
      for await (const item of service.findBlobsByTags(`stage='done'`))
        found.push(`${item.containerName}/${item.name}`);
      assert.ok(found.includes(`${name}/b.txt`), 'found by its tags again');
      // Two deletions of the name: both listed, each restorable on its own.
      const versions = (await listed(service, name, true)).filter((c) => c.deleted).map((c) => c.version);
      assert.ok(
        versions.every((each) => each !== deleted!.version),
        'the restored one is no longer listed',
      );
    });

    test('raw HTTP: Restore Container needs both headers and its own name; paging through one name', async () => {
      const name = uniqueContainerName('csdraw');
      const versions: string[] = [];
      for (let i = 0; i < 2; i++) {
        assert.equal((await blobSend(server, { method: 'PUT', target: `${name}?restype=container` })).status, 201);
        assert.equal((await blobSend(server, { method: 'DELETE', target: `${name}?restype=container` })).status, 202);
      }
      assert.equal((await blobSend(server, { method: 'PUT', target: `${name}?restype=container` })).status, 201);
      // Page by page, one a page: the live container, then the two deleted ones, each once.
      const seen: string[] = [];
      let marker = '';
      for (let page = 0; page < 5; page++) {
        const target = `?comp=list&include=deleted&maxresults=1&prefix=${name}&marker=${encodeURIComponent(marker)}`;
        const answer = await blobSend(server, { method: 'GET', target });
        assert.equal(answer.status, 200, answer.text);
        const entry = /<Container>(.*?)<\/Container>/.exec(answer.text)?.[1] ?? '';
        const version = /<Version>(.*?)<\/Version>/.exec(entry)?.[1];
        if (version !== undefined) versions.push(version);
        seen.push(entry.includes('<Deleted>true</Deleted>') ? 'deleted' : 'live');
        assert.match(entry, /<Properties>.*<DeletedTime>|^((?!DeletedTime).)*$/);
        marker = /<NextMarker>(.*?)<\/NextMarker>/.exec(answer.text)?.[1] ?? '';
        if (marker === '') break;
      }
      assert.deepEqual(seen, ['live', 'deleted', 'deleted']);
      assert.ok(versions[0]! < versions[1]!, 'versions in order');
      const missing = await blobSend(server, restoreRequest(name, { 'x-ms-deleted-container-name': name }));
      assert.equal(missing.status, 400);
      assert.match(missing.text, /MissingRequiredHeader/);
      const renamed = await blobSend(
        server,
        restoreRequest(`${name}x`, {
          'x-ms-deleted-container-name': name,
          'x-ms-deleted-container-version': versions[0]!,
        }),
      );
      assert.equal(renamed.status, 400);
      assert.match(renamed.text, /InvalidHeaderValue/);
      const headers = { 'x-ms-deleted-container-name': name, 'x-ms-deleted-container-version': versions[1]! };
      const taken = await blobSend(server, restoreRequest(name, headers));
      assert.equal(taken.status, 409);
      assert.match(taken.text, /ContainerAlreadyExists/);
      assert.equal((await blobSend(server, { method: 'DELETE', target: `${name}?restype=container` })).status, 202);
      const restored = await blobSend(server, restoreRequest(name, headers));
      assert.equal(restored.status, 201, restored.text);
      assert.ok(restored.headers['etag'] !== undefined && restored.headers['last-modified'] !== undefined);
    });

    test("Debian's Python SDK: list_containers(include_deleted=True), undelete_container", async () => {
      const name = uniqueContainerName('csdpy');
      const args = ['-c', pythonScript, blobConnectionString(server), name];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.plain, []);
      assert.deepEqual(out.deleted, [[name, true, 16]]);
      assert.equal(out.restored, 'python');
      assert.deepEqual(out.again, [404, 'ContainerNotFound']);
    });

    test('after a restart a deleted container is still listed and restorable; once its days pass it is purged', async () => {
      const service = blobServiceClient(server);
      const kept = uniqueContainerName('csdkept');
      const purged = uniqueContainerName('csdpurged');
      for (const name of [kept, purged]) {
        const container = service.getContainerClient(name);
        await container.create();
        await container.getBlockBlobClient('big.bin').upload(Buffer.alloc(300_000, 7), 300_000);
        await container.delete();
      }
      await server.stop();
      server = await startServer({ ...data.options, args: softDeleteArgs, env: clock.env });
      const after = blobServiceClient(server);
      const [deleted] = await listed(after, kept, true);
      await after.undeleteContainer(kept, deleted!.version!);
      assert.equal(
        (await after.getContainerClient(kept).getBlobClient('big.bin').getProperties()).contentLength,
        300_000,
      );
      const [gone] = await listed(after, purged, true);
      clock.advance(7 * dayMs + 60_000);
      // The sweep runs every second (--blob-reclaim-grace 1): the expired one goes.
      for (let tries = 0; (await listed(after, purged, true)).length > 0; tries++) {
        assert.ok(tries < 600, 'purged within a minute');
        await sleep(100);
      }
      await assert.rejects(after.undeleteContainer(purged, gone!.version!), { statusCode: 404 });
      assert.equal(await after.getContainerClient(kept).exists(), true);
    });
  });
}
