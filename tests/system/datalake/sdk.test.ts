// The Data Lake API through the official JavaScript SDK (@azure/storage-file-datalake) and raw
// HTTP against a real server, on both engines: create conditions, append and flush with Content-MD5,
// reads by range, DirectoryNotEmpty, renames with source conditions, access control, paged List
// Paths, and the API's JSON error bodies.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { DataLakeServiceClient } from '@azure/storage-file-datalake';
import { datalakeServiceClient, failure } from '../../helpers/datalake.js';
import { blobSend, uniqueContainerName } from '../../helpers/blob.js';
import { type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

async function names(iterable: AsyncIterable<{ name?: string }>): Promise<string[]> {
  const found: string[] = [];
  for await (const item of iterable) found.push(item.name!);
  return found;
}

for (const engine of serverEngines) {
  describe(`@azure/storage-file-datalake on ${engine.label}`, () => {
    let server: RunningServer;
    let service: DataLakeServiceClient;
    before(async () => {
      server = await startServer(engine.options);
      service = datalakeServiceClient(server);
    });
    after(async () => {
      await server?.stop();
    });

    test('create, append and flush, ranges, conditions, DirectoryNotEmpty, rename, access control', async () => {
      const fs = service.getFileSystemClient(uniqueContainerName('lake'));
      await fs.create();
      const dir = fs.getDirectoryClient('a/b');
      await dir.create();
      const file = dir.getFileClient('f.txt');
      await file.create();
      assert.deepEqual(await failure(file.create({ conditions: { ifNoneMatch: '*' } })), [409, 'PathAlreadyExists']);
      const first = Buffer.from('0123456789');
      await file.append(first, 0, first.length);
      assert.equal((await file.readToBuffer()).length, 0, 'appended data is unseen before the flush');
      await file.flush(10);
      assert.equal((await file.readToBuffer(3, 4)).toString(), '3456');
      const status = await file.getProperties();
      assert.equal(status.contentLength, 10);

      assert.deepEqual(await failure(fs.getDirectoryClient('a').delete(false)), [409, 'DirectoryNotEmpty']);
      // Renames go raw: the SDK's move() sets the destination URL's whole path, which drops a
      // path-style URL's account segment (docs/datalake.md).
      const rename = (from: string, to: string, headers: Record<string, string> = {}) =>
        blobSend(server, {
          method: 'PUT',
          target: `${fs.name}/${to}?mode=legacy`,
          headers: { 'x-ms-rename-source': `/${fs.name}/${from}`, ...headers },
        });
      const refused = await rename('a/b/f.txt', 'a/moved.txt', { 'x-ms-source-if-match': '"0x1"' });
      assert.deepEqual([refused.status, refused.json().error.code], [412, 'SourceConditionNotMet']);
      const renamed = await rename('a/b/f.txt', 'a/moved.txt', { 'x-ms-source-if-match': status.etag! });
      assert.equal(renamed.status, 201);
      assert.equal(await file.exists(), false);
      assert.equal((await rename('a', 'z')).status, 201);
      assert.deepEqual(await names(fs.listPaths({ recursive: true })), ['z', 'z/b', 'z/moved.txt']);

      const moved = fs.getFileClient('z/moved.txt');
      await moved.setPermissions({
        owner: { read: true, write: true, execute: true },
        group: { read: true, write: false, execute: true },
        other: { read: false, write: false, execute: false },
        stickyBit: false,
        extendedAcls: false,
      });
      const control = await moved.getAccessControl();
      assert.equal(control.owner, '$superuser');
      assert.deepEqual(
        control.acl.map((entry) => `${entry.accessControlType}:${entry.permissions.read}${entry.permissions.write}`),
        ['user:truetrue', 'group:truefalse', 'other:falsefalse'],
      );
      await fs.getDirectoryClient('z').delete(true);
      assert.deepEqual(await names(fs.listPaths({ recursive: true })), []);
      await fs.delete();
    });

    test('List Paths in pages, one level, and Get Filesystem Properties', async () => {
      const fs = service.getFileSystemClient(uniqueContainerName('pages'));
      await fs.create({ metadata: { origin: 'sdk' } });
      for (const name of ['d1/x', 'd2/y', 'f1', 'f2', 'f3']) await fs.getFileClient(name).create();
      const pages: string[][] = [];
      for await (const page of fs.listPaths({ recursive: false }).byPage({ maxPageSize: 2 })) {
        pages.push((page.pathItems ?? []).map((item) => `${item.name}${item.isDirectory ? '/' : ''}`));
      }
      assert.deepEqual(pages, [['d1/', 'd2/'], ['f1', 'f2'], ['f3']]);
      assert.deepEqual((await fs.getProperties()).metadata, { origin: 'sdk' });
      await fs.delete();
    });

    test('a file leased through the Blob API takes appends and flushes only with its lease', async () => {
      const fs = service.getFileSystemClient(uniqueContainerName('lease'));
      await fs.create();
      const file = fs.getFileClient('leased.txt');
      await file.create();
      const lease = await file.getDataLakeLeaseClient().acquireLease(15);
      const data = Buffer.from('abc');
      assert.deepEqual(await failure(file.append(data, 0, 3)), [412, 'LeaseIdMissing']);
      await file.append(data, 0, 3, { conditions: { leaseId: lease.leaseId! } });
      assert.deepEqual(await failure(file.flush(3)), [412, 'LeaseIdMissing']);
      await file.flush(3, { conditions: { leaseId: lease.leaseId! } });
      assert.equal((await file.readToBuffer()).toString(), 'abc');
      assert.deepEqual(await failure(fs.delete()), undefined, 'the file system is not leased');
    });

    test('a Blob API overwrite (Put Blob) keeps the owner, group, permissions and ACL of the path', async () => {
      const fs = service.getFileSystemClient(uniqueContainerName('keep'));
      await fs.create();
      const file = fs.getFileClient('kept.txt');
      await file.create();
      const acl = 'user::rwx,user:5f1c0a2e-0000-4000-8000-000000000001:r-x,group::r--,mask::r-x,other::---';
      await file.setAccessControl(
        acl.split(',').map((entry) => {
          const [kind, id, perms] = entry.split(':') as [string, string, string];
          const p = { read: perms[0] === 'r', write: perms[1] === 'w', execute: perms[2] === 'x' };
          return { accessControlType: kind as 'user', entityId: id, defaultScope: false, permissions: p };
        }),
        { owner: 'ann', group: 'staff' },
      );
      const before = await file.getAccessControl();
      const put = await blobSend(server, {
        method: 'PUT',
        target: `${fs.name}/kept.txt`,
        headers: { 'x-ms-blob-type': 'BlockBlob' },
        body: 'new content',
      });
      assert.equal(put.status, 201);
      const blockBlob = fs.getFileClient('kept.txt');
      assert.equal((await blockBlob.readToBuffer()).toString(), 'new content');
      const after = await file.getAccessControl();
      assert.deepEqual(
        [after.owner, after.group, after.permissions, after.acl],
        [before.owner, before.group, before.permissions, before.acl],
      );
      assert.equal(after.owner, 'ann');
    });

    test('raw HTTP: JSON error bodies, getStatus, unserved actions', async () => {
      const missing = await blobSend(server, { method: 'GET', target: 'nofs?resource=filesystem&recursive=true' });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers['x-ms-error-code'], 'FilesystemNotFound');
      assert.equal(missing.json().error.code, 'FilesystemNotFound');
      const fs = uniqueContainerName('raw');
      assert.equal((await blobSend(server, { method: 'PUT', target: `${fs}?resource=filesystem` })).status, 201);
      const created = await blobSend(server, {
        method: 'PUT',
        target: `${fs}/dir?resource=directory`,
        headers: { 'x-ms-permissions': '0777', 'x-ms-umask': '0022' },
      });
      assert.equal(created.status, 201);
      const head = await blobSend(server, { method: 'HEAD', target: `${fs}/dir?action=getStatus` });
      assert.equal(head.headers['x-ms-resource-type'], 'directory');
      assert.equal(head.headers['x-ms-permissions'], 'rwxr-xr-x');
      const unserved = await blobSend(server, { method: 'PUT', target: `${fs}/dir?action=undelete` });
      assert.equal(unserved.status, 400);
      assert.equal(unserved.json().error.code, 'InvalidQueryParameterValue');
      const noAcl = await blobSend(server, {
        method: 'PATCH',
        target: `${fs}/dir?action=setAccessControlRecursive&mode=set`,
      });
      assert.deepEqual([noAcl.status, noAcl.json().error.code], [400, 'MissingRequiredHeader']);
      await blobSend(server, { method: 'PUT', target: `${fs}/dir/f?resource=file` });
      const body = Buffer.from('abc');
      const append = (md5: Buffer) =>
        blobSend(server, {
          method: 'PATCH',
          target: `${fs}/dir/f?action=append&position=0`,
          headers: { 'Content-MD5': md5.toString('base64') },
          body,
        });
      const wrong = await append(Buffer.alloc(16));
      assert.deepEqual([wrong.status, wrong.json().error.code], [400, 'Md5Mismatch']);
      assert.equal((await append(createHash('md5').update(body).digest())).status, 202);
      const long = await blobSend(server, { method: 'PUT', target: `${fs}/${'x'.repeat(1025)}?resource=file` });
      assert.deepEqual([long.status, long.json().error.code], [400, 'OutOfRangeInput']);
      const noPath = await blobSend(server, { method: 'DELETE', target: `${fs}/none?recursive=false` });
      assert.deepEqual([noPath.status, noPath.json().error.code], [404, 'PathNotFound']);
    });
  });
}
