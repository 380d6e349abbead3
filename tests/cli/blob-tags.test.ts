// Blob index tags through `cerulean copy --container` and `cerulean backup -c` / `restore`, run as
// typed against real server processes (Cerulean on each engine, Azurite): every blob type keeps its
// tags, --verify compares them, a second copy sets again tags changed at the destination, and a
// source that will not answer Get Blob Tags (a read-only SAS, without the tag permission `t`) is
// copied and backed up without them, said once per container.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AccountSASPermissions, AccountSASResourceTypes, type BlobServiceClient } from '@azure/storage-blob';
import { describeRun, runCli } from '../helpers/cli.js';
import { makeTempDir, removeDir, serverEngines } from '../helpers/server.js';
import { patternBytes, startAzuriteBlob, startCeruleanBlob, type BlobTestEndpoint } from './blob-endpoints.js';

const container = 'tagged';
/** Every blob type, a block blob of several blocks (Put Block List), and one blob without tags. */
const tagged: Record<string, Record<string, string>> = {
  'small.txt': { project: 'cerulean', 'stage-1': 'a b=c' },
  'large.bin': { size: 'large' },
  'events.log': { kind: 'append' },
  'disk.vhd': { kind: 'page' },
  'plain.txt': {},
};

async function seedTagged(service: BlobServiceClient): Promise<void> {
  const client = service.getContainerClient(container);
  await client.create();
  await client.getBlockBlobClient('small.txt').upload('hello', 5, { tags: tagged['small.txt'] });
  await client.getBlockBlobClient('large.bin').uploadData(patternBytes(9 * 1024 * 1024, 'tags'), {
    blockSize: 4 * 1024 * 1024,
    maxSingleShotSize: 1024 * 1024,
    tags: tagged['large.bin'],
  });
  const log = client.getAppendBlobClient('events.log');
  await log.create({ tags: tagged['events.log'] });
  await log.appendBlock('line\n', 5);
  const page = client.getPageBlobClient('disk.vhd');
  await page.create(4096, { tags: tagged['disk.vhd'] });
  await page.uploadPages(patternBytes(512, 'page'), 1024, 512);
  await client.getBlockBlobClient('plain.txt').upload('plain', 5);
}

async function tagsOf(service: BlobServiceClient): Promise<Record<string, Record<string, string>>> {
  const client = service.getContainerClient(container);
  const found: Record<string, Record<string, string>> = {};
  for await (const item of client.listBlobsFlat())
    found[item.name] = (await client.getBlobClient(item.name).getTags()).tags;
  return found;
}

/** A read-only account SAS: lists and reads blobs, but Get Blob Tags needs `t`. */
function readOnlySas(endpoint: BlobTestEndpoint): string {
  return endpoint.service.generateAccountSasUrl(
    new Date(Date.now() + 3_600_000),
    AccountSASPermissions.parse('rl'),
    AccountSASResourceTypes.parse('sco').toString(),
  );
}

