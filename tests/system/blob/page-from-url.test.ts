// Put Page From URL (https://learn.microsoft.com/rest/api/storageservices/put-page-from-url) against
// a real server on every engine: through the JS SDK's PageBlobClient.uploadPagesFromURL (a block
// blob source, a page blob source with zeros between its pages, a source in another account read
// through a SAS, x-ms-source-content-md5, source and sequence conditions) and raw HTTP (the
// request's own refusals: lengths that differ, clear, no x-ms-source-range, a body, a missing source).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import {
  BlobSASPermissions,
  BlobServiceClient,
  generateBlobSASQueryParameters,
  StorageSharedKeyCredential,
  type ContainerClient,
} from '@azure/storage-blob';
import { blobSend } from '../../helpers/blob.js';
import {
  devAccount,
  devKey,
  makeTempDir,
  removeDir,
  serverEngines,
  startServer,
  type RunningServer,
} from '../../helpers/server.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const otherAccount = 'otherpages';
const otherKey = Buffer.from('another account key of 32 bytes!').toString('base64');

for (const { label, options } of serverEngines) {
  describe(`Put Page From URL (${label})`, () => {
    let dir: string;
    let server: RunningServer;
    let container: ContainerClient;
    let otherContainer: ContainerClient;
    const data = randomBytes(8 * KiB);

    before(async () => {
      dir = makeTempDir('cerulean-page-from-url-');
      server = await startServer({
        ...options,
        location: dir,
        env: { AZURITE_ACCOUNTS: `${otherAccount}:${otherKey}` },
      });
      const endpoint = (account: string) => server.blobUrl!.replace(`/${devAccount}`, `/${account}`);
      const retry = { retryOptions: { maxTries: 1 } };
      const own = new BlobServiceClient(
        endpoint(devAccount),
        new StorageSharedKeyCredential(devAccount, devKey),
        retry,
      );
      const other = new BlobServiceClient(
        endpoint(otherAccount),
        new StorageSharedKeyCredential(otherAccount, otherKey),
        retry,
      );
      container = own.getContainerClient('pages');
      await container.create();
      await container.getBlockBlobClient('block-source').upload(data, data.length);
      otherContainer = other.getContainerClient('elsewhere');
      await otherContainer.create();
      await otherContainer.getBlockBlobClient('source').upload(data, data.length);
    });
    after(async () => {
      await server?.stop();
      removeDir(dir);
    });

    const newPageBlob = async (name: string, sizeBytes = 16 * KiB) => {
      const blob = container.getPageBlobClient(name);
      await blob.create(sizeBytes);
      return blob;
    };

    test('pages from a block blob: the range of the source at the range of the blob, Content-MD5 answered', async () => {
      const blob = await newPageBlob('from-block');
      const source = container.getBlobClient('block-source').url;
      const put = await blob.uploadPagesFromURL(source, 2 * KiB, 4 * KiB, 2 * KiB);
      assert.deepEqual(
        Buffer.from(put.contentMD5!),
        createHash('md5')
          .update(data.subarray(2 * KiB, 4 * KiB))
          .digest(),
      );
      assert.equal(put.blobSequenceNumber, 0);
      const expected = Buffer.alloc(16 * KiB);
      data.copy(expected, 4 * KiB, 2 * KiB, 4 * KiB);
      assert.deepEqual(await blob.downloadToBuffer(), expected);
      // The SDK's count is End - Start: [offset, offset + count] are the first and last bytes.
      const listed = (await blob.getPageRanges()).pageRange?.map((r) => [r.offset, r.offset + r.count!]);
      assert.deepEqual(listed, [[4 * KiB, 6 * KiB - 1]]);
    });

    test('pages from a page blob read as Get Blob reads it: zeros where the source has no pages', async () => {
      const source = await newPageBlob('page-source', 4 * KiB);
      await source.uploadPages(data.subarray(0, KiB), KiB, KiB);
      const blob = await newPageBlob('from-pages');
      await blob.uploadPages(Buffer.alloc(4 * KiB, 0xff), 0, 4 * KiB);
      await blob.uploadPagesFromURL(source.url, 0, 0, 4 * KiB);
      const expected = Buffer.alloc(16 * KiB);
      data.copy(expected, KiB, 0, KiB);
      assert.deepEqual(await blob.downloadToBuffer(), expected);
    });

    test('a source in another account through a SAS; 4 MiB at once', async () => {
      const big = otherContainer.getBlockBlobClient('big');
      const bigData = randomBytes(4 * MiB);
      await big.upload(bigData, bigData.length);
      const sasUrl = (name: string) =>
        `${otherContainer.getBlobClient(name).url}?${generateBlobSASQueryParameters(
          {
            containerName: otherContainer.containerName,
            blobName: name,
            permissions: BlobSASPermissions.parse('r'),
            expiresOn: new Date(Date.now() + 3600_000),
          },
          new StorageSharedKeyCredential(otherAccount, otherKey),
        ).toString()}`;
      const blob = await newPageBlob('from-other-account', 8 * MiB);
      await blob.uploadPagesFromURL(sasUrl('big'), 0, 4 * MiB, 4 * MiB);
      assert.deepEqual(await blob.downloadToBuffer(4 * MiB, 4 * MiB), bigData);
      // Without the SAS the other account's private blob is not readable: CannotVerifyCopySource.
      await assert.rejects(blob.uploadPagesFromURL(otherContainer.getBlobClient('source').url, 0, 0, KiB), {
        statusCode: 404,
        code: 'CannotVerifyCopySource',
      });
    });

    test('x-ms-source-content-md5, the source conditions and the sequence number conditions are checked', async () => {
      const blob = await newPageBlob('checked');
      const source = container.getBlobClient('block-source');
      const md5 = createHash('md5').update(data.subarray(0, KiB)).digest();
      await blob.uploadPagesFromURL(source.url, 0, 0, KiB, { sourceContentMD5: md5 });
      const wrong = createHash('md5').update('other').digest();
      await assert.rejects(blob.uploadPagesFromURL(source.url, 0, KiB, KiB, { sourceContentMD5: wrong }), {
        statusCode: 400,
        code: 'Md5Mismatch',
      });
      await assert.rejects(
        blob.uploadPagesFromURL(source.url, 0, KiB, KiB, { sourceConditions: { ifMatch: '"0x1"' } }),
        { statusCode: 412, code: 'SourceConditionNotMet' },
      );
      await assert.rejects(
        blob.uploadPagesFromURL(source.url, 0, KiB, KiB, { conditions: { ifSequenceNumberEqualTo: 3 } }),
        { statusCode: 412, code: 'SequenceNumberConditionNotMet' },
      );
      const listed = (await blob.getPageRanges()).pageRange?.map((r) => [r.offset, r.offset + r.count!]);
      assert.deepEqual(listed, [[0, KiB - 1]]);
    });

    test('raw HTTP: the refusals of the request itself', async () => {
      await newPageBlob('raw');
      const sourceUrl = container.getBlobClient('block-source').url;
      const put = (headers: Record<string, string>, body?: string) =>
        blobSend(server, {
          method: 'PUT',
          target: 'pages/raw?comp=page',
          // A header given as '' is left out.
          headers: Object.fromEntries(
            Object.entries({
              'x-ms-copy-source': sourceUrl,
              'x-ms-page-write': 'update',
              'x-ms-range': 'bytes=0-1023',
              'x-ms-source-range': 'bytes=0-1023',
              ...headers,
            }).filter(([, value]) => value !== ''),
          ),
          ...(body !== undefined && { body }),
        });
      const code = (response: { headers: Record<string, string | string[] | undefined> }) =>
        response.headers['x-ms-error-code'];
      const ok = await put({});
      assert.equal(ok.status, 201);
      assert.ok(ok.headers['content-md5']);
      const shorter = await put({ 'x-ms-source-range': 'bytes=0-511' });
      assert.deepEqual([shorter.status, code(shorter)], [400, 'InvalidHeaderValue']);
      const pastSource = await put({ 'x-ms-source-range': 'bytes=7680-8703' });
      assert.deepEqual([pastSource.status, code(pastSource)], [400, 'InvalidHeaderValue']);
      const clear = await put({ 'x-ms-page-write': 'clear' });
      assert.deepEqual([clear.status, code(clear)], [400, 'InvalidHeaderValue']);
      const noSourceRange = await put({ 'x-ms-source-range': '' });
      assert.deepEqual([noSourceRange.status, code(noSourceRange)], [400, 'MissingRequiredHeader']);
      const misaligned = await put({ 'x-ms-range': 'bytes=0-999', 'x-ms-source-range': 'bytes=0-999' });
      assert.deepEqual([misaligned.status, code(misaligned)], [416, 'InvalidPageRange']);
      const withBody = await put({}, 'x'.repeat(1024));
      assert.deepEqual([withBody.status, code(withBody)], [400, 'InvalidHeaderValue']);
      const missing = await put({ 'x-ms-copy-source': sourceUrl.replace('block-source', 'missing') });
      assert.deepEqual([missing.status, code(missing)], [404, 'CannotVerifyCopySource']);
    });
  });
}
