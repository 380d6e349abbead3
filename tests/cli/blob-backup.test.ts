// `cerulean backup -c` / `restore -c` of tables, queues, containers and blobs, and `cerulean copy --container`,
// run as typed against real Blob endpoints: a backup, a wipe and a restore give back every byte,
// header, metadata item, access level and stored access policy.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readFileSync, statSync, truncateSync, existsSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { TableClient } from '@azure/data-tables';
import { AccountSASPermissions, AccountSASResourceTypes } from '@azure/storage-blob';
import { QueueServiceClient } from '@azure/storage-queue';
import { comparableLines, describeRun, extremeEntities, runCli, startCli } from '../helpers/cli.js';
import { makeTempDir, removeDir } from '../helpers/server.js';
import {
  describeContainer,
  seedContainer,
  startAzuriteBlob,
  startCeruleanBlob,
  type BlobTestEndpoint,
} from './blob-endpoints.js';

describe('cerulean backup / restore / copy of containers and blobs', () => {
  // Cerulean on disk, a second Cerulean in memory, and Azurite.
  let origin: BlobTestEndpoint;
  let other: BlobTestEndpoint;
  let azurite: BlobTestEndpoint;
  let dir: string;

  before(async () => {
    dir = makeTempDir('cerulean-blob-backup-');
    [origin, other, azurite] = await Promise.all([
      startCeruleanBlob({ location: join(dir, 'data') }),
      startCeruleanBlob({ inMemory: true }),
      startAzuriteBlob(),
    ]);
    await seedContainer(origin.service, 'photos');
    await seedContainer(origin.service, 'archive');
  });
  after(async () => {
    await Promise.allSettled([origin?.stop(), other?.stop(), azurite?.stop()]);
    if (dir) removeDir(dir);
  });

  test('backup, wipe, restore: every blob and entity exact, with headers, metadata and the ACL', async () => {
    const account = origin.accountConnectionString!;
    const table = TableClient.fromConnectionString(account, 'Edge', { allowInsecureConnection: true });
    await table.createTable();
    for (const entity of extremeEntities()) await table.createEntity(entity as never);
    const exported = async () => {
      const result = await runCli(['export', 'Edge', '-c', account]);
      assert.equal(result.code, 0, describeRun(result));
      return comparableLines(result.stdout);
    };
    const entitiesBefore = await exported();
    const before = await describeContainer(origin.service, 'photos');
    const queue = QueueServiceClient.fromConnectionString(account).getQueueClient('work');
    await queue.create({ metadata: { team: 'ops' } });
    for (const text of ['first', 'second é', '{"json":true}']) await queue.sendMessage(text);
    await queue.sendMessage('forever', { messageTimeToLive: -1 });
    const queueState = async () => ({
      metadata: (await queue.getProperties()).metadata,
      messages: (await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.map((m) => ({
        text: m.messageText,
        forever: m.expiresOn.getUTCFullYear() === 9999,
      })),
    });
    const queueBefore = await queueState();
    const file = join(dir, 'account.backup');
    const backup = await runCli(['backup', file, '-c', account]);
    assert.equal(backup.code, 0, describeRun(backup));
    assert.match(
      backup.stderr,
      /backup: 1 tables \([1-9]\d* entities\), 1 queues \(4 messages\), 2 containers \(6 blobs, [\d,]+ bytes\) written to /,
    );
    assert.ok(!existsSync(`${file}.partial`));
    assert.ok(!readFileSync(file).includes(account.split('AccountKey=')[1]!.split(';')[0]!), 'no key in the file');

    await table.deleteTable();
    await queue.delete();
    await origin.service.getContainerClient('photos').delete();
    await origin.service.getContainerClient('archive').delete();
    await waitUntilGone(origin, 'photos');
    const restore = await runCli(['restore', file, '-c', account]);
    assert.equal(restore.code, 0, describeRun(restore));
    assert.match(
      restore.stderr,
      /restore: 1 tables \([1-9]\d* entities\), 1 queues \(4 messages\), 2 containers \(6 blobs, [\d,]+ bytes\) restored /,
    );
    assert.deepEqual(await queueState(), queueBefore);
    assert.deepEqual(await describeContainer(origin.service, 'photos'), before);
    assert.deepEqual(await exported(), entitiesBefore);

    const again = await runCli(['restore', file, '-c', account]);
    assert.equal(again.code, 1, describeRun(again));
    assert.match(again.stderr, /table Edge exists at .*: delete it first, or give --replace/);
    const replaced = await runCli(['restore', file, '-c', account, '--replace']);
    assert.equal(replaced.code, 0, describeRun(replaced));
    assert.deepEqual(await describeContainer(origin.service, 'photos'), before);
    const snapshot = await runCli(['restore', file, '--location', join(dir, 'restored')]);
    assert.equal(snapshot.code, 2, describeRun(snapshot));
    assert.match(snapshot.stderr, /is an account backup: restore it with -c, not --location/);
    const existing = await runCli(['backup', file, '-c', account]);
    assert.equal(existing.code, 2, describeRun(existing));
    assert.match(existing.stderr, /account\.backup exists: an account backup never replaces a file/);
  });

  test('Ctrl-C during an account backup removes its partial file and says so', async () => {
    const account = origin.accountConnectionString!;
    // Every page of the table scan is slow, so the backup is surely under way when the signal comes.
    const rules = { rules: [{ kind: 'latency', every: 1, latencyMs: 400, operations: ['QueryEntities'] }] };
    const set = await runCli(['faults', 'set', JSON.stringify(rules), '-c', account]);
    assert.equal(set.code, 0, describeRun(set));
    const file = join(dir, 'interrupted.backup');
    try {
      const run = startCli(['backup', file, '-c', account]);
      for (let waitedMs = 0; !existsSync(`${file}.partial`); waitedMs += 20) {
        assert.ok(waitedMs < 60_000, 'the backup never started');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      run.signal('SIGINT');
      const interrupted = await run.result;
      assert.equal(interrupted.code, 130, describeRun(interrupted));
      assert.match(interrupted.stderr, /interrupted: nothing written: .*interrupted\.backup\.partial removed/);
      assert.equal(existsSync(file), false);
      assert.equal(existsSync(`${file}.partial`), false);
    } finally {
      await runCli(['faults', 'clear', '-c', account]);
    }
  });

  test('on a terminal, an account backup shows a live line: items, bytes, rate', async (t) => {
    if (!existsSync('/usr/bin/script')) return t.skip('script(1) is not installed');
    const binPath = fileURLToPath(new URL('../../../bin/cerulean.js', import.meta.url));
    const file = join(dir, 'terminal.backup');
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, binPath, 'backup', file, '-c', origin.accountConnectionString!];
    const { stdout } = await promisify(execFile)('/usr/bin/script', ['-qec', command.map(quote).join(' '), '/dev/null'], {
      env: { ...process.env, AZURE_STORAGE_CONNECTION_STRING: '' },
    });
    assert.match(stdout, /\rbackup: [\d,]+ items, [\d.]+ (B|KiB|MiB), [\d.]+ (B|KiB|MiB)\/s/);
    assert.match(stdout, /backup: .*2 containers \([1-9]\d* blobs, [\d,]+ bytes\) written to /);
    assert.ok(existsSync(file));
  });

  test('a data-directory snapshot holds the blob content files and says how many', async () => {
    const backup = await runCli(['backup', join(dir, 'snapshot.sqlite'), '--location', join(dir, 'data')]);
    assert.equal(backup.code, 0, describeRun(backup));
    assert.match(backup.stderr, /snapshot\.sqlite \(with [1-9]\d* blob content files, [\d,]+ bytes\)\n$/);
    assert.doesNotMatch(backup.stderr, /not in the snapshot/);
  });

  test('a truncated backup fails with one line and never commits the damaged block blob', async () => {
    const file = join(dir, 'photos.backup');
    const backup = await runCli(['backup', file, '-c', origin.accountConnectionString!, '--container', 'photos']);
    assert.equal(backup.code, 0, describeRun(backup));
    const damaged = join(dir, 'damaged.backup');
    copyFileSync(file, damaged);
    truncateSync(damaged, Math.floor(statSync(file).size / 2)); // inside the 10 MiB blob
    const restore = await runCli(['restore', damaged, '-c', other.connectionString]);
    assert.equal(restore.code, 1, describeRun(restore));
    assert.match(restore.stderr, /^cerulean restore: .*ends in the middle of a blob's content\n$/);
    assert.equal(await other.service.getContainerClient('photos').getBlobClient('folder/large.bin').exists(), false);
    await other.service.getContainerClient('photos').delete();
  });

  test('copy --container from Cerulean to Azurite and on to another Cerulean carries everything', async () => {
    const expected = await describeContainer(origin.service, 'archive');
    for (const [from, to] of [
      [origin, azurite],
      [azurite, other],
    ] as const) {
      const copy = await runCli(['copy', from.connectionString, to.connectionString, '--container', 'archive']);
      assert.equal(copy.code, 0, describeRun(copy));
      assert.match(copy.stdout, /^archive: 3 blobs, [\d,]+ bytes copied, sizes match\n$/);
      assert.deepEqual(await describeContainer(to.service, 'archive'), expected, `at ${to.blobUrl}`);
    }
  });

  test('through a read-only account SAS: blobs, headers and metadata round-trip; the ACL is not readable', async () => {
    const sasUrl = origin.service.generateAccountSasUrl(
      new Date(Date.now() + 3_600_000),
      AccountSASPermissions.parse('rl'),
      AccountSASResourceTypes.parse('sco').toString(),
    );
    const file = join(dir, 'sas.backup');
    const backup = await runCli(['backup', file, '-c', sasUrl, '--container', 'photos']);
    assert.equal(backup.code, 0, describeRun(backup));
    assert.match(readFileSync(file, 'utf8').split('\n')[1]!, /"name":"photos",.*"acl":null/);
    const restore = await runCli(['restore', file, '-c', azurite.connectionString]);
    assert.equal(restore.code, 0, describeRun(restore));
    const expected = (await describeContainer(origin.service, 'photos')) as Record<string, unknown>;
    assert.deepEqual(await describeContainer(azurite.service, 'photos'), { ...expected, publicAccess: null, acl: [] });
  });

  test('a connection string without a BlobEndpoint, or a missing container, fails with one line', async () => {
    const noBlob = origin.connectionString.replace(/BlobEndpoint=[^;]*/, 'FileEndpoint=http://127.0.0.1:1/x');
    const backup = await runCli(['backup', join(dir, 'none.backup'), '-c', noBlob]);
    assert.equal(backup.code, 2, describeRun(backup));
    assert.match(backup.stderr, /the connection string names no TableEndpoint, QueueEndpoint or BlobEndpoint/);
    const named = await runCli(['backup', join(dir, 'none.backup'), '-c', noBlob, '--container', 'photos']);
    assert.equal(named.code, 2, describeRun(named));
    assert.ok(!existsSync(join(dir, 'none.backup')));
    const copy = await runCli(['copy', origin.connectionString, other.connectionString, '--container', 'absent']);
    assert.equal(copy.code, 1, describeRun(copy));
    assert.match(copy.stderr, /^cerulean copy: container absent: 404 ContainerNotFound: .*\n$/);
  });
});

/** A deleted container's name may stay taken for a while (the real service says up to 30 s). */
async function waitUntilGone(endpoint: BlobTestEndpoint, name: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (!(await endpoint.service.getContainerClient(name).exists())) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
