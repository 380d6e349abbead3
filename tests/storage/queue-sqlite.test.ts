// The SQLite engine's queue store against the queue conformance suite and the model test, in
// memory (writer inline) and on disk (writer thread, fsync, a read connection of its own).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { runQueueEngineConformance, type QueueStoreUnderTest } from './queue-conformance/index.js';

async function inMemory(): Promise<QueueStoreUnderTest> {
  const tables = await SqliteStore.open({ location: undefined });
  const store = tables.openQueueStore();
  return { store, second: store, close: () => tables.close() };
}

async function onDisk(): Promise<QueueStoreUnderTest> {
  const location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-queue-conformance-'));
  let tables = await SqliteStore.open({ location });
  let queues = tables.openQueueStore();
  const close = async () => {
    queues.close();
    await tables.close();
  };
  return {
    get store() {
      return queues;
    },
    get second() {
      return queues;
    },
    async close() {
      await close();
      rmSync(location, { recursive: true, force: true });
    },
    async reopen() {
      await close();
      tables = await SqliteStore.open({ location });
      queues = tables.openQueueStore();
      return queues;
    },
  };
}

runQueueEngineConformance('SQLite in memory', inMemory, {
  skip: {
    'after reopening: queues, metadata, policies and every message as acknowledged':
      'an in-memory database keeps nothing once closed',
  },
});
// On disk every write waits for fsync: fewer model sequences (the same writer code runs the full count in memory).
runQueueEngineConformance('SQLite on disk', onDisk, { model: { sequences: 5 } });
