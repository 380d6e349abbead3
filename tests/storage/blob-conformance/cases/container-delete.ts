// Delete Container of a container of any size: gone for every read and write at once, its name
// free for a new, empty container at once, its blobs and staged blocks removed later by
// reclaimContent a batch of `limit` pieces at a time (a blob, a staged block, then the emptied
// container), their content after that, and none of it ever seen by the new container.
import assert from 'node:assert/strict';
import type { Block, BlobRecord, BlobStore } from '../../../../src/storage/blob-store.js';
import type { BlobCase } from '../suite.js';
import { blob, blockOf, container, listedNames, now, readAll, reclaimAll } from '../support.js';

const all = { prefix: '', limit: 100, snapshots: true, uncommitted: true };
const key = (name: string, snapshot = '') => ({ container: 'c', name, snapshot });

interface Filled {
  readonly blobs: BlobRecord[];
  readonly blocks: Block[];
  /** Blob rows (bases and snapshots) and staged blocks: the pieces reclaim removes, less the container. */
  readonly pieces: number;
}

/** `count` blobs with content of their own in container 'c', a snapshot of the first, two staged blocks. */
async function fill(store: BlobStore, acct: string, count: number): Promise<Filled> {
  const blobs: BlobRecord[] = [];
  const blocks: Block[] = [];
  for (let i = 0; i < count; i++) {
    const block = await blockOf(store, `content of blob ${i}`);
    const record = blob('c', `b${i}`, block.content.sizeBytes);
    assert.equal(await store.putBlob(acct, record, { kind: 'replace', blocks: [block] }, null), 'ok');
    blobs.push(record);
    blocks.push(block);
  }
  assert.equal(await store.snapshotBlob(acct, { ...blobs[0]!, snapshot: 's', etag: '"s"' }, blobs[0]!.etag), 'ok');
  for (const [name, id] of [
    ['staged', 'QQ=='],
    ['b1', 'Qg=='],
  ] as const) {
    const block = await blockOf(store, `staged under ${name}`, id);
    assert.equal(await store.stageBlock(acct, 'c', name, block), 'ok');
    blocks.push(block);
  }
  return { blobs, blocks, pieces: count + 1 + 2 };
}

async function assertGone(store: BlobStore, acct: string, first: BlobRecord, block: Block): Promise<void> {
  assert.equal(await store.getContainer(acct, 'c'), undefined);
  assert.deepEqual(await store.listContainers(acct, '', undefined, 10), []);
  assert.deepEqual(listedNames(await store.listBlobs(acct, 'c', all)), []);
  assert.equal(await store.getBlob(acct, key(first.name)), undefined);
  assert.equal(await store.getBlob(acct, key(first.name, 's')), undefined);
  assert.deepEqual(await store.getBlocks(acct, key('staged')), { committed: [], staged: [] });
  assert.equal(await store.readContent(acct, key(first.name), first.etag, 0, 100), 'changed');
  const summary = await store.blockSummary(acct, 'c', 'staged', 'QQ==');
  assert.deepEqual(summary, { stagedCount: 0, stagedHasId: false, sampleBlockId: undefined });
  const next = blob('c', first.name, block.content.sizeBytes);
  assert.equal(await store.putBlob(acct, next, { kind: 'replace', blocks: [block] }, undefined), 'containerNotFound');
  assert.equal(await store.putBlob(acct, next, { kind: 'keep' }, first.etag), 'containerNotFound');
  assert.equal(await store.snapshotBlob(acct, { ...first, snapshot: 't' }, first.etag), 'containerNotFound');
  assert.equal(await store.stageBlock(acct, 'c', 'x', { ...block, blockId: 'QQ==' }), 'containerNotFound');
  const parts = { base: true, snapshots: true };
  assert.equal(await store.deleteBlob(acct, key(first.name), parts, undefined), 'containerNotFound');
  assert.equal(await store.updateContainer(acct, container('c'), undefined), 'containerNotFound');
  assert.equal(await store.deleteContainer(acct, 'c', undefined), 'containerNotFound');
}

/** reclaimContent at `atMs` with `limit` until a call removes nothing: each call's count. */
async function reclaimCounts(store: BlobStore, atMs: number, limit: number): Promise<number[]> {
  const counts: number[] = [];
  for (;;) {
    const removed = await store.reclaimContent(atMs, 0, limit);
    if (removed === 0) return counts;
    counts.push(removed);
    assert.ok(counts.length < 1000, 'reclaim comes to an end');
  }
}

