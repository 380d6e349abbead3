// `cerulean backup -c` and `restore -c` of page blobs, run as typed against a real server on every
// engine: a 1 GiB page blob with a few written ranges comes back with its size, sequence number,
// headers, metadata, ranges and bytes, and the backup file holds only the written bytes (sparse).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describeRun, runCli } from '../helpers/cli.js';
import { makeTempDir, removeDir, serverEngines } from '../helpers/server.js';
import { startCeruleanBlob, type BlobTestEndpoint } from './blob-endpoints.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

for (const { label, options } of serverEngines) {
  describe(`cerulean backup / restore of page blobs (${label})`, () => {
    let server: BlobTestEndpoint;
    let dir: string;

    before(async () => {
      dir = makeTempDir('cerulean-page-backup-');
      server = await startCeruleanBlob({ ...options, location: join(dir, 'data') });
    });
    after(async () => {
      await server?.stop();
      if (dir) removeDir(dir);
    });

    test('a sparse page blob round-trips through the backup file, which holds only its written bytes', async () => {
      const container = server.service.getContainerClient('disks');
      await container.create();
      const disk = container.getPageBlobClient('disk.vhd');
      await disk.create(GiB, {
        blobSequenceNumber: 42,
        blobHTTPHeaders: { blobContentType: 'application/x-vhd' },
        metadata: { os: 'linux' },
      });
      // Three runs: one page, 5 MiB (more than one Put Page) and one at the very end of the blob.
      const writes: [number, Buffer][] = [
        [0, randomBytes(512)],
        [100 * MiB, randomBytes(5 * MiB)],
        [GiB - 4 * KiB, randomBytes(4 * KiB)],
      ];
      for (const [offset, bytes] of writes) {
        for (let at = 0; at < bytes.length; at += 4 * MiB) {
          const piece = bytes.subarray(at, at + 4 * MiB);
          await disk.uploadPages(piece, offset + at, piece.length);
        }
      }
      await container.getBlockBlobClient('notes.txt').upload('hello', 5);
      const written = writes.reduce((sum, [, bytes]) => sum + bytes.length, 0);
      const rangesOf = async () => {
        const ranges = [];
        for await (const range of disk.listPageRanges()) ranges.push([range.start, range.end]);
        return ranges;
      };
      const rangesBefore = await rangesOf();

      const account = server.accountConnectionString!;
      const file = join(dir, 'pages.backup');
      const backup = await runCli(['backup', file, '-c', account]);
      assert.equal(backup.code, 0, describeRun(backup));
      assert.match(backup.stderr, /1 containers \(2 blobs, [\d,]+ bytes\)/);
      assert.doesNotMatch(backup.stderr, /skipped/);
      const fileBytes = statSync(file).size;
      assert.ok(fileBytes > written && fileBytes < written + 64 * KiB, `the backup file has ${fileBytes} bytes`);

      await container.delete();
      // A deleted container's name may be taken again only once it is gone: wait for it.
      for (let tries = 0; tries < 50 && (await container.exists()); tries++)
        await new Promise((r) => setTimeout(r, 100));
      const restore = await runCli(['restore', file, '-c', account]);
      assert.equal(restore.code, 0, describeRun(restore));

      const props = await disk.getProperties();
      assert.equal(props.blobType, 'PageBlob');
      assert.equal(props.contentLength, GiB);
      assert.equal(props.blobSequenceNumber, 42);
      assert.equal(props.contentType, 'application/x-vhd');
      assert.deepEqual(props.metadata, { os: 'linux' });
      assert.deepEqual(await rangesOf(), rangesBefore);
      for (const [offset, bytes] of writes) {
        assert.deepEqual(await disk.downloadToBuffer(offset, bytes.length), bytes);
      }
      assert.deepEqual(await disk.downloadToBuffer(512, 4 * KiB), Buffer.alloc(4 * KiB));
      assert.equal((await container.getBlobClient('notes.txt').downloadToBuffer()).toString(), 'hello');
    });
  });
}
