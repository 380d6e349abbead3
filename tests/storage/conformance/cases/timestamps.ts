// Commit timestamps (Azure REST: understanding-the-table-service-data-model, TableStore.commit): UTC wall-clock ticks,
// strictly increasing
// from commit to commit, for one entity rewritten faster than the clock ticks too (or optimistic
// concurrency breaks), and shared by every write of a batch.
import assert from 'node:assert/strict';
import type { ConformanceCase } from '../suite.js';
import type { TableStore, TableInfo } from '../../../../src/storage/table-store.js';
import { commitOk, del, edm, props, put, show, version } from '../support.js';
import { read } from './seed.js';

const ticksPerMs = 10_000n;
const clockSlackMs = 5n * 60n * 1000n;
const hourMs = 3_600_000;

/**
 * Runs `work` with this process's clocks (Date.now, performance.now) stopped `offsetMs` from now:
 * an engine whose commit clock reads them on this thread then meets one clock tick many times
 * over, or a clock that went back. An engine whose clock lives elsewhere (a worker thread, the
 * database server) is not affected, and the case still holds it to the same outcome.
 */
async function withStoppedClock<T>(offsetMs: number, work: () => Promise<T>): Promise<T> {
  const performanceNow = performance.now() + offsetMs;
  const dateNow = Date.now() + offsetMs;
  const savedDateNow = Date.now;
  Object.defineProperty(performance, 'now', { value: () => performanceNow, configurable: true, writable: true });
  Date.now = () => dateNow;
  try {
    return await work();
  } finally {
    delete (performance as { now?: unknown }).now; // the prototype's method again
    Date.now = savedDateNow;
  }
}

/** Commits that rewrite one entity, each conditional on the version before it, then 50 issued together. */
async function rewriteHotEntity(store: TableStore, t: TableInfo, rounds: number): Promise<void> {
  let previous = await commitOk(store, t, [put('p', 'hot', props({ n: edm.int32(0) }))]);
  for (let i = 1; i <= rounds; i++) {
    // Each write is conditional on the version before it, as an optimistic client's would be.
    const timestamp = await commitOk(store, t, [put('p', 'hot', props({ n: edm.int32(i) }), version(previous))]);
    assert.ok(timestamp > previous, `rewrite ${i}: ${timestamp} > ${previous}`);
    previous = timestamp;
  }
  assert.equal((await read(store, t, 'p', 'hot'))?.timestamp, previous, 'the stored version is the last one');
  const together = await Promise.all(Array.from({ length: 50 }, () => store.commit(t, [put('p', 'hot')])));
  const timestamps = together.map((result) => (result.ok ? result.timestamp : assert.fail(show(result))));
  assert.equal(new Set(timestamps).size, timestamps.length, 'writes issued together: no two share a timestamp');
  assert.ok(
    timestamps.every((timestamp) => timestamp > previous),
    'each later than the version before them',
  );
}

export const timestampCases: readonly ConformanceCase[] = [
  {
    name: 'commit timestamps are UTC wall-clock ticks',
    async run({ store, table }) {
      const t = await table();
      const before = BigInt(Date.now()) * ticksPerMs;
      const timestamp = await commitOk(store, t, [put('p', 'r')]);
      const after = BigInt(Date.now()) * ticksPerMs;
      assert.ok(
        timestamp >= before - clockSlackMs * ticksPerMs && timestamp <= after + clockSlackMs * ticksPerMs,
        `timestamp ${timestamp} near ${before}`,
      );
    },
  },
  {
    name: 'commit timestamps strictly increase from commit to commit (entities, partitions, tables, deletes)',
    async run({ store, table }) {
      const tables = [await table(), await table()];
      let previous = 0n;
      for (let i = 0; i < 60; i++) {
        const t = tables[i % 2]!;
        const write =
          i % 5 === 4 ? del(`p${(i - 4) % 3}`, `r${i - 4}`) : put(`p${i % 3}`, `r${i}`, props({ i: edm.int32(i) }));
        const timestamp = await commitOk(store, t, [write]);
        assert.ok(timestamp > previous, `commit ${i}: ${timestamp} > ${previous}`);
        previous = timestamp;
      }
    },
  },
  {
    name: 'one entity rewritten in a tight loop gets a strictly greater version every time',
    async run({ store, table }) {
      await rewriteHotEntity(store, await table(), 100);
    },
  },
  {
    name: 'one entity rewritten within one clock tick, or after the clock went back, gets strictly greater versions',
    async run({ store, table }) {
      const t = await table();
      const before = await commitOk(store, t, [put('p', 'before')]);
      await withStoppedClock(0, () => rewriteHotEntity(store, t, 50));
      await withStoppedClock(-hourMs, async () => {
        const timestamp = await commitOk(store, t, [put('p', 'hot')]);
        assert.ok(timestamp > before, 'a clock an hour behind gives no earlier version');
        await rewriteHotEntity(store, t, 20);
      });
    },
  },
  {
    name: 'writes of one entity issued together get distinct versions, the stored one the greatest',
    async run({ store, table }) {
      const t = await table();
      await commitOk(store, t, [put('p', 'hot')]);
      // Issued without waiting: an engine that groups commits applies many within one clock tick.
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => store.commit(t, [put('p', 'hot', props({ n: edm.int32(i) }))])),
      );
      const timestamps = results.map((result) => {
        assert.ok(result.ok);
        return result.timestamp;
      });
      assert.equal(new Set(timestamps).size, timestamps.length, 'no two commits share a timestamp');
      const greatest = timestamps.reduce((a, b) => (a > b ? a : b));
      const stored = await read(store, t, 'p', 'hot');
      assert.equal(stored?.timestamp, greatest, 'the entity holds the latest version');
      const n = stored.properties.get('n');
      assert.deepEqual(n, edm.int32(timestamps.indexOf(greatest)), 'and the properties of the commit that wrote it');
    },
  },
  {
    name: 'a batch shares one timestamp, later than every previous version of its entities',
    async run({ store, table }) {
      const t = await table();
      const first = await commitOk(store, t, [put('p', 'a'), put('p', 'b')]);
      const second = await commitOk(store, t, [put('p', 'b', props({ v: edm.int32(2) }))]);
      const batch = await commitOk(store, t, [
        put('p', 'a', props(), version(first)),
        put('p', 'b', props(), version(second)),
        put('p', 'c'),
      ]);
      assert.ok(batch > second && second > first, 'versions increase');
      for (const rowKey of ['a', 'b', 'c'])
        assert.equal((await read(store, t, 'p', rowKey))?.timestamp, batch, `${rowKey} carries the batch timestamp`);
    },
  },
];
