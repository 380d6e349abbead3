// Automatic property indexes (src/storage/property-index.ts), through real servers and raw HTTP:
// once a table's scans have examined --auto-index rows for a property, equality filters on it
// read only their matches (x-cerulean-query-plan scanned=), and every answer stays exactly the
// answer of a server that never indexes (--auto-index 0): the same entities in the same order
// across pages, with values of every type in the indexed property, after writes, deletes and
// batches, after a restart, and after the table is deleted and created again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TableClient } from '@azure/data-tables';
import { testDatabaseUrl } from '../../helpers/postgres.js';
import { makeTempDir, removeDir, startServer, type RunningServer, type ServerOptions } from '../../helpers/server.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import {
  edm,
  fetchAllPages,
  insertEntities,
  type EntityPage,
  type TestEntity,
  type TestValue,
} from '../../helpers/query.js';
import { waitTimeoutMsDefault } from '../../helpers/wait.js';

const partitions = 30;
const rowsPerPartition = 100;
const autoIndexRows = 2_000;
const twoTo53 = 2 ** 53;

/** `v` cycles through every type an equality on it can meet; `w` is a plain Int32. */
function valueOf(i: number): TestValue | undefined {
  const k = i % 19; // coprime with the 12 types: every value meets every type
  switch (i % 12) {
    case 0:
      return edm.int32(k);
    case 1:
      return edm.int64(BigInt(k));
    case 2:
      return edm.double(k);
    case 3:
      return edm.double(k + 0.5);
    case 4:
      return edm.string(String(k));
    case 5:
      return edm.boolean(k % 2 === 0);
    case 6:
      return undefined;
    case 7:
      return edm.int64(BigInt(twoTo53) + BigInt(i % 3));
    case 8:
      return edm.double(twoTo53);
    case 9:
      return edm.string(`x${k}`);
    case 10:
      return edm.int32(-k);
    default:
      return edm.double(i % 24 === 11 ? Infinity : NaN);
  }
}

function entity(i: number, partitionKey = `p${String(Math.floor(i / rowsPerPartition)).padStart(3, '0')}`): TestEntity {
  const v = valueOf(i);
  return {
    partitionKey,
    rowKey: String(i).padStart(5, '0'),
    properties: { ...(v === undefined ? {} : { v }), w: edm.int32(i % 7) },
  };
}

const entities = Array.from({ length: partitions * rowsPerPartition }, (_, i) => entity(i));

/** Filters the index may serve (the first `eq` of each), and some it must leave to the scan. */
const indexable = [
  'v eq 7',
  'v eq 7L',
  'v eq 7.0',
  'v eq 7.5',
  "v eq '7'",
  'v eq true',
  'v eq -7',
  'v eq 9007199254740992L',
  "v eq 'x7'",
  'w eq 3 and v eq 7',
  "v eq 7 and PartitionKey ge 'p010' and PartitionKey lt 'p020'",
];
const scanned = ['v eq 9007199254740993L', 'v eq 7 or w eq 1', 'v gt 18'];

/** Every entity of every page, as the service wrote it but for the version each server gave it, in order. */
function answer(pages: readonly EntityPage[]): string[] {
  return pages.flatMap((page) =>
    page.entities.map(({ 'odata.etag': _etag, Timestamp: _timestamp, ...rest }) => JSON.stringify(rest)),
  );
}

const examined = (pages: readonly EntityPage[]) => pages.reduce((sum, page) => sum + page.plan.scanned, 0);

async function sameAnswers(
  indexed: RunningServer,
  reference: RunningServer,
  table: string,
  filters: readonly string[],
): Promise<Map<string, number>> {
  const rows = new Map<string, number>();
  for (const filter of filters) {
    for (const top of [1000, 7]) {
      const mine = await fetchAllPages(indexed.port, table, { $filter: filter, $top: top });
      const theirs = await fetchAllPages(reference.port, table, { $filter: filter, $top: top });
      assert.deepEqual(answer(mine), answer(theirs), `${filter}, $top=${top}: the same entities in the same order`);
      for (const page of mine.slice(0, -1))
        assert.equal(page.entities.length, top, `${filter}: every page but the last is full`);
      if (top === 1000) rows.set(filter, examined(mine));
    }
  }
  return rows;
}

