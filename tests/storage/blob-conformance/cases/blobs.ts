// Blob records: Put Blob's compare-and-swap outcomes, content kept, replaced and appended with the
// record, snapshots sharing their base's content, and deletes of a base, its snapshots or one snapshot.
import assert from 'node:assert/strict';
import type { BlobCase } from '../suite.js';
import { asStored, blob, blockOf, readAll, snapshotOf } from '../support.js';

const key = (name: string, snapshot = '') => ({ container: 'c', name, snapshot });

export const blobCases: readonly BlobCase[] = [
  {
    name: 'putBlob: ok, containerNotFound, blobNotFound, etagMismatch for ifEtag undefined, null and a string',
    async run({ store, account, withContainer }) {
      const acct = await withContainer();
      const block = await blockOf(store, 'hello');
      const replace = { kind: 'replace', blocks: [block] } as const;
      const first = blob('c', 'b', 5);
      assert.equal(await store.putBlob(account(), first, replace, undefined), 'containerNotFound');
      assert.equal(await store.putBlob(acct, { ...first, container: 'none' }, replace, null), 'containerNotFound');
      assert.equal(await store.putBlob(acct, first, replace, '"x"'), 'blobNotFound', 'a string needs a record');
      assert.equal(await store.getBlob(acct, key('b')), undefined);
      assert.equal(await store.putBlob(acct, first, replace, null), 'ok');
      assert.deepEqual(await store.getBlob(acct, key('b')), first);
      const second = blob('c', 'b', 5, 'two');
      assert.equal(await store.putBlob(acct, second, replace, null), 'etagMismatch', 'null: there must be none');
      assert.equal(await store.putBlob(acct, second, replace, '"stale"'), 'etagMismatch');
      assert.equal(await store.putBlob(acct, second, replace, first.etag), 'ok');
      const third = blob('c', 'b', 5, 'three');
      assert.equal(await store.putBlob(acct, third, replace, undefined), 'ok', 'undefined: any record');
      assert.deepEqual(await store.getBlob(acct, key('b')), third);
      assert.equal(await readAll(store, acct, third), 'hello');
    },
  },
  {
    name: "putBlob 'keep' changes the record, not the content; on no blob it is blobNotFound",
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const first = blob('c', 'b', 3);
      await store.putBlob(acct, first, { kind: 'replace', blocks: [await blockOf(store, 'abc')] }, null);
      const props = blob('c', 'b', 3, 'new headers');
      assert.equal(await store.putBlob(acct, props, { kind: 'keep' }, first.etag), 'ok');
      assert.deepEqual(await store.getBlob(acct, key('b')), props);
      assert.equal(await readAll(store, acct, props), 'abc');
      assert.equal(await store.putBlob(acct, blob('c', 'nope', 0), { kind: 'keep' }, undefined), 'blobNotFound');
      assert.equal(await store.putBlob(acct, blob('c', 'nope', 0), { kind: 'keep' }, '"x"'), 'blobNotFound');
    },
  },
  {
    name: "putBlob 'append' adds one block at the end; on no blob it is blobNotFound",
    async run({ store, withContainer }) {
      const acct = await withContainer();
      let record = blob('c', 'log', 0);
      assert.equal(await store.putBlob(acct, record, { kind: 'replace', blocks: [] }, null), 'ok');
      assert.equal(await readAll(store, acct, record), '');
      let expected = '';
      for (const line of ['one\n', 'two\n', 'three\n']) {
        expected += line;
        const next = blob('c', 'log', expected.length);
        const block = await blockOf(store, line);
        assert.equal(await store.putBlob(acct, next, { kind: 'append', block }, '"stale"'), 'etagMismatch');
        assert.equal(await store.putBlob(acct, next, { kind: 'append', block }, record.etag), 'ok');
        record = next;
      }
      assert.equal(await readAll(store, acct, record), expected);
      assert.equal(await readAll(store, acct, record, 5, 9), 'wo\nt');
      const { committed } = await store.getBlocks(acct, key('log'));
      assert.deepEqual(
        committed.map((each) => each.content.sizeBytes),
        [4, 4, 6],
      );
      const block = await blockOf(store, 'x');
      assert.equal(
        await store.putBlob(acct, blob('c', 'none', 1), { kind: 'append', block }, undefined),
        'blobNotFound',
      );
    },
  },
  {
    name: 'a snapshot keeps the content it was made with; the base moves on',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const base = blob('c', 'b', 6);
      const blocks = [await blockOf(store, 'abc', 'AA'), await blockOf(store, 'def', 'AB')];
      await store.putBlob(acct, base, { kind: 'replace', blocks }, null);
      const snapshot = snapshotOf(base, '2026-01-01T00:00:00.0000000Z');
      assert.equal(await store.snapshotBlob(acct, snapshot, '"stale"'), 'etagMismatch');
      assert.equal(await store.snapshotBlob(acct, { ...snapshot, container: 'x' }, base.etag), 'containerNotFound');
      assert.equal(await store.snapshotBlob(acct, { ...snapshot, name: 'none' }, base.etag), 'blobNotFound');
      assert.equal(await store.snapshotBlob(acct, snapshot, base.etag), 'ok');
      assert.deepEqual(await store.getBlob(acct, key('b', snapshot.snapshot)), snapshot);
      assert.deepEqual(
        (await store.getBlocks(acct, key('b', snapshot.snapshot))).committed,
        asStored(blocks),
        'shared content',
      );
      const appended = blob('c', 'b', 7);
      assert.equal(
        await store.putBlob(acct, appended, { kind: 'append', block: await blockOf(store, 'g') }, base.etag),
        'ok',
      );
      const replaced = blob('c', 'b', 1);
      await store.putBlob(acct, replaced, { kind: 'replace', blocks: [await blockOf(store, 'z')] }, appended.etag);
      assert.equal(await readAll(store, acct, snapshot), 'abcdef');
      assert.deepEqual((await store.getBlocks(acct, key('b', snapshot.snapshot))).committed, asStored(blocks));
      assert.equal(await readAll(store, acct, replaced), 'z');
    },
  },
  {
    name: 'deleteBlob: the base, its snapshots, both, or one snapshot, by ETag',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const base = blob('c', 'b', 1);
      await store.putBlob(acct, base, { kind: 'replace', blocks: [await blockOf(store, 'a')] }, null);
      const [s1, s2] = [snapshotOf(base, 's1'), snapshotOf(base, 's2')];
      await store.snapshotBlob(acct, s1, base.etag);
      await store.snapshotBlob(acct, s2, base.etag);
      const both = { base: true, snapshots: true };
      assert.equal(await store.deleteBlob(acct, key('none'), both, undefined), 'blobNotFound');
      assert.equal(await store.deleteBlob(acct, { ...key('b'), container: 'x' }, both, undefined), 'containerNotFound');
      assert.equal(await store.deleteBlob(acct, key('b', 's1'), both, '"stale"'), 'etagMismatch');
      assert.equal(await store.deleteBlob(acct, key('b', 's1'), both, s1.etag), 'ok', 'one snapshot: flags ignored');
      assert.equal(await store.getBlob(acct, key('b', 's1')), undefined);
      assert.deepEqual(await store.getBlob(acct, key('b')), base);
      assert.equal(await store.deleteBlob(acct, key('b', 's1'), both, undefined), 'blobNotFound');
      assert.equal(await store.deleteBlob(acct, key('b'), { base: false, snapshots: true }, s2.etag), 'etagMismatch');
      assert.equal(await store.deleteBlob(acct, key('b'), { base: false, snapshots: true }, base.etag), 'ok');
      assert.equal(await store.getBlob(acct, key('b', 's2')), undefined);
      assert.deepEqual(await store.getBlob(acct, key('b')), base, 'the base stays');
      await store.snapshotBlob(acct, s1, base.etag);
      assert.equal(await store.deleteBlob(acct, key('b'), both, undefined), 'ok');
      assert.equal(await store.getBlob(acct, key('b')), undefined);
      assert.equal(await store.getBlob(acct, key('b', 's1')), undefined);
    },
  },
  {
    name: 'a record whose size its content does not have is refused, and only that call',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const first = blob('c', 'b', 3);
      await store.putBlob(acct, first, { kind: 'replace', blocks: [await blockOf(store, 'abc')] }, null);
      const other = await blockOf(store, 'o');
      const append = { kind: 'append', block: await blockOf(store, 'd') } as const;
      // Sent together, so an engine that groups writes has them in one group.
      const [keep, appended, replaced, snapshot, fine] = await Promise.allSettled([
        store.putBlob(acct, blob('c', 'b', 4), { kind: 'keep' }, first.etag),
        store.putBlob(acct, blob('c', 'b', 3), append, first.etag),
        store.putBlob(acct, blob('c', 'b', 2), { kind: 'replace', blocks: [other] }, first.etag),
        store.snapshotBlob(acct, { ...blob('c', 'b', 5), snapshot: 's' }, first.etag),
        store.putBlob(acct, blob('c', 'other', 1), { kind: 'replace', blocks: [other] }, null),
      ]);
      for (const refused of [keep, appended, replaced, snapshot]) assert.equal(refused.status, 'rejected');
      assert.deepEqual(fine, { status: 'fulfilled', value: 'ok' });
      assert.deepEqual(await store.getBlob(acct, key('b')), first);
      assert.equal(await store.getBlob(acct, key('b', 's')), undefined);
    },
  },
];
