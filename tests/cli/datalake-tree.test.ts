// Data Lake directory trees through the CLI, run as typed against real servers on each engine:
// `cerulean copy --container` and `backup` / `restore` keep the directories (hdi_isfolder blobs,
// empty ones too) and every path's owner, group, permissions and ACL, as getAccessControl answers
// them at both ends; `blobs upload` of a folder makes a directory for each subfolder (an empty one
// too) and `blobs download` brings the empty one back as a folder. Into a flat account (Azurite) the
// directories go as blobs, nothing is said by copy, and restore says the access control was not kept.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataLakeServiceClient, StorageSharedKeyCredential } from '@azure/storage-file-datalake';
import { describeRun, runCli } from '../helpers/cli.js';
import { devAccount, devKey, makeTempDir, removeDir, serverEngines } from '../helpers/server.js';
import { startAzuriteBlob, startCeruleanBlob, type BlobTestEndpoint } from './blob-endpoints.js';
import { parseAcl } from '../../src/cli/path-access.js';

function lake(endpoint: BlobTestEndpoint): DataLakeServiceClient {
  return new DataLakeServiceClient(endpoint.blobUrl, new StorageSharedKeyCredential(devAccount, devKey), {
    retryOptions: { maxTries: 1 },
  });
}

/** Every path of the file system: `name (directory|file): owner group permissions acl`. */
async function describeTree(endpoint: BlobTestEndpoint, filesystem: string): Promise<string[]> {
  const fs = lake(endpoint).getFileSystemClient(filesystem);
  const lines: string[] = [];
  for await (const path of fs.listPaths({ recursive: true })) {
    const access = await fs.getFileClient(path.name!).getAccessControl();
    const permissions = access._response.headers.get('x-ms-permissions');
    const acl = access._response.headers.get('x-ms-acl');
    const kind = path.isDirectory ? 'directory' : 'file';
    lines.push(`${path.name} (${kind}): ${access.owner} ${access.group} ${permissions} ${acl}`);
  }
  return lines;
}

/** A tree with an empty directory, a sticky bit, named and default ACL entries, and owners. */
async function seedTree(endpoint: BlobTestEndpoint, filesystem: string): Promise<void> {
  const fs = lake(endpoint).getFileSystemClient(filesystem);
  await fs.create();
  const raw = fs.getDirectoryClient('raw/2024');
  await raw.create();
  await fs.getDirectoryClient('empty').create();
  const file = raw.getFileClient('a.csv');
  await file.create();
  await file.append('x,y\n1,2\n', 0, 8);
  await file.flush(8);
  await fs.getFileClient('top.txt').create();
  await fs
    .getDirectoryClient('raw')
    .setAccessControl(parseAcl('user::rwx,group::r-x,other::---,user:alice:r-x,default:user:alice:r-x'), {
      owner: 'ann',
      group: 'staff',
    });
  await file.setAccessControl(parseAcl('user::rw-,group::r--,other::---,group:auditors:r--'), { owner: 'bob' });
  await fs.getDirectoryClient('empty').setPermissions(
    {
      owner: { read: true, write: true, execute: true },
      group: { read: true, write: false, execute: true },
      other: { read: true, write: true, execute: true },
      stickyBit: true,
      extendedAcls: false,
    },
    { group: 'shared' },
  );
}

