// Previous versions (blob-store.ts, versionKey): putBlob and deleteBlob keep the base blob as it was
// with their change, in one transaction; versions read, list and delete as snapshots do, but are
// listed only when asked, and deleting a base blob's snapshots leaves them.
import assert from 'node:assert/strict';
import { versionKey, type BlobRecord } from '../../../../src/storage/blob-store.js';
import type { BlobCase } from '../suite.js';
import { blob, blockOf, readAll, reclaimAll, snapshotOf } from '../support.js';

const key = (name: string, snapshot = '') => ({ container: 'c', name, snapshot });
const v1 = versionKey('2027-01-01T00:00:00.0000001Z');
const v2 = versionKey('2027-01-01T00:00:00.0000002Z');
const listedKeys = (records: readonly { kind: string; record?: BlobRecord }[]) =>
  records.map((each) => (each.kind === 'blob' ? `${each.record!.name}@${each.record!.snapshot}` : each.kind));

export const versionCases: readonly BlobCase[] = [
  {
    name: 'putBlob keepAs keeps the base blob as it was, content and record, beside the new one',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const first = blob('c', 'b', 3, 'first');
      await store.putBlob(acct, first, { kind: 'replace', blocks: [await blockOf(store, 'one')] }, null);
      const second = blob('c', 'b', 3, 'second');
      const kept = { ...first, snapshot: v1 };
      const replace = { kind: 'replace', blocks: [await blockOf(store, 'two')] } as const;
      assert.equal(await store.putBlob(acct, second, replace, '"stale"', kept), 'etagMismatch');
      assert.equal(await store.getBlob(acct, key('b', v1)), undefined, 'nothing kept when the condition fails');
      assert.equal(await store.putBlob(acct, second, replace, first.etag, kept), 'ok');
      assert.deepEqual(await store.getBlob(acct, key('b', v1)), kept);
      assert.deepEqual(await store.getBlob(acct, key('b')), second);
      assert.equal(await readAll(store, acct, kept), 'one');
      assert.equal(await readAll(store, acct, second), 'two');
      // A record change ('keep') keeps the version with the same content.
      const third = blob('c', 'b', 3, 'metadata');
      const keptSecond = { ...second, snapshot: v2 };
      assert.equal(await store.putBlob(acct, third, { kind: 'keep' }, second.etag, keptSecond), 'ok');
      assert.equal(await readAll(store, acct, keptSecond), 'two');
      assert.equal(await readAll(store, acct, third), 'two');
    },
  },
  {
    name: 'deleteBlob keepAs: the base blob is gone, its version stays; snapshots deletes never take versions',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const first = blob('c', 'b', 3, 'first');
      await store.putBlob(acct, first, { kind: 'replace', blocks: [await blockOf(store, 'one')] }, null);
      const snapshot = snapshotOf(first, '2027-01-01T00:00:00.0000000Z');
      assert.equal(await store.snapshotBlob(acct, snapshot, first.etag), 'ok');
      const second = blob('c', 'b', 3, 'second');
      const replace = { kind: 'replace', blocks: [await blockOf(store, 'two')] } as const;
      assert.equal(await store.putBlob(acct, second, replace, first.etag, { ...first, snapshot: v1 }), 'ok');
      const all = { prefix: '', limit: 10, snapshots: true, uncommitted: false, versions: true };
      const listed = await store.listBlobs(acct, 'c', all);
      assert.deepEqual(listedKeys(listed), [`b@${snapshot.snapshot}`, `b@${v1}`, 'b@'], 'snapshots, versions, base');
      const snapshotsOnly = await store.listBlobs(acct, 'c', { ...all, versions: false });
      assert.deepEqual(listedKeys(snapshotsOnly), [`b@${snapshot.snapshot}`, 'b@']);
      const versionsOnly = await store.listBlobs(acct, 'c', { ...all, snapshots: false });
      assert.deepEqual(listedKeys(versionsOnly), [`b@${v1}`, 'b@']);
      const from = await store.listBlobs(acct, 'c', { ...all, from: { name: 'b', snapshot: v1 } });
      assert.deepEqual(listedKeys(from), [`b@${v1}`, 'b@'], 'a marker at a version');
      const kept = { ...second, snapshot: v2 };
      const parts = { base: true, snapshots: true };
      assert.equal(await store.deleteBlob(acct, key('b'), parts, second.etag, kept), 'ok');
      assert.equal(await store.getBlob(acct, key('b')), undefined);
      assert.equal(await store.getBlob(acct, key('b', snapshot.snapshot)), undefined);
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', all)), [`b@${v1}`, `b@${v2}`]);
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', { ...all, versions: false })), []);
      assert.equal(await readAll(store, acct, kept), 'two');
    },
  },
  {
    name: "deleting a version frees its content once nothing else names it; the base's stays",
    async run({ store, subject, withContainer }) {
      const acct = await withContainer();
      const old = await blockOf(store, 'old');
      const first = blob('c', 'b', 3);
      await store.putBlob(acct, first, { kind: 'replace', blocks: [old] }, null);
      const fresh = await blockOf(store, 'new');
      const kept = { ...first, snapshot: v1 };
      await store.putBlob(acct, blob('c', 'b', 3), { kind: 'replace', blocks: [fresh] }, first.etag, kept);
      await reclaimAll(subject);
      assert.equal(await subject.contentExists(old.content), true, 'the version names it');
      const parts = { base: false, snapshots: false };
      assert.equal(await store.deleteBlob(acct, key('b', v1), parts, kept.etag), 'ok');
      assert.equal(await store.getBlob(acct, key('b', v1)), undefined);
      await reclaimAll(subject);
      assert.equal(await subject.contentExists(old.content), false);
      assert.equal(await subject.contentExists(fresh.content), true);
    },
  },
  {
    name: 'previous versions are there after reopening, their content too',
    async run({ store, withContainer, reopen }) {
      const acct = await withContainer();
      const first = blob('c', 'b', 3, 'first');
      await store.putBlob(acct, first, { kind: 'replace', blocks: [await blockOf(store, 'one')] }, null);
      const kept = { ...first, snapshot: v1 };
      const parts = { base: true, snapshots: false };
      assert.equal(await store.deleteBlob(acct, key('b'), parts, first.etag, kept), 'ok');
      const reopened = await reopen();
      assert.deepEqual(await reopened.getBlob(acct, key('b', v1)), kept);
      assert.equal(await reopened.getBlob(acct, key('b')), undefined);
      assert.equal(await readAll(reopened, acct, kept), 'one');
    },
  },
];
