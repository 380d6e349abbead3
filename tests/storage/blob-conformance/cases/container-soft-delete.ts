// Container soft delete (container-soft-delete.ts): deleteContainer with `keep` hides the container
// and everything in it at once, as a delete does, frees its name, and lists it among the deleted
// (listDeletedContainers) until restoreContainer brings it back whole (blobs, snapshots, tags,
// staged blocks, under the record given) or reclaimContent, once it expired, purges it and its content.
import assert from 'node:assert/strict';
import type { BlobStore, ContainerKeep, TagQuery } from '../../../../src/storage/blob-store.js';
import type { BlobCase } from '../suite.js';
import { blob, blockOf, container, listedNames, now, readAll, reclaimAll } from '../support.js';

const all = { prefix: '', limit: 100, snapshots: true, uncommitted: true };
const key = (name: string, snapshot = '') => ({ container: 'c', name, snapshot });
const keep = (deletedMs: number, expiresMs = deletedMs + 86_400_000): ContainerKeep => ({ deletedMs, expiresMs });
const tagQuery: TagQuery = {
  container: undefined,
  key: 'k',
  lower: { value: 'v', inclusive: true },
  upper: { value: 'v', inclusive: true },
  after: undefined,
  limit: 10,
};

/** Container `name` with blob 'b' (content 'kept', tag k=v), a snapshot of it and a staged block. */
async function fill(store: BlobStore, acct: string, name = 'c') {
  const record = container(name, `state of ${name}`);
  assert.equal(await store.createContainer(acct, record), true);
  const block = await blockOf(store, 'kept');
  const base = { ...blob(name, 'b', 4), indexTags: [['k', 'v']] as const };
  assert.equal(await store.putBlob(acct, base, { kind: 'replace', blocks: [block] }, null), 'ok');
  assert.equal(await store.snapshotBlob(acct, { ...blob(name, 'b', 4), snapshot: 's' }, base.etag), 'ok');
  assert.equal(await store.stageBlock(acct, name, 'staged', await blockOf(store, 'st', 'QQ==')), 'ok');
  const { indexTags: _tags, ...stored } = base;
  return { record, base: stored, block };
}

const versions = async (store: BlobStore, acct: string, prefix = '') =>
  (await store.listDeletedContainers(acct, prefix, undefined, 100)).map((each) => `${each.name}@${each.version}`);

/** The version of the account's one soft-deleted container. */
async function onlyVersion(store: BlobStore, acct: string): Promise<string> {
  const listed = await store.listDeletedContainers(acct, '', undefined, 10);
  assert.equal(listed.length, 1);
  return listed[0]!.version;
}