for (const { label, options } of serverEngines) {
  describe(`cerulean and Data Lake directory trees (${label})`, () => {
    let origin: BlobTestEndpoint;
    let other: BlobTestEndpoint;
    let dir: string;
    let seeded: string[];

    before(async () => {
      dir = makeTempDir('cerulean-datalake-tree-');
      [origin, other] = await Promise.all([startCeruleanBlob(options), startCeruleanBlob(options)]);
      await seedTree(origin, 'lake');
      seeded = await describeTree(origin, 'lake');
      // The seed is what the test means: an empty directory, a sticky bit, named and default entries.
      assert.ok(seeded.includes('empty (directory): $superuser shared rwxr-xrwt user::rwx,group::r-x,other::rwx'));
      assert.ok(seeded.some((line) => line.startsWith('raw (directory): ann staff rwxr-x---+ ')));
    });
    after(async () => {
      await Promise.allSettled([origin?.stop(), other?.stop()]);
      if (dir) removeDir(dir);
    });

    test('copy --container keeps the directories and every access control; a second run sets back what changed', async () => {
      const copyArgs = () => [
        'copy',
        origin.connectionString,
        other.connectionString,
        '--container',
        'lake',
        '--verify',
      ];
      const copy = await runCli(copyArgs());
      assert.equal(copy.code, 0, describeRun(copy));
      assert.match(copy.stdout, /^lake: 5 blobs, 8 bytes copied, sizes and checksums match$/m);
      assert.doesNotMatch(copy.stdout, /access control not carried/);
      assert.deepEqual(await describeTree(other, 'lake'), seeded);

      // Access control changed at the destination only: the copy of identical blobs sets it back.
      await lake(other)
        .getFileSystemClient('lake')
        .getFileClient('top.txt')
        .setAccessControl(parseAcl('user::rwx,group::---,other::---'), { owner: 'eve' });
      const again = await runCli(copyArgs());
      assert.equal(again.code, 0, describeRun(again));
      assert.match(
        again.stdout,
        /^lake: 0 blobs, 0 bytes copied, 5 identical already there, sizes and checksums match$/m,
      );
      assert.deepEqual(await describeTree(other, 'lake'), seeded);
    });

    test('backup and restore keep the directories and every access control', async () => {
      const file = join(dir, 'lake.backup');
      const backup = await runCli(['backup', file, '-c', origin.connectionString, '--container', 'lake']);
      assert.equal(backup.code, 0, describeRun(backup));
      assert.doesNotMatch(backup.stderr, /access control not kept/);
      const restore = await runCli(['restore', file, '-c', other.connectionString, '--replace']);
      assert.equal(restore.code, 0, describeRun(restore));
      await lake(other).getFileSystemClient('lake').delete();
      const fresh = await runCli(['restore', file, '-c', other.connectionString]);
      assert.equal(fresh.code, 0, describeRun(fresh));
      assert.doesNotMatch(fresh.stderr, /access control not kept/);
      assert.deepEqual(await describeTree(other, 'lake'), seeded);
    });

    test('blobs upload of a folder makes a directory per subfolder; download brings the empty one back', async () => {
      const source = join(dir, 'site');
      mkdirSync(join(source, 'docs', 'deep'), { recursive: true });
      mkdirSync(join(source, 'nothing-here'));
      writeFileSync(join(source, 'docs', 'deep', 'a.txt'), 'a');
      writeFileSync(join(source, 'index.html'), '<p>');
      const up = await runCli(['blobs', 'upload', source, 'upl/v1', '-c', origin.connectionString]);
      assert.equal(up.code, 0, describeRun(up));
      assert.match(
        up.stderr,
        /^upload: 2 files, 4 bytes transferred, 0 identical skipped \(.*\), 4 directories made$/m,
      );
      const tree = await describeTree(origin, 'upl');
      assert.deepEqual(
        tree.map((line) => line.split(':')[0]),
        [
          'v1 (directory)',
          'v1/docs (directory)',
          'v1/docs/deep (directory)',
          'v1/docs/deep/a.txt (file)',
          'v1/index.html (file)',
          'v1/nothing-here (directory)',
        ],
      );
      const again = await runCli(['blobs', 'sync', source, 'upl/v1', '--delete', '-c', origin.connectionString]);
      assert.equal(again.code, 0, describeRun(again));
      assert.match(again.stderr, /^sync: 0 files, 0 bytes transferred, 2 identical skipped \(/m);
      assert.doesNotMatch(again.stderr, /deleted|directories made/);

      const out = join(dir, 'site-back');
      const down = await runCli(['blobs', 'download', 'upl/v1/', out, '-c', origin.connectionString]);
      assert.equal(down.code, 0, describeRun(down));
      assert.match(down.stderr, /^download: 2 files, 4 bytes transferred, 0 identical skipped/m);
      assert.ok(statSync(join(out, 'nothing-here')).isDirectory());
      assert.deepEqual(readdirSync(join(out, 'docs', 'deep')), ['a.txt']);
      assert.equal(existsSync(join(out, 'docs', 'deep', 'a.txt')), true);
    });
  });
}

describe('cerulean and a Data Lake tree into a flat account (Azurite)', () => {
  let origin: BlobTestEndpoint;
  let azurite: BlobTestEndpoint;
  let dir: string;

  before(async () => {
    dir = makeTempDir('cerulean-datalake-flat-');
    [origin, azurite] = await Promise.all([startCeruleanBlob(), startAzuriteBlob()]);
    await seedTree(origin, 'lake');
  });
  after(async () => {
    await Promise.allSettled([origin?.stop(), azurite?.stop()]);
    if (dir) removeDir(dir);
  });

  test('copy carries the directories as hdi_isfolder blobs and says nothing; restore says what it did not keep', async () => {
    const copy = await runCli(['copy', origin.connectionString, azurite.connectionString, '--container', 'lake']);
    assert.equal(copy.code, 0, describeRun(copy));
    assert.equal(copy.stdout, 'lake: 5 blobs, 8 bytes copied, sizes match\n');
    const folders: string[] = [];
    for await (const item of azurite.service.getContainerClient('lake').listBlobsFlat({ includeMetadata: true }))
      if (item.metadata?.['hdi_isfolder'] === 'true') folders.push(item.name);
    assert.deepEqual(folders, ['empty', 'raw', 'raw/2024']);

    const file = join(dir, 'lake.backup');
    const backup = await runCli(['backup', file, '-c', origin.connectionString, '--container', 'lake']);
    assert.equal(backup.code, 0, describeRun(backup));
    await azurite.service.getContainerClient('lake').delete();
    const restore = await runCli(['restore', file, '-c', azurite.connectionString]);
    assert.equal(restore.code, 0, describeRun(restore));
    assert.match(
      restore.stderr,
      /access control not kept: lake \(the destination account has no hierarchical namespace\)/,
    );
  });
});
