// Containers: create once, read, list by prefix and from a name, update and delete by ETag, and a
// delete takes every blob, snapshot and staged block with it.
import assert from 'node:assert/strict';
import type { BlobCase } from '../suite.js';
import { blob, blockOf, container, listedNames } from '../support.js';

export const containerCases: readonly BlobCase[] = [
  {
    name: 'a container is created once and read back as written',
    async run({ store, account }) {
      const acct = account();
      const record = container('photos', '{"meta":1}');
      assert.equal(await store.createContainer(acct, record), true);
      assert.equal(await store.createContainer(acct, container('photos')), false);
      assert.deepEqual(await store.getContainer(acct, 'photos'), record);
      assert.equal(await store.getContainer(acct, 'other'), undefined);
      assert.equal(await store.getContainer(account(), 'photos'), undefined, 'accounts are apart');
    },
  },
  {
    name: 'containers are listed by name, with a prefix, from a name, up to a limit',
    async run({ store, account }) {
      const acct = account();
      for (const name of ['b2', 'a1', 'b1', 'c1', 'b3']) await store.createContainer(acct, container(name));
      const names = async (prefix: string, from: string | undefined, limit: number) =>
        (await store.listContainers(acct, prefix, from, limit)).map((each) => each.name);
      assert.deepEqual(await names('', undefined, 10), ['a1', 'b1', 'b2', 'b3', 'c1']);
      assert.deepEqual(await names('b', undefined, 10), ['b1', 'b2', 'b3']);
      assert.deepEqual(await names('b', 'b2', 10), ['b2', 'b3']);
      assert.deepEqual(await names('b', 'a', 2), ['b1', 'b2']);
      assert.deepEqual(await names('', 'b25', 10), ['b3', 'c1']);
      assert.deepEqual(await names('', undefined, 0), []);
    },
  },
  {
    name: 'updateContainer: ok, containerNotFound, etagMismatch; ifEtag undefined, null and a string',
    async run({ store, account }) {
      const acct = account();
      const first = container('c');
      await store.createContainer(acct, first);
      const second = container('c', 'two');
      assert.equal(await store.updateContainer(acct, second, '"stale"'), 'etagMismatch');
      assert.equal(await store.updateContainer(acct, second, null), 'etagMismatch', 'null: there must be none');
      assert.equal(await store.updateContainer(acct, second, first.etag), 'ok');
      assert.deepEqual(await store.getContainer(acct, 'c'), second);
      const third = container('c', 'three');
      assert.equal(await store.updateContainer(acct, third, undefined), 'ok');
      assert.deepEqual(await store.getContainer(acct, 'c'), third);
      assert.equal(await store.updateContainer(acct, container('none'), undefined), 'containerNotFound');
      assert.equal(await store.updateContainer(acct, container('none'), '"x"'), 'containerNotFound');
    },
  },
  {
    name: 'deleteContainer by ETag removes its blobs, snapshots and staged blocks',
    async run({ store, account }) {
      const acct = account();
      const record = container('c');
      await store.createContainer(acct, record);
      const base = blob('c', 'b', 3);
      assert.equal(
        await store.putBlob(acct, base, { kind: 'replace', blocks: [await blockOf(store, 'abc')] }, null),
        'ok',
      );
      assert.equal(await store.snapshotBlob(acct, { ...base, snapshot: 's1', etag: '"s1"' }, base.etag), 'ok');
      assert.equal(await store.stageBlock(acct, 'c', 'staged', await blockOf(store, 'x', 'AAAA')), 'ok');
      assert.equal(await store.deleteContainer(acct, 'c', '"stale"'), 'etagMismatch');
      assert.equal(await store.deleteContainer(acct, 'c', record.etag), 'ok');
      assert.equal(await store.getContainer(acct, 'c'), undefined);
      assert.equal(await store.deleteContainer(acct, 'c', undefined), 'containerNotFound');
      // A container of the same name starts empty.
      await store.createContainer(acct, container('c'));
      const options = { prefix: '', limit: 10, snapshots: true, uncommitted: true };
      assert.deepEqual(listedNames(await store.listBlobs(acct, 'c', options)), []);
      assert.equal(await store.getBlob(acct, { container: 'c', name: 'b', snapshot: '' }), undefined);
      assert.deepEqual(await store.getBlocks(acct, { container: 'c', name: 'staged', snapshot: '' }), {
        committed: [],
        staged: [],
      });
    },
  },
];
