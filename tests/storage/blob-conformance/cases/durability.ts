// Durability across a reopen (engines that keep data): every acknowledged container, blob,
// snapshot, committed and staged block is there again, and its content reads back.
import assert from 'node:assert/strict';
import type { BlobCase } from '../suite.js';
import { asStored, blob, blockOf, container, readAll } from '../support.js';

export const durabilityCases: readonly BlobCase[] = [
  {
    name: 'after reopening: containers, blobs, snapshots, blocks and content as acknowledged',
    async run({ store, account, reopen }) {
      const acct = account();
      const record = container('c', 'state');
      await store.createContainer(acct, record);
      const blocks = [await blockOf(store, 'hello ', 'QQ=='), await blockOf(store, 'world', 'Qg==')];
      const base = blob('c', 'b', 11);
      await store.putBlob(acct, base, { kind: 'replace', blocks }, null);
      const snapshot = { ...base, snapshot: 's', etag: '"s"' };
      await store.snapshotBlob(acct, snapshot, base.etag);
      const staged = await blockOf(store, 'staged', 'Qw==');
      await store.stageBlock(acct, 'c', 'b', staged);
      const appendBase = blob('c', 'log', 0);
      await store.putBlob(acct, appendBase, { kind: 'replace', blocks: [] }, null);
      const appended = blob('c', 'log', 4);
      await store.putBlob(acct, appended, { kind: 'append', block: await blockOf(store, 'line') }, appendBase.etag);
      const reopened = await reopen();
      assert.deepEqual(await reopened.getContainer(acct, 'c'), record);
      assert.deepEqual(await reopened.getBlob(acct, { container: 'c', name: 'b', snapshot: '' }), base);
      assert.deepEqual(await reopened.getBlob(acct, { container: 'c', name: 'b', snapshot: 's' }), snapshot);
      assert.deepEqual(await reopened.getBlocks(acct, { container: 'c', name: 'b', snapshot: '' }), {
        committed: asStored(blocks),
        staged: asStored([staged]),
      });
      assert.equal(await readAll(reopened, acct, base), 'hello world');
      assert.equal(await readAll(reopened, acct, snapshot, 3), 'lo world');
      assert.equal(await readAll(reopened, acct, appended), 'line');
    },
  },
];
