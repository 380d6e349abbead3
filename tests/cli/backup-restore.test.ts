// `cerulean backup` of a running server's data directory while clients write, and `cerulean
// restore` of it into an empty directory that a new server then serves.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TableClient } from '@azure/data-tables';
import { describeRun, runCli } from '../helpers/cli.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../helpers/server.js';
import { freshTable, tableClient } from '../helpers/sdk.js';

const batchSize = 10;
/** Acknowledged writes before the backup starts (single inserts; batches run beside them). */
const writesBeforeBackup = 150;

describe('cerulean backup / restore', () => {
  let dir: string;
  let server: RunningServer;
  let table: TableClient;

  before(async () => {
    dir = makeTempDir('cerulean-backup-');
    server = await startServer({ location: join(dir, 'data') });
    table = await freshTable(server, 'bk');
  });
  after(async () => {
    await server?.stop();
    if (dir) removeDir(dir);
  });

  test('a backup taken while writes run holds every write acknowledged before it and restores to a working server', async () => {
    // Two writers: single inserts with increasing RowKeys, and transactions of 10 entities.
    let singlesAcked = 0;
    let batchesAcked = 0;
    let stop = false;
    const singles = (async () => {
      for (let i = 0; !stop; i++) {
        await table.createEntity({ partitionKey: 'single', rowKey: String(i).padStart(8, '0'), i });
        singlesAcked = i + 1;
      }
    })();
    const batches = (async () => {
      for (let b = 0; !stop; b++) {
        const actions = Array.from(
          { length: batchSize },
          (_, j) => ['create', { partitionKey: 'batch', rowKey: `${String(b).padStart(6, '0')}-${j}` }] as const,
        );
        await table.submitTransaction(actions.map((action) => [...action]));
        batchesAcked = b + 1;
      }
    })();
    try {
      while (singlesAcked < writesBeforeBackup) await new Promise((resolve) => setTimeout(resolve, 10));
      const singlesBefore = singlesAcked;
      const batchesBefore = batchesAcked;
      const backupFile = join(dir, 'snapshot.sqlite');
      const backup = await runCli(['backup', backupFile, '--location', join(dir, 'data')]);
      assert.equal(backup.code, 0, describeRun(backup));
      assert.match(backup.stderr, /backup: 1 tables \([\d,]+ entities\), 0 queues \(0 messages\), 0 containers/);
      stop = true;
      await Promise.all([singles, batches]);

      const restoredDir = join(dir, 'restored');
      const restore = await runCli(['restore', backupFile, '--location', restoredDir]);
      assert.equal(restore.code, 0, describeRun(restore));
      assert.match(restore.stderr, /^restore: 1 tables \([\d,]+ entities\), 0 queues/m);
      const restored = await startServer({ location: restoredDir });
      try {
        const client = tableClient(restored, table.tableName);
        const singleKeys: string[] = [];
        for await (const entity of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'single'" } }))
          singleKeys.push(entity.rowKey!);
        // Every acknowledged write before the backup, and no gap: a snapshot of one moment.
        assert.ok(
          singleKeys.length >= singlesBefore,
          `${singleKeys.length} single writes restored, ${singlesBefore} acknowledged before the backup`,
        );
        assert.deepEqual(
          singleKeys,
          Array.from({ length: singleKeys.length }, (_, i) => String(i).padStart(8, '0')),
        );
        let batchEntities = 0;
        for await (const _ of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'batch'" } }))
          batchEntities++;
        assert.equal(batchEntities % batchSize, 0, 'a transaction is in the backup whole or not at all');
        assert.ok(batchEntities >= batchesBefore * batchSize);
        // The restored server takes writes.
        await client.createEntity({ partitionKey: 'after', rowKey: 'restore' });
        assert.equal((await client.getEntity('after', 'restore')).rowKey, 'restore');
      } finally {
        await restored.stop();
      }
    } finally {
      stop = true;
      await Promise.allSettled([singles, batches]);
    }
  });

  test('backup and restore leave one file each: no -shm, -wal or .partial beside them', async () => {
    const backupFile = join(dir, 'single.sqlite');
    const backup = await runCli(['backup', backupFile, '--location', join(dir, 'data')]);
    assert.equal(backup.code, 0, describeRun(backup));
    const beside = () => readdirSync(dir).filter((name) => name.startsWith('single.sqlite'));
    assert.deepEqual(beside(), ['single.sqlite']);
    const restoredDir = join(dir, 'restored-single');
    const restore = await runCli(['restore', backupFile, '--location', restoredDir]);
    assert.equal(restore.code, 0, describeRun(restore));
    assert.deepEqual(beside(), ['single.sqlite']);
    assert.deepEqual(
      readdirSync(restoredDir).filter((name) => name.includes('sqlite')),
      ['cerulean.sqlite'],
    );
  });

  test('stats --location reports the size on disk', async () => {
    const result = await runCli([
      'stats',
      table.tableName,
      '--location',
      join(dir, 'data'),
      '--json',
      '-c',
      server.connectionString,
    ]);
    assert.equal(result.code, 0, describeRun(result));
    const stats = JSON.parse(result.stdout) as { sizeOnDiskBytes: number; entities: number };
    assert.ok(stats.sizeOnDiskBytes > 0 && stats.entities > 0, result.stdout);
  });

  test('restore refuses a directory that is not empty, and leaves it as it was', async () => {
    const backupFile = join(dir, 'refuse.sqlite');
    assert.equal((await runCli(['backup', backupFile, '--location', join(dir, 'data')])).code, 0);
    const occupied = join(dir, 'occupied');
    mkdirSync(occupied);
    writeFileSync(join(occupied, 'keep.txt'), 'mine');
    const result = await runCli(['restore', backupFile, '--location', occupied]);
    assert.equal(result.code, 1, describeRun(result));
    assert.match(
      result.stderr,
      /^cerulean restore: .*occupied is not empty; restore only into an empty or new directory\n$/,
    );
    assert.deepEqual(readdirSync(occupied), ['keep.txt']);
  });

  test('a file that is not a backup, and a directory without data, are refused', async () => {
    const notBackup = join(dir, 'not-a-backup.sqlite');
    writeFileSync(notBackup, 'hello');
    const restore = await runCli(['restore', notBackup, '--location', join(dir, 'never')]);
    assert.equal(restore.code, 1, describeRun(restore));
    assert.match(restore.stderr, /is not a Cerulean backup/);
    assert.deepEqual(readdirSync(dir).includes('never'), false);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const backup = await runCli(['backup', join(dir, 'x.sqlite'), '--location', empty]);
    assert.equal(backup.code, 1, describeRun(backup));
    assert.match(backup.stderr, /no Cerulean database in /);
  });

  test('for a PostgreSQL database, the database tools are named and the exit is non-zero', async () => {
    const backup = await runCli(['backup', join(dir, 'pg.dump'), '--database', 'postgres://user@localhost/cerulean']);
    assert.equal(backup.code, 2, describeRun(backup));
    assert.match(backup.stderr, /pg_dump/);
    const restore = await runCli([
      'restore',
      join(dir, 'pg.dump'),
      '--database',
      'postgresql://user@localhost/cerulean',
    ]);
    assert.equal(restore.code, 2, describeRun(restore));
    assert.match(restore.stderr, /pg_restore/);
  });
});
