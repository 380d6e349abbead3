// Soft delete (blob-soft-delete.ts): deleteBlob with keptPrefix keeps every row it deletes under
// keptPrefix + its key, in one transaction; such rows are no snapshots or versions to the store's
// other calls, are listed only when asked (ListBlobsOptions.deleted), come back by deleteBlob with
// keepAs (even as the base blob), and go once expired (reclaimContent's nowMs past their expiry).
import assert from 'node:assert/strict';
import { softDeletedPrefix } from '../../../../src/storage/blob-soft-delete.js';
import { versionKey, type BlobRecord } from '../../../../src/storage/blob-store.js';
import type { BlobCase } from '../suite.js';
import { blob, blockOf, readAll, reclaimAll, snapshotOf } from '../support.js';

const key = (name: string, snapshot = '') => ({ container: 'c', name, snapshot });
const expires = '2027-01-08T00:00:00.0000000Z';
const prefix = softDeletedPrefix(expires, '2027-01-01T00:00:00.0000000Z');
const later = softDeletedPrefix('2027-01-09T00:00:00.0000000Z', '2027-01-02T00:00:00.0000000Z');
const stamp = '2026-12-31T00:00:00.0000000Z';
const all = { prefix: '', limit: 100, snapshots: true, uncommitted: false, versions: true };
const listedKeys = (records: readonly { kind: string; record?: BlobRecord }[]) =>
  records.map((each) => (each.kind === 'blob' ? `${each.record!.name}@${each.record!.snapshot}` : each.kind));

/** A blob 'b' with content 'one' and a snapshot of it; answers both records. */
async function blobWithSnapshot(store: Parameters<BlobCase['run']>[0]['store'], acct: string) {
  const base = blob('c', 'b', 3, 'base');
  await store.putBlob(acct, base, { kind: 'replace', blocks: [await blockOf(store, 'one')] }, null);
  const snapshot = snapshotOf(base, stamp);
  assert.equal(await store.snapshotBlob(acct, snapshot, base.etag), 'ok');
  return { base, snapshot };
}

