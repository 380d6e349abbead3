// `cerulean copy` of a whole account, run as typed, from a running Azurite (its Table, Queue and Blob
// services) into Cerulean on each engine: tables, queues and blobs arrive, --verify checks them, and
// a second run finds everything there already and copies nothing again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TableClient } from '@azure/data-tables';
import { BlobServiceClient } from '@azure/storage-blob';
import { QueueServiceClient } from '@azure/storage-queue';
import { comparableLines, describeRun, runCli, startAzuriteAccount, type RunningAzurite } from '../helpers/cli.js';
import { makeTempDir, removeDir, serverEngines, startServer } from '../helpers/server.js';
import { clientOptions } from '../helpers/sdk.js';
import { describeContainer, patternBytes, seedContainer } from './blob-endpoints.js';

const tables = ['People', 'Orders'];
/** More than one peek shows (32): --queue-messages all must walk them all. */
const longQueueMessages = 45;

describe('cerulean copy of a whole account from Azurite', () => {
  let azurite: RunningAzurite;
  let dir: string;

  before(async () => {
    dir = makeTempDir('cerulean-account-copy-');
    azurite = await startAzuriteAccount();
    for (const table of tables) {
      const client = TableClient.fromConnectionString(azurite.connectionString, table, clientOptions);
      await client.createTable();
      for (let i = 0; i < 25; i++)
        await client.createEntity({ partitionKey: `p${i % 3}`, rowKey: `r${i}`, n: i, table });
    }
    const queues = QueueServiceClient.fromConnectionString(azurite.connectionString);
    const jobs = queues.getQueueClient('jobs');
    await jobs.create({ metadata: { owner: 'tests' } });
    for (let i = 0; i < longQueueMessages; i++) await jobs.sendMessage(`job ${i} é`);
    await queues.getQueueClient('empty').create();
    const blobs = BlobServiceClient.fromConnectionString(azurite.connectionString);
    await seedContainer(blobs, 'photos');
    const page = blobs.getContainerClient('photos').getPageBlobClient('disk.vhd');
    await page.create(8192, { metadata: { kind: 'page' } });
    await page.uploadPages(patternBytes(1024, 'page'), 2048, 1024);
  });
  after(async () => {
    await azurite?.stop();
    if (dir) removeDir(dir);
  });

  for (const { label, options } of serverEngines) {
    test(`tables, queues and blobs into Cerulean (${label}), checked by --verify; a second run copies nothing again`, async () => {
      const server = await startServer(options);
      try {
        const args = ['copy', azurite.connectionString, server.connectionString, '--verify', '--queue-messages', 'all'];
        const first = await runCli(args, { cwd: dir });
        assert.equal(first.code, 0, describeRun(first));
        assert.match(first.stdout, /^People: 25 read, 25 at the destination, 25 compared, checksums match$/m);
        assert.match(first.stdout, new RegExp(`^jobs: ${longQueueMessages} messages copied, counts match$`, 'm'));
        // The page blob is carried too, now that Cerulean serves page blobs.
        assert.match(first.stdout, /^photos: 4 blobs, [\d,]+ bytes copied, sizes and checksums match$/m);
        assert.doesNotMatch(first.stdout, /disk\.vhd: page blob not copied/);
        assert.match(first.stderr, /^copy: 2 table\(s\) copied, counts match, checksums match \(50 entities\)$/m);
        assert.match(first.stderr, /^copy: queues: 2 copied with their metadata, 45 messages \(/m);
        assert.match(first.stderr, /^copy: blobs: 1 container\(s\), 4 blobs copied, [\d,]+ bytes/m);

        for (const table of tables) {
          const exported = await Promise.all(
            [azurite.connectionString, server.connectionString].map((c) => runCli(['export', table, '-c', c])),
          );
          assert.deepEqual(comparableLines(exported[1]!.stdout), comparableLines(exported[0]!.stdout), table);
        }
        const texts = async (connectionString: string) => {
          const queue = QueueServiceClient.fromConnectionString(connectionString).getQueueClient('jobs');
          const properties = await queue.getProperties();
          const peeked = await queue.peekMessages({ numberOfMessages: 32 });
          return {
            metadata: properties.metadata,
            count: properties.approximateMessagesCount,
            first: peeked.peekedMessageItems.map((message) => message.messageText).sort(),
          };
        };
        const there = await texts(server.connectionString);
        assert.equal(there.count, longQueueMessages);
        assert.deepEqual(there.metadata, { owner: 'tests' });
        assert.equal(new Set(there.first).size, 32);
        assert.ok(
          there.first.every((text) => /^job \d+ é$/.test(text)),
          there.first.join('|'),
        );
        // The source is whole again: every message visible, none lost.
        assert.equal((await texts(azurite.connectionString)).first.length, 32);
        const expected = await describeContainer(
          BlobServiceClient.fromConnectionString(azurite.connectionString),
          'photos',
        );
        const copied = await describeContainer(
          BlobServiceClient.fromConnectionString(server.connectionString),
          'photos',
        );
        assert.deepEqual(copied, expected);

        const again = await runCli(args, { cwd: dir });
        assert.equal(again.code, 0, describeRun(again));
        assert.match(again.stdout, /^photos: 0 blobs, 0 bytes copied, 4 identical already there/m);
        assert.match(again.stdout, /^jobs: 0 messages copied, the destination holds 45 already \(none copied again\)/m);
      } finally {
        await server.stop();
      }
    });
  }

  test('a page blob is carried to a destination that serves page blobs (a second Azurite): its pages, headers, metadata', async () => {
    const second = await startAzuriteAccount();
    try {
      const result = await runCli([
        'copy',
        azurite.connectionString,
        second.connectionString,
        '--container',
        'photos',
        '--verify',
      ]);
      assert.equal(result.code, 0, describeRun(result));
      assert.match(result.stdout, /^photos: 4 blobs, [\d,]+ bytes copied, sizes and checksums match$/m);
      const service = (c: string) => BlobServiceClient.fromConnectionString(c);
      assert.deepEqual(
        await describeContainer(service(second.connectionString), 'photos'),
        await describeContainer(service(azurite.connectionString), 'photos'),
      );
      const page = service(second.connectionString).getContainerClient('photos').getPageBlobClient('disk.vhd');
      const ranges = (await page.getPageRanges()).pageRange ?? [];
      assert.deepEqual(ranges, [{ offset: 2048, count: 1023 }], 'only the written pages are put (count: End - Start)');
    } finally {
      await second.stop();
    }
  });

  test('--only narrows the services; one an end does not reach is a usage error', async () => {
    const server = await startServer({ inMemory: true });
    try {
      const only = await runCli(['copy', azurite.connectionString, server.connectionString, '--only', 'queues']);
      assert.equal(only.code, 0, describeRun(only));
      assert.doesNotMatch(only.stdout, /People|photos/);
      assert.match(only.stdout, /^jobs: 32 messages copied, 13 not copied/m);
      const tablesOnly = `AccountName=devstoreaccount1;AccountKey=x;TableEndpoint=${server.url}`;
      const refused = await runCli(['copy', azurite.connectionString, tablesOnly, '--only', 'blobs']);
      assert.equal(refused.code, 2, describeRun(refused));
      assert.match(refused.stderr, /^cerulean copy: blobs: the destination connection string names no BlobEndpoint$/m);
    } finally {
      await server.stop();
    }
  });
});