export const containerDeleteCases: readonly BlobCase[] = [
  {
    name: 'a deleted container is gone at once for every read and write, before anything is reclaimed',
    async run({ store, account }) {
      const acct = account();
      await store.createContainer(acct, container('c'));
      const { blobs, blocks } = await fill(store, acct, 3);
      assert.equal(await store.deleteContainer(acct, 'c', undefined), 'ok');
      await assertGone(store, acct, blobs[0]!, blocks[0]!);
      await reclaimCounts(store, now(), 1000);
    },
  },
  {
    name: "a deleted container's rows go in batches of the limit, then its content; what others name stays",
    async run({ store, subject, account }) {
      const acct = account();
      await store.createContainer(acct, container('c'));
      const { blocks, pieces } = await fill(store, acct, 9);
      // Content a blob of another container names too.
      await store.createContainer(acct, container('other'));
      const shared = blob('other', 'keep', blocks[3]!.content.sizeBytes);
      assert.equal(await store.putBlob(acct, shared, { kind: 'replace', blocks: [blocks[3]!] }, null), 'ok');
      await reclaimCounts(store, now(), 1000); // what earlier cases left
      assert.equal(await store.deleteContainer(acct, 'c', undefined), 'ok');
      // Now: nothing else is due (everything was written within the grace), so only its rows go.
      const counts = await reclaimCounts(store, now(), 2);
      for (const count of counts) assert.ok(count <= 2, `a batch removed ${count} pieces with a limit of 2`);
      assert.equal(
        counts.reduce((sum, count) => sum + count, 0),
        pieces + 1,
        'each blob, snapshot and staged block, then the container',
      );
      assert.ok(counts.length >= Math.ceil((pieces + 1) / 2));
      await reclaimAll(subject);
      for (const [at, each] of blocks.entries())
        assert.equal(await subject.contentExists(each.content), at === 3, `content ${at}`);
      assert.equal(await readAll(store, acct, shared), 'content of blob 3');
    },
  },
  {
    name: 'a container deleted and created again at once is empty, and stays so while the old rows go',
    async run({ store, subject, account }) {
      const acct = account();
      await store.createContainer(acct, container('c'));
      const { blobs, blocks } = await fill(store, acct, 4);
      assert.equal(await store.deleteContainer(acct, 'c', undefined), 'ok');
      const again = container('c', 'again');
      assert.equal(await store.createContainer(acct, again), true, 'the name is free at once');
      assert.deepEqual(await store.getContainer(acct, 'c'), again);
      const empty = async () => {
        assert.deepEqual(listedNames(await store.listBlobs(acct, 'c', all)), ['b1']);
        assert.equal(await store.getBlob(acct, key('b0')), undefined);
        assert.deepEqual(await store.getBlocks(acct, key('staged')), { committed: [], staged: [] });
        assert.equal((await store.blockSummary(acct, 'c', 'b1', 'Qg==')).stagedHasId, false);
        assert.equal(await store.readContent(acct, key('b0'), blobs[0]!.etag, 0, 100), 'changed');
      };
      // A blob of the old one's name, with the old one's content: named here, it stays.
      const reused = blob('c', 'b1', blocks[1]!.content.sizeBytes);
      assert.equal(await store.putBlob(acct, reused, { kind: 'replace', blocks: [blocks[1]!] }, null), 'ok');
      await empty();
      await reclaimCounts(store, now(), 1);
      await empty();
      await reclaimAll(subject);
      await empty();
      for (const [at, each] of blocks.entries())
        assert.equal(await subject.contentExists(each.content), at === 1, `content ${at}`);
      assert.equal(await readAll(store, acct, reused), 'content of blob 1');
    },
  },
  {
    name: 'a deleted container stays deleted across a reopen, and its rows are reclaimed after it',
    async run({ store, subject, account, reopen }) {
      const acct = account();
      await store.createContainer(acct, container('c'));
      const { blobs, blocks, pieces } = await fill(store, acct, 3);
      await reclaimCounts(store, now(), 1000); // what earlier cases left
      assert.equal(await store.deleteContainer(acct, 'c', undefined), 'ok');
      // Some of its rows go before the reopen (as before a crash), the rest after.
      assert.equal(await store.reclaimContent(now(), 0, 2), 2);
      const reopened = await reopen();
      await assertGone(reopened, acct, blobs[0]!, blocks[0]!);
      const counts = await reclaimCounts(reopened, now(), 1);
      assert.equal(counts.length, pieces + 1 - 2);
      await reclaimAll(subject);
      for (const each of blocks) assert.equal(await subject.contentExists(each.content), false);
    },
  },
];
