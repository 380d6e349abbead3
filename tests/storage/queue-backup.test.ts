// Backup and restore of a SQLite data directory keep its queues: they live in the same database
// file as the tables, which the online backup copies whole (src/storage/sqlite/backup.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openEngine } from '../../src/storage/engine.js';
import { backupData, restoreData } from '../../src/storage/backup.js';

const t0 = 1_800_000_000_000;

test('a SQLite backup restored holds the queues, their metadata and messages with their state', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cerulean-queue-backup-'));
  const [source, target, file] = [path.join(dir, 'data'), path.join(dir, 'restored'), path.join(dir, 'backup.db')];
  try {
    const stores = await openEngine({ location: source, database: undefined });
    const { queues } = stores;
    await queues.createQueue('acct', 'kept', new Map([['owner', 'ops']]));
    for (const id of ['a', 'b', 'c']) {
      await queues.putMessage('acct', 'kept', { id, text: id, insertedMs: t0, visibleMs: t0, expiresMs: Infinity });
    }
    const claimed = await queues.getMessages('acct', 'kept', { count: 1, nowMs: t0, visibleMs: t0 + 60_000 });
    assert.ok(claimed.ok);
    await backupData({ location: source }, file);
    await stores.close();
    restoreData(file, { location: target });
    const restored = await openEngine({ location: target, database: undefined });
    try {
      assert.deepEqual([...(await restored.queues.getQueue('acct', 'kept'))!.metadata], [['owner', 'ops']]);
      const peeked = await restored.queues.peekMessages('acct', 'kept', { count: 32, nowMs: t0 + 60_000 });
      assert.deepEqual(peeked.ok && peeked.value.map((message) => [message.id, message.dequeueCount]), [
        ['b', 0],
        ['c', 0],
        ['a', 1],
      ]);
      const [message] = claimed.value;
      const deleted = await restored.queues.deleteMessage('acct', 'kept', {
        id: message!.id,
        popReceipt: message!.popReceipt,
        nowMs: t0,
      });
      assert.ok(deleted.ok, 'the pop receipt of a claim before the backup is current after the restore');
    } finally {
      await restored.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