for (const { label, options } of serverEngines) {
  describe(`blob index tags through cerulean copy and backup (Cerulean on ${label})`, () => {
    let origin: BlobTestEndpoint;
    let other: BlobTestEndpoint;
    let dir: string;

    before(async () => {
      dir = makeTempDir('cerulean-blob-tags-');
      [origin, other] = await Promise.all([startCeruleanBlob(options), startCeruleanBlob(options)]);
      await seedTagged(origin.service);
    });
    after(async () => {
      await Promise.allSettled([origin?.stop(), other?.stop()]);
      if (dir) removeDir(dir);
    });

    test('copy --container --verify carries every blob type with its tags; a second copy sets changed tags again', async () => {
      const args = ['copy', origin.connectionString, other.connectionString, '--container', container, '--verify'];
      const first = await runCli(args);
      assert.equal(first.code, 0, describeRun(first));
      assert.match(first.stdout, /^tagged: 5 blobs, [\d,]+ bytes copied, sizes and checksums match\n$/);
      assert.deepEqual(await tagsOf(other.service), tagged);

      const moved = other.service.getContainerClient(container);
      await moved.getBlobClient('small.txt').setTags({ stale: 'yes' });
      await moved.getBlobClient('plain.txt').setTags({ extra: '1' });
      const again = await runCli(args);
      assert.equal(again.code, 0, describeRun(again));
      assert.match(again.stdout, /^tagged: 0 blobs, 0 bytes copied, 5 identical already there, sizes and checksums/);
      assert.deepEqual(await tagsOf(other.service), tagged);
      await moved.deleteIfExists();
    });

    test('a source that will not answer Get Blob Tags is copied without them, said once', async () => {
      const copy = await runCli(['copy', readOnlySas(origin), other.connectionString, '--container', container]);
      assert.equal(copy.code, 0, describeRun(copy));
      const notCarried = /^ {2}tags not carried: the source answers Get Blob Tags with 403 \w+$/gm;
      assert.equal(copy.stdout.match(notCarried)?.length, 1, copy.stdout);
      assert.match(copy.stdout, /^tagged: 5 blobs, [\d,]+ bytes copied, sizes match$/m);
      assert.match(copy.stderr, /tags not carried in 1 \(see above\)/);
      const none = Object.fromEntries(Object.keys(tagged).map((name) => [name, {}]));
      assert.deepEqual(await tagsOf(other.service), none);
      await other.service.getContainerClient(container).deleteIfExists();
    });

    test('backup and restore keep the tags; a backup of format version 2 still restores', async () => {
      const file = join(dir, 'tags.backup');
      const backup = await runCli(['backup', file, '-c', origin.connectionString, '--container', container]);
      assert.equal(backup.code, 0, describeRun(backup));
      assert.doesNotMatch(backup.stderr, /tags not kept/);
      const restore = await runCli(['restore', file, '-c', other.connectionString]);
      assert.equal(restore.code, 0, describeRun(restore));
      // Page blobs are kept too (format version 4), with their tags.
      assert.deepEqual(await tagsOf(other.service), tagged);
      await other.service.getContainerClient(container).delete();

      // Version 2 had no tags (nor access control, added by 4): the same file without them, as a
      // version 2 writer made it.
      const older = join(dir, 'version-2.backup');
      const text = readFileSync(file, 'latin1')
        .replace('"version":4', '"version":2')
        .replace(/,"tags":\{[^}]*\}/g, '')
        .replace(/,"access":\{[^}]*\}/g, '');
      assert.match(text, /"version":2/);
      writeFileSync(older, text, 'latin1');
      const restored = await runCli(['restore', older, '-c', other.connectionString, '--replace']);
      assert.equal(restored.code, 0, describeRun(restored));
      const none = Object.fromEntries(Object.keys(tagged).map((name) => [name, {}]));
      assert.deepEqual(await tagsOf(other.service), none);
      await other.service.getContainerClient(container).delete();
    });

    test('a backup through a SAS without the tag permission says the tags were not kept', async () => {
      const file = join(dir, 'sas.backup');
      const backup = await runCli(['backup', file, '-c', readOnlySas(origin), '--container', container]);
      assert.equal(backup.code, 0, describeRun(backup));
      assert.match(backup.stderr, /; blob tags not kept: tagged \(the source answers Get Blob Tags with 403 \w+\)/);
      assert.doesNotMatch(readFileSync(file, 'latin1'), /"tags":/);
    });
  });
}

describe('blob index tags copied into Azurite and back', () => {
  test('Cerulean to Azurite to Cerulean: the tags arrive at each end', async () => {
    const [origin, azurite, last] = await Promise.all([
      startCeruleanBlob({ inMemory: true }),
      startAzuriteBlob(),
      startCeruleanBlob({ inMemory: true }),
    ]);
    try {
      await seedTagged(origin.service);
      for (const [from, to] of [
        [origin, azurite],
        [azurite, last],
      ] as const) {
        const copy = await runCli([
          'copy',
          from.connectionString,
          to.connectionString,
          '--container',
          container,
          '--verify',
        ]);
        assert.equal(copy.code, 0, describeRun(copy));
        assert.doesNotMatch(copy.stdout, /tags not carried/);
        assert.deepEqual(await tagsOf(to.service), tagged, `at ${to.blobUrl}`);
      }
    } finally {
      await Promise.allSettled([origin.stop(), azurite.stop(), last.stop()]);
    }
  });
});
