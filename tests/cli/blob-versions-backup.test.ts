// `cerulean backup -c --versions` and `restore`, run as typed against Cerulean server processes with
// --blob-versioning on each engine: each blob's previous versions come back in order, the current
// one last (under new version ids), with the index tags each version had, and a blob deleted at the
// source is deleted again, its versions kept.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { BlobServiceClient } from '@azure/storage-blob';
import { describeRun, runCli } from '../helpers/cli.js';
import { makeTempDir, removeDir, serverEngines } from '../helpers/server.js';
import { startCeruleanBlob, type BlobTestEndpoint } from './blob-endpoints.js';

const container = 'history';

/** Per name, in listing order: each version's content, metadata and tags, and whether it is the current one. */
async function historyOf(service: BlobServiceClient): Promise<unknown[]> {
  const client = service.getContainerClient(container);
  const found: unknown[] = [];
  for await (const item of client.listBlobsFlat({ includeVersions: true, includeMetadata: true })) {
    const blob = client.getBlobClient(item.name);
    const read = item.isCurrentVersion === true ? blob : blob.withVersion(item.versionId!);
    const content = (await read.downloadToBuffer()).toString();
    found.push({
      name: item.name,
      type: item.properties.blobType,
      content,
      metadata: item.metadata,
      tags: (await read.getTags()).tags,
      current: item.isCurrentVersion === true,
    });
  }
  return found;
}

for (const { label, options } of serverEngines) {
  describe(`cerulean backup --versions (Cerulean on ${label}, --blob-versioning)`, () => {
    let origin: BlobTestEndpoint;
    let other: BlobTestEndpoint;
    let dir: string;

    before(async () => {
      dir = makeTempDir('cerulean-blob-versions-');
      const versioned = { ...options, args: [...(options.args ?? []), '--blob-versioning'] };
      [origin, other] = await Promise.all([startCeruleanBlob(versioned), startCeruleanBlob(versioned)]);
      const client = origin.service.getContainerClient(container);
      await client.create();
      const doc = client.getBlockBlobClient('doc.txt');
      for (const [n, text] of ['first', 'second', 'third'].entries())
        await doc.upload(text, text.length, { metadata: { edit: String(n) }, tags: { edit: `v${n}` } });
      const gone = client.getBlockBlobClient('gone.txt');
      for (const text of ['old', 'older still']) await gone.upload(text, text.length);
      await gone.delete();
      const log = client.getAppendBlobClient('log');
      await log.create();
      await log.appendBlock('a\n', 2);
      await client.getBlockBlobClient('single').upload('one', 3);
    });
    after(async () => {
      await Promise.allSettled([origin?.stop(), other?.stop()]);
      if (dir) removeDir(dir);
    });

    test('previous versions restored in order, the current one last; a deleted blob stays deleted', async () => {
      const expected = await historyOf(origin.service);
      assert.equal(expected.length, 7, JSON.stringify(expected));
      const file = join(dir, 'versions.backup');
      const backup = await runCli([
        'backup',
        file,
        '-c',
        origin.connectionString,
        '--container',
        container,
        '--versions',
      ]);
      assert.equal(backup.code, 0, describeRun(backup));
      assert.match(backup.stderr, /1 containers \(3 blobs, 4 previous versions, [\d,]+ bytes\) written to /);
      const restore = await runCli(['restore', file, '-c', other.connectionString]);
      assert.equal(restore.code, 0, describeRun(restore));
      assert.match(restore.stderr, /1 containers \(3 blobs, 4 previous versions, [\d,]+ bytes\) restored /);
      assert.deepEqual(await historyOf(other.service), expected);
      await other.service.getContainerClient(container).delete();

      const plain = join(dir, 'plain.backup');
      const current = await runCli(['backup', plain, '-c', origin.connectionString, '--container', container]);
      assert.equal(current.code, 0, describeRun(current));
      assert.match(current.stderr, /1 containers \(3 blobs, [\d,]+ bytes\) written to /);
    });
  });
}