export const containerSoftDeleteCases: readonly BlobCase[] = [
  {
    name: 'a kept container is gone for reads and writes, listed among the deleted, its name free',
    async run({ store, account }) {
      const acct = account();
      const { record, base } = await fill(store, acct);
      assert.equal(await store.deleteContainer(acct, 'c', '"stale"', keep(1000)), 'etagMismatch');
      assert.equal(await store.deleteContainer(acct, 'c', record.etag, keep(1000, 5000)), 'ok');
      assert.equal(await store.getContainer(acct, 'c'), undefined);
      assert.deepEqual(await store.listContainers(acct, '', undefined, 10), []);
      assert.equal(await store.getBlob(acct, key('b')), undefined);
      assert.deepEqual(listedNames(await store.listBlobs(acct, 'c', all)), []);
      assert.deepEqual(await store.findBlobsByTags(acct, tagQuery), []);
      assert.equal(
        await store.putBlob(acct, blob('c', 'x', 0), { kind: 'replace', blocks: [] }, null),
        'containerNotFound',
      );
      const [deleted, ...rest] = await store.listDeletedContainers(acct, '', undefined, 10);
      assert.deepEqual(rest, []);
      assert.match(deleted!.version, /^[0-9A-F]{16}$/);
      assert.deepEqual(deleted, { ...record, version: deleted!.version, deletedMs: 1000, expiresMs: 5000 });
      assert.equal(await store.readContent(acct, key('b'), base.etag, 0, 10), 'changed');
      // A new container of the name is empty; the kept one stays listed beside it.
      assert.equal(await store.createContainer(acct, container('c')), true);
      assert.deepEqual(listedNames(await store.listBlobs(acct, 'c', all)), []);
      assert.deepEqual(await versions(store, acct), [`c@${deleted!.version}`]);
    },
  },
  {
    name: 'restoreContainer brings back blobs, snapshots, tags and staged blocks; refused while the name is taken',
    async run({ store, account }) {
      const acct = account();
      const { record, base } = await fill(store, acct);
      assert.equal(await store.deleteContainer(acct, 'c', undefined, keep(1000)), 'ok');
      const version = await onlyVersion(store, acct);
      const taken = container('c', 'taken');
      assert.equal(await store.createContainer(acct, taken), true);
      const restored = { ...record, etag: '"restored"', lastModifiedMs: 2000 };
      assert.equal(await store.restoreContainer(acct, version, restored), 'containerExists');
      assert.deepEqual(await store.getContainer(acct, 'c'), taken, 'nothing changed');
      assert.equal(await store.restoreContainer(acct, '00000000000000FF', restored), 'notFound');
      assert.equal(await store.restoreContainer(acct, 'not a version', restored), 'notFound');
      assert.equal(await store.restoreContainer(account(), version, restored), 'notFound', 'another account');
      assert.equal(await store.restoreContainer(acct, version, { ...restored, name: 'd' }), 'notFound', 'another name');
      assert.equal(await store.deleteContainer(acct, 'c', undefined), 'ok');
      assert.equal(await store.restoreContainer(acct, version, restored), 'ok');
      assert.deepEqual(await store.getContainer(acct, 'c'), restored);
      assert.deepEqual(await store.listDeletedContainers(acct, '', undefined, 10), []);
      assert.deepEqual(await store.getBlob(acct, key('b')), base);
      assert.equal(await readAll(store, acct, base), 'kept');
      assert.deepEqual(listedNames(await store.listBlobs(acct, 'c', all)), ['b@s', 'b', 'staged(uncommitted)']);
      assert.deepEqual(
        (await store.findBlobsByTags(acct, tagQuery)).map((each) => each.name),
        ['b'],
      );
      assert.equal(await store.restoreContainer(acct, version, restored), 'notFound', 'restored already');
    },
  },
  {
    name: 'listDeletedContainers orders by (name, version), from a place, within a prefix',
    async run({ store, account }) {
      const acct = account();
      for (const name of ['c', 'c', 'cd', 'e']) {
        assert.equal(await store.createContainer(acct, container(name)), true);
        assert.equal(await store.deleteContainer(acct, name, undefined, keep(1000)), 'ok');
      }
      const listed = await store.listDeletedContainers(acct, '', undefined, 100);
      assert.deepEqual(
        listed.map((each) => each.name),
        ['c', 'c', 'cd', 'e'],
      );
      assert.ok(listed[0]!.version < listed[1]!.version, 'versions of a name in order');
      const from = { name: 'c', version: listed[1]!.version };
      assert.deepEqual(
        (await store.listDeletedContainers(acct, '', from, 2)).map((each) => `${each.name}@${each.version}`),
        [`c@${listed[1]!.version}`, `cd@${listed[2]!.version}`],
      );
      assert.deepEqual((await versions(store, acct, 'c')).length, 3);
      assert.deepEqual(
        (await store.listDeletedContainers(acct, 'cd', { name: 'a', version: '' }, 10)).map((each) => each.name),
        ['cd'],
      );
      assert.deepEqual(await store.listDeletedContainers(acct, '', undefined, 0), []);
    },
  },
  {
    name: 'reclaimContent purges a kept container once it expired, then its rows and content',
    async run({ store, subject, account }) {
      const acct = account();
      const expiresMs = now() + 500;
      const { block } = await fill(store, acct);
      assert.equal(await store.deleteContainer(acct, 'c', undefined, keep(now(), expiresMs)), 'ok');
      const version = await onlyVersion(store, acct);
      for (let more = 1; more > 0;) more = await store.reclaimContent(expiresMs, 0, 1000);
      assert.deepEqual(await versions(store, acct), [`c@${version}`], 'kept until its expiry has passed');
      assert.equal(await subject.contentExists(block.content), true);
      await reclaimAll(subject);
      assert.deepEqual(await store.listDeletedContainers(acct, '', undefined, 10), []);
      assert.equal(await store.restoreContainer(acct, version, container('c')), 'notFound');
      assert.equal(await subject.contentExists(block.content), false, 'its content is reclaimed');
    },
  },
  {
    name: 'a kept container and a restore survive reopening the store',
    async run({ store, account, reopen }) {
      const acct = account();
      const { record, base } = await fill(store, acct);
      await fill(store, acct, 'd');
      assert.equal(await store.deleteContainer(acct, 'c', undefined, keep(1000)), 'ok');
      assert.equal(await store.deleteContainer(acct, 'd', undefined, keep(1000)), 'ok');
      const [c] = await store.listDeletedContainers(acct, '', undefined, 10);
      assert.equal(await store.restoreContainer(acct, c!.version, record), 'ok');
      const reopened = await reopen();
      assert.deepEqual(await reopened.getContainer(acct, 'c'), record);
      assert.equal(await readAll(reopened, acct, base), 'kept');
      assert.deepEqual(
        (await reopened.listDeletedContainers(acct, '', undefined, 10)).map((each) => each.name),
        ['d'],
      );
    },
  },
];
