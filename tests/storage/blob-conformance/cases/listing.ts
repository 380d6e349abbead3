// List Blobs' order and bounds: by name, a name's snapshots before its base blob, names with only
// staged blocks where their base would stand, by prefix, from an entry on, up to a limit.
import assert from 'node:assert/strict';
import type { BlobStore, ListBlobsOptions } from '../../../../src/storage/blob-store.js';
import type { BlobCase } from '../suite.js';
import { blob, blockOf, listedNames, snapshotOf } from '../support.js';

/** In container 'c': a (with snapshots s1, s2), b/x, b/y (snapshot s1), c, staged-only b/z and d; b/x also staged. */
async function fill(store: BlobStore, acct: string): Promise<void> {
  for (const name of ['c', 'b/y', 'a', 'b/x']) {
    const record = blob('c', name, 1);
    await store.putBlob(acct, record, { kind: 'replace', blocks: [await blockOf(store, 'x')] }, null);
    const snapshots = name === 'a' ? ['s2', 's1'] : name === 'b/y' ? ['s1'] : [];
    for (const snapshot of snapshots) await store.snapshotBlob(acct, snapshotOf(record, snapshot), record.etag);
  }
  for (const name of ['d', 'b/z', 'b/x']) await store.stageBlock(acct, 'c', name, await blockOf(store, 'y', 'QQ=='));
}

const all: ListBlobsOptions = { prefix: '', limit: 100, snapshots: true, uncommitted: true };

export const listCases: readonly BlobCase[] = [
  {
    name: 'listBlobs orders by name with snapshots before their base, staged-only names as their base',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      await fill(store, acct);
      const names = async (options: Partial<ListBlobsOptions>) =>
        listedNames(await store.listBlobs(acct, 'c', { ...all, ...options }));
      assert.deepEqual(await names({}), [
        'a@s1',
        'a@s2',
        'a',
        'b/x',
        'b/y@s1',
        'b/y',
        'b/z(uncommitted)',
        'c',
        'd(uncommitted)',
      ]);
      assert.deepEqual(await names({ snapshots: false }), [
        'a',
        'b/x',
        'b/y',
        'b/z(uncommitted)',
        'c',
        'd(uncommitted)',
      ]);
      assert.deepEqual(await names({ uncommitted: false }), ['a@s1', 'a@s2', 'a', 'b/x', 'b/y@s1', 'b/y', 'c']);
      assert.deepEqual(await names({ snapshots: false, uncommitted: false }), ['a', 'b/x', 'b/y', 'c']);
      const listed = await store.listBlobs(acct, 'c', { ...all, prefix: 'a', snapshots: false });
      assert.equal(listed.length, 1);
      assert.ok(listed[0]!.kind === 'blob');
      assert.deepEqual(listed[0].record, await store.getBlob(acct, { container: 'c', name: 'a', snapshot: '' }));
    },
  },
  {
    name: 'listBlobs by prefix, from an entry, up to a limit',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      await fill(store, acct);
      const names = async (options: Partial<ListBlobsOptions>) =>
        listedNames(await store.listBlobs(acct, 'c', { ...all, ...options }));
      assert.deepEqual(await names({ prefix: 'b/' }), ['b/x', 'b/y@s1', 'b/y', 'b/z(uncommitted)']);
      assert.deepEqual(await names({ prefix: 'b/', limit: 2 }), ['b/x', 'b/y@s1']);
      assert.deepEqual(await names({ prefix: 'b/', from: { name: 'b/y', snapshot: 's1' } }), [
        'b/y@s1',
        'b/y',
        'b/z(uncommitted)',
      ]);
      assert.deepEqual(await names({ prefix: 'b/', from: { name: 'b/y', snapshot: '' } }), ['b/y', 'b/z(uncommitted)']);
      assert.deepEqual(await names({ from: { name: 'b/z', snapshot: '' }, limit: 2 }), ['b/z(uncommitted)', 'c']);
      assert.deepEqual(await names({ from: { name: 'a', snapshot: 's2' }, limit: 2 }), ['a@s2', 'a']);
      assert.deepEqual(await names({ prefix: 'b', from: { name: 'a', snapshot: '' } }), [
        'b/x',
        'b/y@s1',
        'b/y',
        'b/z(uncommitted)',
      ]);
      assert.deepEqual(await names({ from: { name: 'ca', snapshot: '' } }), ['d(uncommitted)']);
      assert.deepEqual(await names({ limit: 0 }), []);
      assert.deepEqual(await names({ prefix: 'zz' }), []);
      // Paging by the next entry's place reads every entry once.
      const paged: string[] = [];
      let from: ListBlobsOptions['from'];
      for (;;) {
        const page = await store.listBlobs(acct, 'c', { ...all, from, limit: 3 });
        const next = await store.listBlobs(acct, 'c', { ...all, from, limit: 4 });
        paged.push(...listedNames(page));
        const after = next[3];
        if (after === undefined) break;
        from = after.kind === 'blob' ? after.record : { name: after.name, snapshot: '' };
      }
      assert.deepEqual(paged, await names({}));
    },
  },
  {
    name: 'listBlobs of a missing container is empty; containers and accounts are apart',
    async run({ store, account, withContainer }) {
      const acct = await withContainer();
      await fill(store, acct);
      assert.deepEqual(await store.listBlobs(acct, 'none', all), []);
      assert.deepEqual(await store.listBlobs(account(), 'c', all), []);
    },
  },
];
