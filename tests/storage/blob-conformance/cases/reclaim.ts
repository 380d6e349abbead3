// reclaimContent: content no row references goes after the grace (dereferenced by a replace, a
// delete, a dropped staged block, or never referenced at all); referenced content never goes;
// staged blocks go once staged before stagedBeforeMs.
import assert from 'node:assert/strict';
import type { BlobCase } from '../suite.js';
import { blob, blockOf, now, readAll, reclaimAll, write } from '../support.js';

const key = (name: string, snapshot = '') => ({ container: 'c', name, snapshot });

export const reclaimCases: readonly BlobCase[] = [
  {
    name: 'reclaimContent removes content never referenced, only after the grace',
    async run({ store, subject }) {
      const orphan = await write(store, 'nobody names me');
      assert.equal((await store.reclaimContent(now(), 0, 1000)) >= 0, true);
      // Content that came back unwritten (ContentRef.unwritten) is written only by a write naming it.
      const written = orphan.unwritten === undefined;
      assert.equal(await subject.contentExists(orphan), written, 'within the grace it stays, if it was written');
      await reclaimAll(subject);
      assert.equal(await subject.contentExists(orphan), false);
    },
  },
  {
    name: 'reclaimContent removes replaced, deleted and dropped content, never referenced content',
    async run({ store, subject, withContainer }) {
      const acct = await withContainer();
      const old = await blockOf(store, 'old');
      const kept = await blockOf(store, 'kept', 'QQ==');
      const record = blob('c', 'b', 3);
      await store.putBlob(acct, record, { kind: 'replace', blocks: [old] }, null);
      const snapshotted = blob('c', 's', 4);
      await store.putBlob(acct, snapshotted, { kind: 'replace', blocks: [kept] }, null);
      await store.snapshotBlob(acct, { ...snapshotted, snapshot: 'snap', etag: '"snap"' }, snapshotted.etag);
      await store.deleteBlob(acct, key('s'), { base: true, snapshots: false }, undefined);
      const stagedThenReplaced = await blockOf(store, 'staged', 'Qg==');
      await store.stageBlock(acct, 'c', 'x', stagedThenReplaced);
      const staged = await blockOf(store, 'staged again', 'Qg==');
      await store.stageBlock(acct, 'c', 'x', staged);
      const next = blob('c', 'b', 3);
      const fresh = await blockOf(store, 'new');
      await store.putBlob(acct, next, { kind: 'replace', blocks: [fresh] }, record.etag);
      await reclaimAll(subject);
      assert.equal(await subject.contentExists(old.content), false, 'replaced');
      assert.equal(await subject.contentExists(stagedThenReplaced.content), false, 'a staged block replaced by id');
      assert.equal(await subject.contentExists(kept.content), true, 'a snapshot still names it');
      assert.equal(await subject.contentExists(staged.content), true, 'still staged');
      assert.equal(await subject.contentExists(fresh.content), true);
      assert.equal(await readAll(store, acct, next), 'new');
      assert.equal(await readAll(store, acct, { ...snapshotted, snapshot: 'snap', etag: '"snap"' }), 'kept');
      assert.equal(await store.deleteContainer(acct, 'c', undefined), 'ok');
      await reclaimAll(subject);
      for (const each of [kept, staged, fresh]) assert.equal(await subject.contentExists(each.content), false);
    },
  },
  {
    name: "content is shared across accounts: another account's copy keeps it past the source's deletion",
    async run({ store, subject, withContainer }) {
      // Copy Blob and Put Blob From URL from another account of the server share the source's content.
      const source = await withContainer();
      const target = await withContainer();
      assert.notEqual(source, target);
      const shared = await blockOf(store, 'shared bytes');
      const original = blob('c', 'src', 12);
      await store.putBlob(source, original, { kind: 'replace', blocks: [shared] }, null);
      const committed = (await store.getBlocks(source, key('src'))).committed;
      const copy = blob('c', 'copy', 12);
      await store.putBlob(target, copy, { kind: 'replace', blocks: committed }, null);
      assert.equal(await store.deleteContainer(source, 'c', undefined), 'ok');
      await reclaimAll(subject);
      assert.equal(await subject.contentExists(shared.content), true, 'the copy in the other account names it');
      assert.equal(await readAll(store, target, copy), 'shared bytes');
      assert.equal(await store.deleteBlob(target, key('copy'), { base: true, snapshots: true }, undefined), 'ok');
      await reclaimAll(subject);
      assert.equal(await subject.contentExists(shared.content), false);
    },
  },
  {
    name: 'staged blocks go once staged before stagedBeforeMs, then their content',
    async run({ store, subject, withContainer }) {
      const acct = await withContainer();
      const staged = await blockOf(store, 'staged', 'QQ==');
      await store.stageBlock(acct, 'c', 'b', staged);
      const stagedAt = now();
      await reclaimAll(subject, 0);
      assert.equal((await store.getBlocks(acct, key('b'))).staged.length, 1, 'not staged before 0');
      assert.equal(await subject.contentExists(staged.content), true);
      // Staged before a moment well after the staging (and after the calls above, which engines may note it by).
      const later = stagedAt + 100 * (subject.contentGraceMs + 1000);
      assert.ok((await store.reclaimContent(later, later, 1000)) >= 1);
      assert.deepEqual((await store.getBlocks(acct, key('b'))).staged, []);
      for (let step = 1; step <= 4; step++)
        await store.reclaimContent(later + step * (subject.contentGraceMs + 1000), 0, 1000);
      assert.equal(await subject.contentExists(staged.content), false);
    },
  },
  {
    name: 'reclaimContent removes at most limit pieces a call',
    async run({ store, subject }) {
      for (let i = 0; i < 5; i++) await write(store, `orphan ${i}`);
      const at = now() + 10 * (subject.contentGraceMs + 1000);
      let calls = 0;
      for (let step = 0; step < 4; step++) {
        for (let removed = 1; removed > 0; calls++) {
          removed = await store.reclaimContent(at + step * (subject.contentGraceMs + 1000), 0, 2);
          assert.ok(removed <= 2, `removed ${removed} with a limit of 2`);
        }
      }
      assert.ok(calls >= 3);
    },
  },
];
