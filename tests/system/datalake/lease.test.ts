// Leases on Data Lake paths through the official JavaScript SDK (@azure/storage-file-datalake) and
// raw HTTP against a real server, on both engines: Lease Path (POST with x-ms-lease-action) on a
// file and a directory, DataLakeLeaseClient, x-ms-lease-id on append, flush, delete, rename and set
// access control, the lease actions of append and flush (acquire, auto-renew, release,
// acquire-release), and flush with retainUncommittedData.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { DataLakeServiceClient } from '@azure/storage-file-datalake';
import { datalakeServiceClient, failure } from '../../helpers/datalake.js';
import { blobSend, uniqueContainerName } from '../../helpers/blob.js';
import { type RunningServer, serverEngines, startServer } from '../../helpers/server.js';


for (const engine of serverEngines) {
  describe(`Data Lake leases on ${engine.label}`, () => {
    let server: RunningServer;
    let service: DataLakeServiceClient;
    before(async () => {
      server = await startServer(engine.options);
      service = datalakeServiceClient(server);
    });
    after(async () => {
      await server?.stop();
    });

    test('Lease Path through raw POST on a file and a directory', async () => {
      const fs = service.getFileSystemClient(uniqueContainerName('lease'));
      await fs.create();
      await fs.getDirectoryClient('d').create();
      await fs.getFileClient('d/f.txt').create();
      const lease = (path: string, headers: Record<string, string>) =>
        blobSend(server, { method: 'POST', target: `${fs.name}/${path}`, headers });
      const id = randomUUID();
      const before = await fs.getFileClient('d/f.txt').getProperties();
      const acquired = await lease('d/f.txt', {
        'x-ms-lease-action': 'acquire',
        'x-ms-lease-duration': '-1',
        'x-ms-proposed-lease-id': id,
      });
      assert.equal(acquired.status, 201);
      assert.equal(acquired.headers['x-ms-lease-id'], id);
      assert.equal(acquired.headers['etag'], before.etag, 'a lease action keeps the ETag');
      const again = await lease('d/f.txt', { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '-1' });
      assert.deepEqual([again.status, again.json().error.code], [409, 'LeaseAlreadyPresent']);
      const renewed = await lease('d/f.txt', { 'x-ms-lease-action': 'renew', 'x-ms-lease-id': id });
      assert.equal(renewed.status, 200);
      const other = randomUUID();
      const changed = await lease('d/f.txt', {
        'x-ms-lease-action': 'change',
        'x-ms-lease-id': id,
        'x-ms-proposed-lease-id': other,
      });
      assert.deepEqual([changed.status, changed.headers['x-ms-lease-id']], [200, other]);
      const properties = await fs.getFileClient('d/f.txt').getProperties();
      assert.deepEqual([properties.leaseState, properties.leaseStatus], ['leased', 'locked']);
      const broken = await lease('d/f.txt', { 'x-ms-lease-action': 'break', 'x-ms-lease-break-period': '0' });
      assert.deepEqual([broken.status, broken.headers['x-ms-lease-time']], [202, '0']);
      assert.equal((await fs.getFileClient('d/f.txt').getProperties()).leaseState, 'broken');
      const missing = await lease('d/f.txt', { 'x-ms-lease-action': 'renew' });
      assert.deepEqual([missing.status, missing.json().error.code], [400, 'MissingRequiredHeader']);

      const dirLease = await lease('d', { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '15' });
      assert.equal(dirLease.status, 201);
      const dirId = dirLease.headers['x-ms-lease-id'] as string;
      assert.deepEqual(await failure(fs.getDirectoryClient('d').delete(true)), [412, 'LeaseIdMissing']);
      const released = await lease('d', { 'x-ms-lease-action': 'release', 'x-ms-lease-id': dirId });
      assert.equal(released.status, 200);
      const gone = await lease('nothing', { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '-1' });
      assert.deepEqual([gone.status, gone.json().error.code], [404, 'PathNotFound']);
    });

    test('DataLakeLeaseClient and x-ms-lease-id on append, flush, access control, rename and delete', async () => {
      const fs = service.getFileSystemClient(uniqueContainerName('lease'));
      await fs.create();
      const file = fs.getFileClient('f.txt');
      await file.create();
      const leaseClient = file.getDataLakeLeaseClient();
      const { leaseId } = await leaseClient.acquireLease(-1);
      assert.ok(leaseId);
      const data = Buffer.from('hello');
      assert.deepEqual(await failure(file.append(data, 0, data.length)), [412, 'LeaseIdMissing']);
      const wrong = { conditions: { leaseId: randomUUID() } };
      assert.deepEqual(await failure(file.append(data, 0, data.length, wrong)), [
        412,
        'LeaseIdMismatchWithBlobOperation',
      ]);
      await file.append(data, 0, data.length, { conditions: { leaseId } });
      assert.deepEqual(await failure(file.flush(5)), [412, 'LeaseIdMissing']);
      await file.flush(5, { conditions: { leaseId } });
      assert.equal((await file.readToBuffer()).toString(), 'hello');
      assert.deepEqual(await failure(file.setPermissions(permissions())), [412, 'LeaseIdMissing']);
      await file.setPermissions(permissions(), { conditions: { leaseId } });
      const rename = (headers: Record<string, string>) =>
        blobSend(server, {
          method: 'PUT',
          target: `${fs.name}/g.txt?mode=legacy`,
          headers: { 'x-ms-rename-source': `/${fs.name}/f.txt`, ...headers },
        });
      const refused = await rename({});
      assert.deepEqual([refused.status, refused.json().error.code], [412, 'LeaseIdMissing']);
      assert.equal((await rename({ 'x-ms-source-lease-id': leaseId! })).status, 201);
      const moved = fs.getFileClient('g.txt');
      assert.equal((await moved.getProperties()).leaseState, 'leased', 'the lease moves with the path');
      assert.deepEqual(await failure(moved.delete()), [412, 'LeaseIdMissing']);
      await moved.getDataLakeLeaseClient(leaseId).releaseLease();
      await moved.delete();
      assert.equal(await moved.exists(), false);
    });

    test('lease actions of append and flush', async () => {
      const fs = service.getFileSystemClient(uniqueContainerName('lease'));
      await fs.create();
      const file = fs.getFileClient('f.txt');
      await file.create();
      const id = randomUUID();
      const part = Buffer.from('abcde');
      await file.append(part, 0, 5, { leaseAction: 'acquire', proposedLeaseId: id, leaseDurationInSeconds: 15 });
      let properties = await file.getProperties();
      assert.deepEqual([properties.leaseState, properties.leaseDuration], ['leased', 'fixed']);
      assert.deepEqual(await failure(file.flush(5)), [412, 'LeaseIdMissing']);
      await file.flush(5, { leaseAction: 'auto-renew', conditions: { leaseId: id } });
      assert.equal((await file.getProperties()).leaseState, 'leased');
      await file.append(part, 5, 5, { conditions: { leaseId: id } });
      await file.flush(10, { leaseAction: 'release', conditions: { leaseId: id } });
      properties = await file.getProperties();
      assert.deepEqual([properties.leaseState, properties.contentLength], ['available', 10]);
      await file.append(part, 10, 5, {
        flush: true,
        leaseAction: 'acquire-release',
        proposedLeaseId: randomUUID(),
        leaseDurationInSeconds: -1,
      });
      properties = await file.getProperties();
      assert.deepEqual([properties.leaseState, properties.contentLength], ['available', 15]);
      // release and acquire-release act with a flush only (chosen: 400 on a plain append).
      const release = failure(file.append(part, 15, 5, { leaseAction: 'release', conditions: { leaseId: id } }));
      assert.equal((await release)?.[0], 400);
      const other = await file.getDataLakeLeaseClient().acquireLease(-1);
      const taken = failure(
        file.flush(15, { leaseAction: 'acquire-release', proposedLeaseId: randomUUID(), leaseDurationInSeconds: -1 }),
      );
      assert.deepEqual(await taken, [409, 'LeaseAlreadyPresent']);
      await file.getDataLakeLeaseClient(other.leaseId).breakLease(0);
    });

    test('flush with retainUncommittedData keeps the data past the position for a later flush', async () => {
      const fs = service.getFileSystemClient(uniqueContainerName('retain'));
      await fs.create();
      const file = fs.getFileClient('f.bin');
      await file.create();
      await file.append(Buffer.from('0123456789'), 0, 10);
      await file.append(Buffer.from('abcdefghij'), 10, 10);
      await file.append(Buffer.from('KLMNO'), 20, 5);
      await file.flush(10, { retainUncommittedData: true });
      assert.equal((await file.readToBuffer()).toString(), '0123456789');
      await file.flush(20, { retainUncommittedData: true });
      assert.equal((await file.readToBuffer()).toString(), '0123456789abcdefghij');
      await file.flush(25);
      assert.equal((await file.readToBuffer()).toString(), '0123456789abcdefghijKLMNO');

      const plain = fs.getFileClient('g.bin');
      await plain.create();
      await plain.append(Buffer.from('0123456789'), 0, 10);
      await plain.append(Buffer.from('abcdefghij'), 10, 10);
      await plain.flush(10);
      assert.deepEqual(await failure(plain.flush(20)), [400, 'InvalidFlushPosition']);
    });
  });
}

function permissions() {
  const all = { read: true, write: true, execute: false };
  return { owner: all, group: all, other: all, stickyBit: false, extendedAcls: false };
}
