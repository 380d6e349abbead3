// Blocks: staged under a name (blob or not), replaced by id, in staging order; a 'replace' commit
// and a delete of the base blob drop the name's staged blocks; committed blocks in order.
import assert from 'node:assert/strict';
import type { BlobCase } from '../suite.js';
import { asStored, blob, blockOf, readAll } from '../support.js';

const key = (name: string, snapshot = '') => ({ container: 'c', name, snapshot });
const ids = (blocks: readonly { readonly blockId: string }[]) => blocks.map((each) => each.blockId);

export const blockCases: readonly BlobCase[] = [
  {
    name: 'stageBlock stages under a name, replaces a block of the same id, keeps staging order',
    async run({ store, account, withContainer }) {
      const acct = await withContainer();
      assert.equal(await store.stageBlock(account(), 'c', 'b', await blockOf(store, 'x', 'AA')), 'containerNotFound');
      const first = await blockOf(store, 'one', 'AA');
      assert.equal(await store.stageBlock(acct, 'c', 'b', first), 'ok');
      assert.equal(await store.stageBlock(acct, 'c', 'b', await blockOf(store, 'two', 'AB')), 'ok');
      const again = await blockOf(store, 'three', 'AA');
      assert.equal(await store.stageBlock(acct, 'c', 'b', again), 'ok');
      const { committed, staged } = await store.getBlocks(acct, key('b'));
      assert.deepEqual(committed, []);
      assert.deepEqual(ids(staged), ['AB', 'AA']);
      assert.deepEqual(staged[1], asStored([again])[0], 'the later block of an id replaces the earlier');
      assert.equal(await store.getBlob(acct, key('b')), undefined, 'staging makes no blob');
      assert.deepEqual((await store.getBlocks(acct, key('other'))).staged, []);
    },
  },
  {
    name: 'blockSummary counts the staged blocks, finds an id, and samples a staged id (never a committed one)',
    async run({ store, account, withContainer }) {
      const none = { stagedCount: 0, stagedHasId: false, sampleBlockId: undefined };
      assert.deepEqual(await store.blockSummary(account(), 'c', 'b', 'AA'), none, 'no container');
      const acct = await withContainer();
      assert.deepEqual(await store.blockSummary(acct, 'c', 'b', 'AA'), none);
      const a = await blockOf(store, 'aaa', 'QUE=');
      await store.putBlob(acct, blob('c', 'b', 3), { kind: 'replace', blocks: [a] }, null);
      assert.deepEqual(await store.blockSummary(acct, 'c', 'b', 'AA'), none, 'committed blocks are not sampled');
      await store.stageBlock(acct, 'c', 'b', await blockOf(store, 'x', 'QkI='));
      await store.stageBlock(acct, 'c', 'b', await blockOf(store, 'y', 'Q0M='));
      await store.stageBlock(acct, 'c', 'b', await blockOf(store, 'z', 'QkI='));
      const summary = await store.blockSummary(acct, 'c', 'b', 'Q0M=');
      assert.equal(summary.stagedCount, 2);
      assert.equal(summary.stagedHasId, true);
      assert.ok(summary.sampleBlockId === 'QkI=' || summary.sampleBlockId === 'Q0M=', summary.sampleBlockId);
      assert.equal((await store.blockSummary(acct, 'c', 'b', 'RUU=')).stagedHasId, false);
      assert.equal((await store.blockSummary(acct, 'c', 'other', 'QkI=')).stagedCount, 0, 'per name');
    },
  },
  {
    name: "a 'replace' commit sets the committed list in order and drops the name's staged blocks",
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const a = await blockOf(store, 'aaa', 'QQ==');
      const b = await blockOf(store, 'bb', 'Qg==');
      await store.stageBlock(acct, 'c', 'b', a);
      await store.stageBlock(acct, 'c', 'b', b);
      await store.stageBlock(acct, 'c', 'other', await blockOf(store, 'o', 'QQ=='));
      const record = blob('c', 'b', 10);
      assert.equal(
        await store.putBlob(acct, record, { kind: 'replace', blocks: [b, a, b, { ...a, blockId: 'Qw==' }] }, null),
        'ok',
      );
      const { committed, staged } = await store.getBlocks(acct, key('b'));
      assert.deepEqual(ids(committed), ['Qg==', 'QQ==', 'Qg==', 'Qw==']);
      assert.deepEqual(staged, []);
      assert.equal(await readAll(store, acct, record), 'bbaaabbaaa');
      assert.deepEqual(ids((await store.getBlocks(acct, key('other'))).staged), ['QQ=='], 'other names keep theirs');
      // A commit that fails its condition drops nothing.
      await store.stageBlock(acct, 'c', 'b', a);
      assert.equal(
        await store.putBlob(acct, blob('c', 'b', 3), { kind: 'replace', blocks: [a] }, '"x"'),
        'etagMismatch',
      );
      assert.deepEqual(ids((await store.getBlocks(acct, key('b'))).staged), ['QQ==']);
    },
  },
  {
    name: 'deleting the base blob drops its staged blocks; a snapshot lists no staged blocks',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const record = blob('c', 'b', 1);
      await store.putBlob(acct, record, { kind: 'replace', blocks: [await blockOf(store, 'x', 'QQ==')] }, null);
      await store.snapshotBlob(acct, { ...record, snapshot: 's', etag: '"s"' }, record.etag);
      await store.stageBlock(acct, 'c', 'b', await blockOf(store, 'y', 'Qg=='));
      assert.deepEqual(ids((await store.getBlocks(acct, key('b', 's'))).staged), []);
      assert.deepEqual(ids((await store.getBlocks(acct, key('b', 's'))).committed), ['QQ==']);
      assert.equal(await store.deleteBlob(acct, key('b'), { base: true, snapshots: true }, record.etag), 'ok');
      assert.deepEqual(await store.getBlocks(acct, key('b')), { committed: [], staged: [] });
    },
  },
  {
    name: 'deleting a name with only staged blocks (no record, ifEtag null) drops them; none is blobNotFound',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const base = { base: true, snapshots: false };
      assert.equal(await store.deleteBlob(acct, key('b'), base, null), 'blobNotFound', 'nothing staged');
      await store.stageBlock(acct, 'c', 'b', await blockOf(store, 'y', 'Qg=='));
      await store.stageBlock(acct, 'c', 'other', await blockOf(store, 'z', 'Qg=='));
      assert.equal(await store.deleteBlob(acct, key('b'), base, 'x'), 'blobNotFound', 'an ETag names a record');
      assert.equal(await store.deleteBlob(acct, key('b'), base, null), 'ok');
      assert.deepEqual(await store.getBlocks(acct, key('b')), { committed: [], staged: [] });
      assert.deepEqual(ids((await store.getBlocks(acct, key('other'))).staged), ['Qg=='], 'per name');
      assert.equal(await store.deleteBlob(acct, key('b'), base, null), 'blobNotFound', 'gone');
      const record = blob('c', 'other', 1);
      await store.putBlob(acct, record, { kind: 'replace', blocks: [await blockOf(store, 'x', 'QQ==')] }, null);
      assert.equal(await store.deleteBlob(acct, key('other'), base, null), 'etagMismatch', 'a record exists');
    },
  },
  {
    name: 'an append blob of many blocks reads any range across block boundaries',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      let record = blob('c', 'log', 0);
      await store.putBlob(acct, record, { kind: 'replace', blocks: [] }, null);
      let text = '';
      for (let i = 0; i < 300; i++) {
        const piece = `${i},`;
        text += piece;
        const next = blob('c', 'log', text.length);
        assert.equal(
          await store.putBlob(acct, next, { kind: 'append', block: await blockOf(store, piece) }, record.etag),
          'ok',
        );
        record = next;
      }
      assert.equal((await store.getBlocks(acct, key('log'))).committed.length, 300);
      assert.equal(await readAll(store, acct, record), text);
      for (const [start, end] of [
        [0, 1],
        [1, 2],
        [9, 14],
        [500, 900],
        [text.length - 3, text.length + 10],
        [7, 7],
      ])
        assert.equal(await readAll(store, acct, record, start!, end!), text.slice(start, end), `[${start}, ${end})`);
    },
  },
];
