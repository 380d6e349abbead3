// The periodic purge of expired messages (src/storage/sweep.ts) over a real queue store:
// one run is bounded, what has not expired stays, and the composition root's purge runs on its
// own and stops with the stores.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { compose } from '../../src/compose.js';
import { Sweep } from '../../src/storage/sweep.js';
import type { QueueStore } from '../../src/storage/queue-store.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

const t0 = 1_800_000_000_000;

async function fill(queues: QueueStore, expiring: number, expiresMs: number): Promise<void> {
  await queues.createQueue('acct', 'q', new Map());
  const put = (i: number, expires: number) =>
    queues.putMessage('acct', 'q', { id: `m${i}`, text: 'x', insertedMs: t0, visibleMs: t0, expiresMs: expires });
  await Promise.all(Array.from({ length: expiring }, (_, i) => put(i, expiresMs)));
  await put(expiring, Number.POSITIVE_INFINITY);
}

test('one purge run removes at most its bound of expired messages, and leaves the rest', async () => {
  const tables = await SqliteStore.open({ location: undefined });
  const queues = tables.openQueueStore();
  try {
    await fill(queues, 25, t0 + 1000);
    const purge = new Sweep((nowMs, limit) => queues.purgeExpired(nowMs, limit), {
      batchMessages: 4,
      batchesPerRunMax: 3,
      nowMs: () => t0 + 1000,
    });
    assert.equal(await purge.runOnce(), 12, 'three batches of four');
    assert.equal(await purge.runOnce(), 12);
    assert.equal(await purge.runOnce(), 1, 'a short batch ends the run');
    assert.equal(await purge.runOnce(), 0);
    const count = await queues.countMessages('acct', 'q', t0);
    assert.deepEqual(count, { ok: true, value: 1 }, 'the message that never expires stays');
  } finally {
    await tables.close();
  }
});

test('the composition purges expired messages on its own, and stops with close()', async () => {
  const composition = await compose({ location: undefined, database: undefined }, undefined, {
    purge: { intervalMs: 5, nowMs: () => t0 + 1000 },
  });
  try {
    await fill(composition.queues, 10, t0 + 1000);
    // Counted as of before the expiry, so the count falls only when rows are removed.
    const remaining = async () => {
      const count = await composition.queues.countMessages('acct', 'q', t0);
      return count.ok ? count.value : -1;
    };
    for (let tries = 0; tries < 400 && (await remaining()) > 1; tries++) await sleep(10);
    assert.equal(await remaining(), 1);
  } finally {
    await composition.close();
  }
});
