// Page blobs (src/storage/page-store.ts): page changes through putBlob, zeros where nothing was
// written, extents paged with a limit, snapshots and copies that share content, reclaim of content
// no extent names, and a model-based case: random writes, clears, resizes and snapshots checked
// against an in-memory model after every step.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { BlobKey, BlobRecord, BlobStore } from '../../../../src/storage/blob-store.js';
import type { PageChange, PageExtent } from '../../../../src/storage/page-store.js';
import type { BlobCase } from '../suite.js';
import { blob, chunksOf, newEtag, reclaimAll } from '../support.js';
import { seededRandom } from '../../../query/random.js';

const key = (name: string, snapshot = ''): BlobKey => ({ container: 'c', name, snapshot });
const page = 512;

async function bytesOf(store: BlobStore, acct: string, record: BlobRecord, from = 0, to = Infinity): Promise<Buffer> {
  const chunks = await store.readContent(acct, record, record.etag, from, to);
  assert.notEqual(chunks, 'changed', `${record.name}: its ETag is current`);
  const parts: Buffer[] = [];
  for await (const chunk of chunks as AsyncIterable<Buffer>) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

async function allExtents(store: BlobStore, acct: string, record: BlobRecord, limit = 3): Promise<PageExtent[]> {
  const extents: PageExtent[] = [];
  for (let at = 0; ;) {
    const batch = await store.pageExtents(acct, record, record.etag, at, record.sizeBytes, limit);
    assert.notEqual(batch, 'changed');
    extents.push(...(batch as PageExtent[]));
    if ((batch as PageExtent[]).length < limit) return extents;
    at = extents.at(-1)!.endByteExclusive;
  }
}

/** A page blob and the changes the cases make to it, each a new version. */
class PageBlob {
  record: BlobRecord;

  constructor(
    private readonly store: BlobStore,
    private readonly acct: string,
    name: string,
    sizeBytes: number,
  ) {
    this.record = blob('c', name, sizeBytes);
  }

  async create(): Promise<void> {
    assert.equal(
      await this.store.putBlob(this.acct, this.record, { kind: 'pages', change: { kind: 'create' } }, null),
      'ok',
    );
  }

  async change(change: PageChange, sizeBytes = this.record.sizeBytes): Promise<void> {
    const next = { ...this.record, etag: newEtag(), sizeBytes };
    assert.equal(await this.store.putBlob(this.acct, next, { kind: 'pages', change }, this.record.etag), 'ok');
    this.record = next;
  }

  async write(startByte: number, bytes: Buffer): Promise<void> {
    const content = await this.store.writeContent(chunksOf(bytes, 1000));
    await this.change({ kind: 'write', startByte, content });
  }
}

export const pageCases: readonly BlobCase[] = [
  {
    name: 'pages: a new page blob reads as zeros; writes and clears show in readContent and pageExtents',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const disk = new PageBlob(store, acct, 'disk', 8 * page);
      await disk.create();
      assert.deepEqual(await bytesOf(store, acct, disk.record), Buffer.alloc(8 * page));
      assert.deepEqual(await allExtents(store, acct, disk.record), []);
      const data = randomBytes(3 * page);
      await disk.write(page, data);
      await disk.change({ kind: 'clear', range: { startByte: 2 * page, endByteExclusive: 3 * page } });
      const expected = Buffer.alloc(8 * page);
      data.copy(expected, page);
      expected.fill(0, 2 * page, 3 * page);
      assert.deepEqual(await bytesOf(store, acct, disk.record), expected);
      assert.deepEqual(
        await bytesOf(store, acct, disk.record, page + 10, 3 * page + 20),
        expected.subarray(page + 10, 3 * page + 20),
      );
      const extents = await allExtents(store, acct, disk.record);
      assert.deepEqual(
        extents.map((e) => [e.startByte, e.endByteExclusive, e.contentOffsetBytes]),
        [
          [page, 2 * page, 0],
          [3 * page, 4 * page, 2 * page],
        ],
      );
      assert.equal(await store.pageExtents(acct, key('disk'), '"stale"', 0, 8 * page, 10), 'changed');
      // Any version of any type is replaced by a create; a write to none is blobNotFound.
      const missing = { ...blob('c', 'none', page) };
      const content = await store.writeContent(chunksOf(randomBytes(page)));
      const write = { kind: 'pages', change: { kind: 'write', startByte: 0, content } } as const;
      assert.equal(await store.putBlob(acct, missing, write, undefined), 'blobNotFound');
    },
  },
  {
    name: 'pages: a resize drops pages past the new size, and a larger size reads zeros there',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const disk = new PageBlob(store, acct, 'disk', 4 * page);
      await disk.create();
      await disk.write(0, randomBytes(4 * page));
      await disk.change({ kind: 'resize' }, page + page);
      await disk.change({ kind: 'resize' }, 4 * page);
      const bytes = await bytesOf(store, acct, disk.record);
      assert.deepEqual(bytes.subarray(2 * page), Buffer.alloc(2 * page));
      assert.deepEqual(
        (await allExtents(store, acct, disk.record)).map((e) => e.endByteExclusive),
        [2 * page],
      );
    },
  },
  {
    name: 'pages: a snapshot keeps its pages while the base changes; a copy shares them; stale sources fail',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const disk = new PageBlob(store, acct, 'disk', 4 * page);
      await disk.create();
      const data = randomBytes(2 * page);
      await disk.write(0, data);
      const snapshot = { ...disk.record, snapshot: '2026-01-01T00:00:00.0000000Z', etag: newEtag() };
      assert.equal(await store.snapshotBlob(acct, snapshot, disk.record.etag), 'ok');
      await disk.write(0, randomBytes(page));
      await disk.change({ kind: 'clear', range: { startByte: page, endByteExclusive: 2 * page } });
      assert.deepEqual((await bytesOf(store, acct, snapshot)).subarray(0, 2 * page), data);
      const [shared] = await allExtents(store, acct, snapshot);
      const copy = blob('c', 'copy', 4 * page);
      const source = {
        kind: 'copy',
        sourceAccount: acct,
        source: key('disk', snapshot.snapshot),
        sourceEtag: snapshot.etag,
      } as const;
      assert.equal(await store.putBlob(acct, copy, { kind: 'pages', change: source }, null), 'ok');
      assert.deepEqual(await allExtents(store, acct, copy), [shared], 'the copy names the same content');
      const stale = { kind: 'copy', sourceAccount: acct, source: key('disk'), sourceEtag: '"stale"' } as const;
      assert.equal(
        await store.putBlob(acct, blob('c', 'x', 4 * page), { kind: 'pages', change: stale }, null),
        'etagMismatch',
      );
    },
  },
  {
    name: 'pages: content no extent names any more is reclaimed; content a snapshot still names is kept',
    async run({ store, subject, withContainer }) {
      const acct = await withContainer();
      const disk = new PageBlob(store, acct, 'disk', 4 * page);
      await disk.create();
      const first = await store.writeContent(chunksOf(randomBytes(page)));
      await disk.change({ kind: 'write', startByte: 0, content: first });
      const kept = await store.writeContent(chunksOf(randomBytes(2 * page)));
      await disk.change({ kind: 'write', startByte: page, content: kept });
      const snapshot = { ...disk.record, snapshot: '2026-01-01T00:00:00.0000000Z', etag: newEtag() };
      assert.equal(await store.snapshotBlob(acct, snapshot, disk.record.etag), 'ok');
      await disk.change({ kind: 'clear', range: { startByte: 0, endByteExclusive: 4 * page } });
      assert.equal(await store.deleteBlob(acct, snapshot, { base: false, snapshots: false }, snapshot.etag), 'ok');
      const [partly] = await allExtents(store, acct, disk.record);
      assert.equal(partly, undefined);
      await reclaimAll(subject);
      assert.equal(await subject.contentExists(first), false, 'cleared and its snapshot gone: reclaimed');
      assert.equal(await subject.contentExists(kept), false);
      const again = await store.writeContent(chunksOf(randomBytes(2 * page)));
      await disk.change({ kind: 'write', startByte: 0, content: again });
      await disk.change({ kind: 'clear', range: { startByte: 0, endByteExclusive: page } });
      await reclaimAll(subject);
      assert.equal(await subject.contentExists(again), true, 'half of it is still a page');
      assert.deepEqual((await bytesOf(store, acct, disk.record)).subarray(0, page), Buffer.alloc(page));
    },
  },
  {
    name: 'pages: a page blob replaced by a block blob has no pages left, and their content is reclaimed',
    async run({ store, subject, withContainer }) {
      const acct = await withContainer();
      const disk = new PageBlob(store, acct, 'disk', 4 * page);
      await disk.create();
      const written = await store.writeContent(chunksOf(randomBytes(page)));
      await disk.change({ kind: 'write', startByte: 0, content: written });
      const block = { blockId: '', content: await store.writeContent(chunksOf(Buffer.from('hello'))) };
      const replaced = blob('c', 'disk', 5);
      assert.equal(await store.putBlob(acct, replaced, { kind: 'replace', blocks: [block] }, disk.record.etag), 'ok');
      assert.deepEqual(await allExtents(store, acct, replaced), []);
      assert.equal((await bytesOf(store, acct, replaced)).toString(), 'hello');
      await reclaimAll(subject);
      assert.equal(await subject.contentExists(written), false, 'the pages replaced are reclaimed');
      assert.equal(await subject.contentExists(block.content), true);
    },
  },
  {
    name: 'pages: random writes, clears, resizes and snapshots match an in-memory model',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const seed = 0x5eed;
      const random = seededRandom(seed);
      const next = () => random.int(2 ** 30) / 2 ** 30;
      const pagesMax = 24;
      const disk = new PageBlob(store, acct, 'disk', 16 * page);
      await disk.create();
      let model = Buffer.alloc(16 * page);
      let written = new Array<boolean>(16).fill(false);
      const snapshots: { record: BlobRecord; bytes: Buffer; written: boolean[] }[] = [];
      for (let step = 0; step < 60; step++) {
        const pages = model.length / page;
        const first = Math.floor(next() * pages);
        const count = 1 + Math.floor(next() * Math.min(4, pages - first));
        const roll = next();
        const where = `seed ${seed}, step ${step}`;
        if (roll < 0.5) {
          const bytes = randomBytes(count * page);
          await disk.write(first * page, bytes);
          bytes.copy(model, first * page);
          written.fill(true, first, first + count);
        } else if (roll < 0.75) {
          await disk.change({
            kind: 'clear',
            range: { startByte: first * page, endByteExclusive: (first + count) * page },
          });
          model.fill(0, first * page, (first + count) * page);
          written.fill(false, first, first + count);
        } else if (roll < 0.9) {
          const size = (1 + Math.floor(next() * pagesMax)) * page;
          await disk.change({ kind: 'resize' }, size);
          const grown = Buffer.alloc(size);
          model.copy(grown, 0, 0, Math.min(size, model.length));
          model = grown;
          written = Array.from({ length: size / page }, (_, i) => written[i] ?? false);
        } else {
          const record = {
            ...disk.record,
            snapshot: `2026-01-01T00:00:${String(step).padStart(2, '0')}.0000000Z`,
            etag: newEtag(),
          };
          assert.equal(await store.snapshotBlob(acct, record, disk.record.etag), 'ok', where);
          snapshots.push({ record, bytes: Buffer.from(model), written: [...written] });
        }
        assert.deepEqual(await bytesOf(store, acct, disk.record), model, where);
        const covered = new Array<boolean>(written.length).fill(false);
        for (const e of await allExtents(store, acct, disk.record, 2))
          covered.fill(true, e.startByte / page, e.endByteExclusive / page);
        assert.deepEqual(covered, written, where);
      }
      for (const { record, bytes, written: pages } of snapshots) {
        assert.deepEqual(await bytesOf(store, acct, record), bytes, `snapshot ${record.snapshot}`);
        const covered = new Array<boolean>(pages.length).fill(false);
        for (const e of await allExtents(store, acct, record))
          covered.fill(true, e.startByte / page, e.endByteExclusive / page);
        assert.deepEqual(covered, pages, `snapshot ${record.snapshot}`);
      }
    },
  },
];
