// Page blobs through the official JS SDK's PageBlobClient against a real server, on every engine:
// create, uploadPages, clearPages, page ranges (whole, ranged, paged, diffs against snapshots),
// resize, sequence numbers, download (zeros where nothing was written), snapshot and copy, the
// errors Put Page answers, and sparse storage (a 1 TiB blob of a few pages takes kilobytes).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ContainerClient, PageBlobClient } from '@azure/storage-blob';
import { blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { makeTempDir, removeDir, type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

const KiB = 1024;
const TiB = 1024 ** 4;

async function statusOf(action: Promise<unknown>): Promise<[number, string | undefined]> {
  try {
    await action;
  } catch (error) {
    const { statusCode, code } = error as { statusCode: number; code?: string };
    return [statusCode, code];
  }
  return [0, undefined];
}

async function bytesOf(client: PageBlobClient, offset = 0, count?: number): Promise<Buffer> {
  return client.downloadToBuffer(offset, count);
}

/**
 * Ranges as [first, last] byte pairs, from the SDK's { offset, count } (getPageRanges: its count
 * is End - Start, one short of the length) or { start, end } (listPageRanges) forms.
 */
const ranges = (list: readonly object[] | undefined): number[][] =>
  (list ?? []).map((r) => {
    const { offset, count, start, end } = r as { offset?: number; count?: number; start?: number; end?: number };
    return offset !== undefined ? [offset, offset + count!] : [start!, end!];
  });

for (const engine of serverEngines) {
  describe(`page blobs through the JS SDK on ${engine.label}`, () => {
    let server: RunningServer;
    let container: ContainerClient;
    let location: string;
    before(async () => {
      location = makeTempDir('cerulean-pages-');
      server = await startServer({ ...engine.options, location });
      container = blobServiceClient(server).getContainerClient(uniqueContainerName('pages'));
      await container.create();
    });
    after(async () => {
      await server?.stop();
      if (location !== undefined) removeDir(location);
    });

    test('create, upload and clear pages, read zeros where nothing was written', async () => {
      const blob = container.getPageBlobClient('disk');
      await blob.create(8 * KiB, { blobSequenceNumber: 7 });
      const props = await blob.getProperties();
      assert.equal(props.blobType, 'PageBlob');
      assert.equal(props.contentLength, 8 * KiB);
      assert.equal(props.blobSequenceNumber, 7);
      assert.deepEqual(await bytesOf(blob), Buffer.alloc(8 * KiB));
      const one = randomBytes(1024);
      const put = await blob.uploadPages(one, 1024, 1024);
      assert.equal(put.blobSequenceNumber, 7);
      assert.ok(put.etag);
      const two = randomBytes(512);
      await blob.uploadPages(two, 2048, 512);
      const expected = Buffer.alloc(8 * KiB);
      one.copy(expected, 1024);
      two.copy(expected, 2048);
      assert.deepEqual(await bytesOf(blob), expected);
      assert.deepEqual(await bytesOf(blob, 1500, 1000), expected.subarray(1500, 2500));
      assert.deepEqual(ranges((await blob.getPageRanges()).pageRange), [[1024, 2559]]);
      await blob.clearPages(1536, 512);
      expected.fill(0, 1536, 2048);
      assert.deepEqual(await bytesOf(blob), expected);
      assert.deepEqual(ranges((await blob.getPageRanges()).pageRange), [
        [1024, 1535],
        [2048, 2559],
      ]);
      assert.deepEqual(ranges((await blob.getPageRanges(2048, 1024)).pageRange), [[2048, 2559]]);
      const listed = (await container.listBlobsFlat().byPage().next()).value.segment.blobItems;
      const item = listed.find((b: { name: string }) => b.name === 'disk');
      assert.equal(item.properties.blobType, 'PageBlob');
      assert.equal(item.properties.blobSequenceNumber, 7);
    });

    test('Put Page errors: alignment, bounds, blob type, sequence number conditions', async () => {
      const blob = container.getPageBlobClient('errors');
      await blob.create(4 * KiB);
      assert.deepEqual(await statusOf(blob.uploadPages(randomBytes(100), 0, 100)), [416, 'InvalidPageRange']);
      assert.deepEqual(await statusOf(blob.uploadPages(randomBytes(512), 4 * KiB, 512)), [416, 'InvalidPageRange']);
      assert.deepEqual(
        await statusOf(blob.uploadPages(randomBytes(512), 0, 512, { conditions: { ifSequenceNumberLessThan: 0 } })),
        [412, 'SequenceNumberConditionNotMet'],
      );
      await blob.uploadPages(randomBytes(512), 0, 512, { conditions: { ifSequenceNumberEqualTo: 0 } });
      const block = container.getBlockBlobClient('block');
      await block.upload('hello', 5);
      const asPage = container.getPageBlobClient('block');
      assert.deepEqual(await statusOf(asPage.uploadPages(randomBytes(512), 0, 512)), [409, 'InvalidBlobType']);
      assert.deepEqual(await statusOf(asPage.getPageRanges()), [409, 'InvalidBlobType']);
      assert.deepEqual(await statusOf(container.getPageBlobClient('none').uploadPages(randomBytes(512), 0, 512)), [
        404,
        'BlobNotFound',
      ]);
      assert.deepEqual(await statusOf(container.getPageBlobClient('odd').create(1000)), [400, 'InvalidHeaderValue']);
    });

    test('resize and sequence numbers', async () => {
      const blob = container.getPageBlobClient('resize');
      await blob.create(4 * KiB, { blobHTTPHeaders: { blobContentType: 'application/x-disk' } });
      await blob.uploadPages(randomBytes(4 * KiB), 0, 4 * KiB);
      await blob.resize(1 * KiB);
      await blob.resize(2 * KiB);
      const props = await blob.getProperties();
      assert.equal(props.contentLength, 2 * KiB);
      assert.equal(props.contentType, 'application/x-disk');
      assert.deepEqual(ranges((await blob.getPageRanges()).pageRange), [[0, 1023]]);
      assert.deepEqual((await bytesOf(blob)).subarray(1024), Buffer.alloc(1024));
      assert.equal((await blob.updateSequenceNumber('update', 10)).blobSequenceNumber, 10);
      assert.equal((await blob.updateSequenceNumber('max', 5)).blobSequenceNumber, 10);
      assert.equal((await blob.updateSequenceNumber('increment')).blobSequenceNumber, 11);
      assert.equal((await blob.getProperties()).blobSequenceNumber, 11);
    });

    test('snapshots share pages; diffs list written and cleared ranges', async () => {
      const blob = container.getPageBlobClient('snap');
      await blob.create(16 * KiB);
      const first = randomBytes(2 * KiB);
      await blob.uploadPages(first, 0, 2 * KiB);
      await blob.uploadPages(randomBytes(KiB), 8 * KiB, KiB);
      const { snapshot } = await blob.createSnapshot();
      assert.ok(snapshot);
      await blob.uploadPages(randomBytes(512), 512, 512);
      await blob.clearPages(8 * KiB, KiB);
      await blob.uploadPages(randomBytes(KiB), 12 * KiB, KiB);
      const snap = blob.withSnapshot(snapshot!);
      assert.deepEqual((await bytesOf(snap)).subarray(0, 2 * KiB), first);
      assert.deepEqual(ranges((await snap.getPageRanges()).pageRange), [
        [0, 2047],
        [8192, 9215],
      ]);
      const diff = await blob.getPageRangesDiff(0, 16 * KiB, snapshot!);
      assert.deepEqual(ranges(diff.pageRange), [
        [512, 1023],
        [12288, 13311],
      ]);
      assert.deepEqual(ranges(diff.clearRange), [[8192, 9215]]);
      const pages = [];
      for await (const page of blob.listPageRangesDiff(0, 16 * KiB, snapshot!).byPage({ maxPageSize: 1 })) {
        pages.push([ranges(page.pageRange), ranges(page.clearRange)]);
      }
      assert.equal(pages.length, 3);
    });

    test('listPageRanges pages through a fragmented blob with markers', async () => {
      const blob = container.getPageBlobClient('fragmented');
      await blob.create(1024 * KiB);
      const written: number[][] = [];
      for (let i = 0; i < 40; i++) {
        await blob.uploadPages(randomBytes(512), i * 2048, 512);
        written.push([i * 2048, i * 2048 + 511]);
      }
      const seen: number[][] = [];
      let pages = 0;
      for await (const page of blob.listPageRanges().byPage({ maxPageSize: 7 })) {
        pages++;
        seen.push(...ranges(page.pageRange));
      }
      assert.deepEqual(seen, written);
      assert.equal(pages, 6);
      const all = [];
      for await (const range of blob.listPageRanges()) all.push([range.start, range.end]);
      assert.deepEqual(all, written);
    });

    test('copy of a page blob has its pages, sequence number and size', async () => {
      const source = container.getPageBlobClient('copy-source');
      await source.create(4 * KiB, { blobSequenceNumber: 3 });
      const data = randomBytes(KiB);
      await source.uploadPages(data, KiB, KiB);
      const target = container.getPageBlobClient('copy-target');
      const poller = await target.beginCopyFromURL(source.url);
      await poller.pollUntilDone();
      const props = await target.getProperties();
      assert.equal(props.blobType, 'PageBlob');
      assert.equal(props.contentLength, 4 * KiB);
      assert.deepEqual(ranges((await target.getPageRanges()).pageRange), [[1024, 2047]]);
      assert.deepEqual((await bytesOf(target)).subarray(KiB, 2 * KiB), data);
      // The copy is its own: writes to the source do not show in it.
      await source.clearPages(0, 4 * KiB);
      assert.deepEqual((await bytesOf(target)).subarray(KiB, 2 * KiB), data);
    });

    test('Put Blob From URL of a page blob makes a block blob of its bytes, zeros between the pages', async () => {
      const source = container.getPageBlobClient('from-url-source');
      await source.create(4 * KiB);
      const data = randomBytes(KiB);
      await source.uploadPages(data, KiB, KiB);
      const target = container.getBlockBlobClient('from-url-target');
      await target.syncUploadFromURL(source.url);
      const expected = Buffer.concat([Buffer.alloc(KiB), data, Buffer.alloc(2 * KiB)]);
      assert.deepEqual(await target.downloadToBuffer(), expected);
      assert.equal((await target.getProperties()).blobType, 'BlockBlob');
    });

    test('a 1 TiB page blob with ten 4 KiB pages takes kilobytes of storage', async () => {
      const blob = container.getPageBlobClient('sparse');
      await blob.create(TiB);
      const page = randomBytes(4 * KiB);
      for (let i = 0; i < 10; i++) await blob.uploadPages(page, i * 100 * 1024 * 1024 * 1024, 4 * KiB);
      assert.equal((await blob.getPageRanges()).pageRange?.length, 10);
      const tail = await bytesOf(blob, 900 * 1024 * 1024 * 1024, 8 * KiB);
      assert.deepEqual(tail, Buffer.concat([page, Buffer.alloc(4 * KiB)]));
      if (engine.label === 'SQLite') {
        const kib = Number(execFileSync('du', ['-sk', location]).toString().split('\t')[0]);
        assert.ok(kib < 10 * 1024, `the data directory takes ${kib} KiB`);
      }
    });
  });
}
