// Blob index tags (blob-store.ts, "Blob index tags"): written with the record, replaced or kept as
// indexTags says, dropped with the base blob and with a deleted container, never for snapshots;
// findBlobsByTags' bounds, order, container scope, paging and account isolation; across reopen.
import assert from 'node:assert/strict';
import type { BlobStore, IndexTags, TagQuery } from '../../../../src/storage/blob-store.js';
import type { BlobCase } from '../suite.js';
import { blob, blockOf, snapshotOf } from '../support.js';

async function putTagged(store: BlobStore, acct: string, container: string, name: string, tags?: IndexTags) {
  const record = { ...blob(container, name, 1), indexTags: tags };
  assert.equal(
    await store.putBlob(acct, record, { kind: 'replace', blocks: [await blockOf(store, 'x')] }, undefined),
    'ok',
  );
  return record;
}

const query = (key: string, value: string, more: Partial<TagQuery> = {}): TagQuery => ({
  container: undefined,
  key,
  lower: { value, inclusive: true },
  upper: { value, inclusive: true },
  after: undefined,
  limit: 100,
  ...more,
});

const names = (found: readonly { container: string; name: string }[]) => found.map((f) => `${f.container}/${f.name}`);

export const tagCases: readonly BlobCase[] = [
  {
    name: 'findBlobsByTags finds base blobs by one tag, with all their tags, in (value, container, name) order',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      assert.ok(await store.createContainer(acct, { name: 'd', etag: '"d0"', lastModifiedMs: 0, state: '' }));
      await putTagged(store, acct, 'd', 'b', [
        ['k', 'v'],
        ['n', '2'],
      ]);
      await putTagged(store, acct, 'c', 'b', [
        ['k', 'v'],
        ['n', '1'],
      ]);
      await putTagged(store, acct, 'c', 'a', [['k', 'w']]);
      await putTagged(store, acct, 'c', 'untagged');
      const found = await store.findBlobsByTags(acct, query('k', 'v'));
      assert.deepEqual(names(found), ['c/b', 'd/b']);
      assert.deepEqual(found[0]!.tags.map(([k, v]) => `${k}=${v}`).sort(), ['k=v', 'n=1']);
      assert.equal(found[0]!.value, 'v');
      assert.deepEqual(names(await store.findBlobsByTags(acct, query('k', 'v', { container: 'd' }))), ['d/b']);
      const ranged = query('k', '', { lower: { value: 'v', inclusive: false }, upper: undefined });
      assert.deepEqual(names(await store.findBlobsByTags(acct, ranged)), ['c/a']);
      const all = query('k', '', { lower: undefined, upper: undefined });
      assert.deepEqual(names(await store.findBlobsByTags(acct, all)), ['c/b', 'd/b', 'c/a']);
      const paged = await store.findBlobsByTags(acct, {
        ...all,
        limit: 1,
        after: { value: 'v', container: 'c', name: 'b' },
      });
      assert.deepEqual(names(paged), ['d/b']);
      assert.deepEqual(await store.findBlobsByTags(acct, { ...all, limit: 0 }), []);
      // Paging one value: by (container, name) within it, in the account or one container.
      const after = (container: string, name: string, value = 'v') => ({ after: { value, container, name } });
      assert.deepEqual(names(await store.findBlobsByTags(acct, query('k', 'v', after('c', 'b')))), ['d/b']);
      assert.deepEqual(names(await store.findBlobsByTags(acct, query('k', 'v', after('c', 'a', 'u')))), ['c/b', 'd/b']);
      assert.deepEqual(await store.findBlobsByTags(acct, query('k', 'v', after('c', 'b', 'w'))), []);
      assert.deepEqual(await store.findBlobsByTags(acct, query('k', 'v', { container: 'c', ...after('c', 'b') })), []);
      assert.deepEqual(
        names(await store.findBlobsByTags(acct, query('k', 'v', { container: 'd', ...after('c', 'z') }))),
        ['d/b'],
      );
      assert.deepEqual(await store.findBlobsByTags(acct, query('k', 'v', { container: 'c', ...after('d', 'a') })), []);
      assert.deepEqual(await store.findBlobsByTags(`${acct}x`, all), [], 'another account sees none');
    },
  },
  {
    name: 'indexTags replaces the tags; undefined keeps them; deleting the base blob drops them; snapshots are not indexed',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const record = await putTagged(store, acct, 'c', 'b', [['k', 'v']]);
      const kept = { ...record, etag: '"e2"', indexTags: undefined };
      assert.equal(await store.putBlob(acct, kept, { kind: 'keep' }, record.etag), 'ok');
      assert.deepEqual(names(await store.findBlobsByTags(acct, query('k', 'v'))), ['c/b']);
      assert.equal(await store.snapshotBlob(acct, snapshotOf(kept, 's1'), kept.etag), 'ok');
      const replaced = { ...kept, etag: '"e3"', indexTags: [['k', 'u']] as IndexTags };
      assert.equal(await store.putBlob(acct, replaced, { kind: 'keep' }, kept.etag), 'ok');
      assert.deepEqual(await store.findBlobsByTags(acct, query('k', 'v')), [], 'the snapshot is not indexed');
      assert.deepEqual(names(await store.findBlobsByTags(acct, query('k', 'u'))), ['c/b']);
      const cleared = { ...replaced, etag: '"e4"', indexTags: [] };
      assert.equal(await store.putBlob(acct, cleared, { kind: 'keep' }, replaced.etag), 'ok');
      assert.deepEqual(await store.findBlobsByTags(acct, query('k', 'u')), []);
      await putTagged(store, acct, 'c', 'b', [['k', 'z']]);
      assert.equal(
        await store.deleteBlob(
          acct,
          { container: 'c', name: 'b', snapshot: 's1' },
          { base: true, snapshots: false },
          undefined,
        ),
        'ok',
      );
      assert.deepEqual(
        names(await store.findBlobsByTags(acct, query('k', 'z'))),
        ['c/b'],
        'deleting a snapshot keeps the base',
      );
      assert.equal(
        await store.deleteBlob(
          acct,
          { container: 'c', name: 'b', snapshot: '' },
          { base: true, snapshots: true },
          undefined,
        ),
        'ok',
      );
      assert.deepEqual(await store.findBlobsByTags(acct, query('k', 'z')), []);
    },
  },
  {
    name: "a deleted container's blobs are never found, before or after reclaim, and a new one of its name starts empty",
    async run({ store, withContainer }) {
      const acct = await withContainer();
      await putTagged(store, acct, 'c', 'b', [['k', 'v']]);
      assert.equal(await store.deleteContainer(acct, 'c', undefined), 'ok');
      assert.deepEqual(await store.findBlobsByTags(acct, query('k', 'v')), []);
      assert.ok(await store.createContainer(acct, { name: 'c', etag: '"c1"', lastModifiedMs: 0, state: '' }));
      assert.deepEqual(await store.findBlobsByTags(acct, query('k', 'v')), []);
      await putTagged(store, acct, 'c', 'new', [['k', 'v']]);
      while ((await store.reclaimContent(4_000_000_000_000, 0, 100)) >= 100);
      assert.deepEqual(names(await store.findBlobsByTags(acct, query('k', 'v'))), ['c/new']);
    },
  },
  {
    name: 'indexed tags survive a reopen',
    async run(context) {
      const acct = await context.withContainer();
      await putTagged(context.store, acct, 'c', 'b', [['k', 'v']]);
      let store: BlobStore;
      try {
        store = await context.reopen();
      } catch {
        return; // an engine that keeps nothing across a reopen
      }
      assert.deepEqual(names(await store.findBlobsByTags(acct, query('k', 'v'))), ['c/b']);
    },
  },
];