export const softDeleteCases: readonly BlobCase[] = [
  {
    name: 'deleteBlob keptPrefix keeps the base blob and its snapshots, unseen unless listed with deleted',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const { base, snapshot } = await blobWithSnapshot(store, acct);
      const parts = { base: true, snapshots: true };
      assert.equal(await store.deleteBlob(acct, key('b'), parts, '"stale"', undefined, prefix), 'etagMismatch');
      assert.equal(await store.deleteBlob(acct, key('b'), parts, base.etag, undefined, prefix), 'ok');
      assert.equal(await store.getBlob(acct, key('b')), undefined);
      assert.equal(await store.getBlob(acct, key('b', stamp)), undefined);
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', all)), [], 'neither snapshots nor versions');
      const listed = await store.listBlobs(acct, 'c', { ...all, deleted: true });
      assert.deepEqual(listedKeys(listed), [`b@${prefix}`, `b@${prefix}${stamp}`]);
      assert.deepEqual(await store.getBlob(acct, key('b', prefix)), { ...base, snapshot: prefix });
      assert.deepEqual(await store.getBlob(acct, key('b', prefix + stamp)), { ...snapshot, snapshot: prefix + stamp });
      assert.equal(await readAll(store, acct, { ...snapshot, snapshot: prefix + stamp }), 'one');
      // A new blob at the name is a blob like any other; the soft-deleted rows stay beside it.
      const fresh = blob('c', 'b', 3, 'fresh');
      await store.putBlob(acct, fresh, { kind: 'replace', blocks: [await blockOf(store, 'two')] }, null);
      const withBase = await store.listBlobs(acct, 'c', { ...all, deleted: true });
      assert.deepEqual(listedKeys(withBase), [`b@${prefix}`, `b@${prefix}${stamp}`, 'b@']);
    },
  },
  {
    name: 'deleteBlob keptPrefix of one snapshot, of the snapshots only, of a previous version',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const { base } = await blobWithSnapshot(store, acct);
      const none = { base: false, snapshots: false };
      assert.equal(await store.deleteBlob(acct, key('b', stamp), none, undefined, undefined, prefix), 'ok');
      assert.equal(await store.getBlob(acct, key('b', stamp)), undefined);
      const second = snapshotOf(base, '2026-12-31T00:00:01.0000000Z');
      assert.equal(await store.snapshotBlob(acct, second, base.etag), 'ok');
      const only = { base: false, snapshots: true };
      assert.equal(await store.deleteBlob(acct, key('b'), only, base.etag, undefined, later), 'ok');
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', all)), ['b@'], 'the base blob stays');
      const v1 = versionKey('2027-01-01T00:00:00.0000001Z');
      const replace = { kind: 'replace', blocks: [await blockOf(store, 'two')] } as const;
      const next = blob('c', 'b', 3, 'next');
      assert.equal(await store.putBlob(acct, next, replace, base.etag, { ...base, snapshot: v1 }), 'ok');
      assert.equal(await store.deleteBlob(acct, key('b', v1), none, undefined, undefined, prefix), 'ok');
      const listed = await store.listBlobs(acct, 'c', { ...all, deleted: true });
      assert.deepEqual(listedKeys(listed), [
        `b@${prefix}${stamp}`,
        `b@${prefix}${v1}`,
        `b@${later}${second.snapshot}`,
        'b@',
      ]);
    },
  },
  {
    name: 'deleteBlob keepAs restores a soft-deleted row under its key, as the base blob only when there is none',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const { base, snapshot } = await blobWithSnapshot(store, acct);
      await store.deleteBlob(acct, key('b'), { base: true, snapshots: true }, base.etag, undefined, prefix);
      const none = { base: false, snapshots: false };
      const keptSnapshot = key('b', prefix + stamp);
      assert.equal(await store.deleteBlob(acct, keptSnapshot, none, snapshot.etag, snapshot), 'ok');
      assert.deepEqual(await store.getBlob(acct, key('b', stamp)), snapshot);
      assert.equal(await readAll(store, acct, snapshot), 'one');
      const fresh = blob('c', 'b', 3, 'fresh');
      await store.putBlob(acct, fresh, { kind: 'replace', blocks: [await blockOf(store, 'two')] }, null);
      const keptBase = key('b', prefix);
      assert.equal(await store.deleteBlob(acct, keptBase, none, base.etag, base), 'etagMismatch', 'a base is there');
      assert.deepEqual(await store.getBlob(acct, key('b', prefix)), { ...base, snapshot: prefix }, 'nothing moved');
      await store.deleteBlob(acct, key('b'), { base: true, snapshots: false }, fresh.etag);
      assert.equal(await store.deleteBlob(acct, keptBase, none, base.etag, base), 'ok');
      assert.deepEqual(await store.getBlob(acct, key('b')), base);
      assert.equal(await readAll(store, acct, base), 'one');
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', { ...all, deleted: true })), [`b@${stamp}`, 'b@']);
    },
  },
  {
    name: 'reclaimContent purges soft-deleted rows once expired, then their content',
    async run({ store, subject, withContainer }) {
      const acct = await withContainer();
      const block = await blockOf(store, 'gone');
      const base = blob('c', 'b', 4);
      await store.putBlob(acct, base, { kind: 'replace', blocks: [block] }, null);
      await store.deleteBlob(acct, key('b'), { base: true, snapshots: false }, base.etag, undefined, prefix);
      const other = blob('c', 'o', 3);
      await store.putBlob(acct, other, { kind: 'replace', blocks: [await blockOf(store, 'mid')] }, null);
      await store.deleteBlob(acct, key('o'), { base: true, snapshots: false }, other.etag, undefined, later);
      await reclaimAll(subject); // today: nothing has expired
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', { ...all, deleted: true })), [
        `b@${prefix}`,
        `o@${later}`,
      ]);
      assert.equal(await subject.contentExists(block.content), true);
      // Past the first expiry, before the second.
      const between = Date.parse('2027-01-08T12:00:00Z');
      for (let more = 1; more > 0;) more = await store.reclaimContent(between, 0, 1000);
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', { ...all, deleted: true })), [`o@${later}`]);
      const past = Date.parse('2027-01-09T12:00:00Z');
      for (let step = 1; step <= 4; step++) {
        const at = past + step * (subject.contentGraceMs + 1000);
        for (let more = 1; more > 0;) more = await store.reclaimContent(at, 0, 1000);
      }
      assert.equal(await subject.contentExists(block.content), false, 'its content goes after it');
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', { ...all, deleted: true })), [], 'the second too');
    },
  },
  {
    name: 'putBlob keepAs under a soft-deleted key keeps the overwritten blob, its content, unseen unless asked',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const base = blob('c', 'b', 3, 'base');
      await store.putBlob(acct, base, { kind: 'replace', blocks: [await blockOf(store, 'one')] }, null);
      const next = blob('c', 'b', 3, 'next');
      const replace = { kind: 'replace', blocks: [await blockOf(store, 'two')] } as const;
      const kept = { ...base, snapshot: prefix + stamp };
      assert.equal(await store.putBlob(acct, next, replace, base.etag, kept), 'ok');
      assert.equal(await readAll(store, acct, next), 'two');
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', all)), ['b@'], 'neither snapshot nor version');
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', { ...all, deleted: true })), [
        `b@${prefix}${stamp}`,
        'b@',
      ]);
      assert.equal(await readAll(store, acct, kept), 'one');
    },
  },
  {
    name: 'deleteBlob of a soft-deleted row without keptPrefix removes it (permanent delete); shared content stays',
    async run({ store, subject, withContainer }) {
      const acct = await withContainer();
      const { base, snapshot } = await blobWithSnapshot(store, acct);
      const none = { base: false, snapshots: false };
      await store.deleteBlob(acct, key('b', stamp), none, snapshot.etag, undefined, prefix);
      const row = key('b', prefix + stamp);
      assert.equal(await store.deleteBlob(acct, row, none, '"stale"'), 'etagMismatch');
      assert.equal(await store.deleteBlob(acct, row, none, snapshot.etag), 'ok');
      assert.equal(await store.getBlob(acct, row), undefined);
      assert.equal(await store.deleteBlob(acct, row, none, snapshot.etag), 'blobNotFound');
      assert.deepEqual(listedKeys(await store.listBlobs(acct, 'c', { ...all, deleted: true })), ['b@']);
      assert.equal(await readAll(store, acct, base), 'one', 'the blob shares the content and keeps it');
      await reclaimAll(subject);
      assert.equal(await readAll(store, acct, base), 'one');
    },
  },
  {
    name: 'soft-deleted rows are there after reopening',
    async run({ store, withContainer, reopen }) {
      const acct = await withContainer();
      const { base } = await blobWithSnapshot(store, acct);
      await store.deleteBlob(acct, key('b'), { base: true, snapshots: true }, base.etag, undefined, prefix);
      const reopened = await reopen();
      assert.deepEqual(listedKeys(await reopened.listBlobs(acct, 'c', { ...all, deleted: true })), [
        `b@${prefix}`,
        `b@${prefix}${stamp}`,
      ]);
      assert.equal(await readAll(reopened, acct, { ...base, snapshot: prefix }), 'one');
    },
  },
];