/** Walks `filter` until its scan reads only its matches: the index is built in the background. */
async function awaitIndex(server: RunningServer, table: string, filter: string): Promise<void> {
  // A time limit, not a number of attempts: on a loaded machine the build takes many times longer.
  const deadline = Date.now() + waitTimeoutMsDefault;
  while (Date.now() < deadline) {
    const pages = await fetchAllPages(server.port, table, { $filter: filter });
    if (examined(pages) === pages.reduce((sum, page) => sum + page.entities.length, 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`${filter} never came from an index within ${waitTimeoutMsDefault} ms`);
}

const setups: { label: string; options: ServerOptions; restarts: boolean }[] = [
  { label: 'in-memory store', options: { inMemory: true }, restarts: false },
  { label: 'on-disk store', options: {}, restarts: true },
  // A fresh database each start (tests/helpers/postgres.ts): no restart on the same data here
  // (tests/storage/postgres-property-index.test.ts opens a store over a database already indexed).
  ...(testDatabaseUrl() === undefined
    ? []
    : [{ label: 'PostgreSQL store', options: { database: 'fresh' }, restarts: false }]),
];

for (const setup of setups) {
  describe(`automatic property indexes (${setup.label})`, () => {
    const location = setup.restarts ? makeTempDir() : undefined;
    const args = ['--log-level', 'warn', '--auto-index', String(autoIndexRows)];
    const startIndexed = () => startServer({ ...setup.options, ...(location === undefined ? {} : { location }), args });
    let indexed: RunningServer;
    let reference: RunningServer;
    const table = uniqueTableName('pix');
    const clients = () => [tableClient(indexed, table), tableClient(reference, table)] as const;
    const both = async (work: (client: TableClient) => Promise<unknown>) => {
      for (const client of clients()) await work(client);
    };

    before(async () => {
      indexed = await startIndexed();
      reference = await startServer({ inMemory: true, args: ['--log-level', 'warn', '--auto-index', '0'] });
      await both(async (client) => {
        await client.createTable();
        await insertEntities(client, entities);
      });
    });
    after(async () => {
      await indexed?.stop();
      await reference?.stop();
      if (location !== undefined) removeDir(location);
    });

    test('before any index: the same answers, every row examined', async () => {
      const rows = await sameAnswers(indexed, reference, table, [...indexable, ...scanned]);
      assert.equal(rows.get('v gt 18'), entities.length, 'a table scan examines every row');
    });

    test('once the scans have examined enough rows, equalities read only their matches', async () => {
      await awaitIndex(indexed, table, 'v eq 7');
      const rows = await sameAnswers(indexed, reference, table, [...indexable, ...scanned]);
      for (const filter of indexable)
        assert.ok(rows.get(filter)! < entities.length / 10, `${filter} read ${rows.get(filter)} rows`);
      for (const filter of scanned)
        assert.ok(rows.get(filter)! >= entities.length / 2, `${filter} is not an indexed equality`);
      // Every row of `v eq 7` from the index is a match: Int32, Int64 and Double 7.
      const pages = await fetchAllPages(indexed.port, table, { $filter: 'v eq 7' });
      assert.ok(pages.flatMap((p) => p.entities).length > 0);
      assert.equal(examined(pages), pages.flatMap((p) => p.entities).length);
      const unindexed = await fetchAllPages(reference.port, table, { $filter: 'v eq 7' });
      assert.equal(examined(unindexed), entities.length, '--auto-index 0 never indexes');
    });

    test('writes, deletes and batches after the index are seen by it', async () => {
      await both(async (client) => {
        for (let i = 0; i < 60; i++) {
          const changed = entity(i * 37);
          const v = i % 3 === 0 ? edm.int32(7) : i % 3 === 1 ? edm.string('7') : edm.int64(7n);
          await client.upsertEntity(
            { partitionKey: changed.partitionKey, rowKey: changed.rowKey, v: sdkValue(v), w: 3 },
            'Replace',
          );
        }
        for (let i = 0; i < 40; i++) {
          const gone = entity(i * 53 + 1);
          await client.deleteEntity(gone.partitionKey, gone.rowKey);
        }
        // A new partition, in one change set.
        await insertEntities(
          client,
          Array.from({ length: 100 }, (_, i) => entity(i, 'p999')),
        );
        await client.updateEntity({ partitionKey: 'p999', rowKey: '00007', v: 8 }, 'Merge');
      });
      await sameAnswers(indexed, reference, table, indexable);
    });

    if (setup.restarts) {
      test('the index survives a restart', async () => {
        await indexed.stop();
        indexed = await startIndexed();
        const pages = await fetchAllPages(indexed.port, table, { $filter: 'v eq 7' });
        assert.equal(examined(pages), pages.flatMap((p) => p.entities).length, 'read from the index at once');
        await sameAnswers(indexed, reference, table, indexable);
      });
    }

    test('a table deleted and created again starts without its indexes', async () => {
      await both(async (client) => {
        await client.deleteTable();
        await client.createTable();
        await insertEntities(client, entities.slice(0, 500));
      });
      const pages = await fetchAllPages(indexed.port, table, { $filter: 'v eq 7' });
      assert.equal(examined(pages), 500, 'the new table is scanned');
      await sameAnswers(indexed, reference, table, ['v eq 7', "v eq '7'"]);
    });
  });
}

/** A value as the SDK sends it. */
function sdkValue(value: TestValue): unknown {
  switch (value.type) {
    case 'Edm.Int64':
      return { type: 'Int64', value: value.value.toString() };
    case 'Edm.Int32':
      return { type: 'Int32', value: value.value };
    default:
      return value.value;
  }
}
