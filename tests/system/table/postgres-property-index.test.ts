// Automatic property indexes on PostgreSQL through the front door: two server processes over one
// database with a small --auto-index answer equality filters on a property of mixed types with the
// same pages and continuations before and after the index exists (x-cerulean-query-plan scanned=
// falls to the matches in both processes), see writes made after it through the other process,
// read a table deleted and created again correctly, and a process with --auto-index 0 builds none.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { onDatabase, createDatabase, dropDatabase, postgresUnavailable } from '../../helpers/postgres.js';
import { edm, fetchAllPages, insertEntities, keyText, type TestEntity, type TestValue } from '../../helpers/query.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const autoIndexRows = 300;
/** A background index build on a loaded machine: long, since only a build that never ends should fail. */
const buildWaitMs = 120_000;

const bucketValues: readonly (TestValue | undefined)[] = [
  edm.int32(7),
  edm.int64(7n),
  edm.double(7),
  edm.double(7.5),
  edm.string('7'),
  edm.boolean(true),
  undefined,
  edm.int64(2n ** 53n + 1n),
  edm.double(2 ** 53),
  edm.double(-0),
  edm.int32(0),
  edm.string('a\u0000b'),
  edm.double(NaN),
  edm.guid('00000000-0000-0000-0000-000000000007'),
  edm.int32(3),
];

function entities(partitions: number, rows: number): TestEntity[] {
  return Array.from({ length: partitions * rows }, (_, i) => {
    const value = bucketValues[i % bucketValues.length];
    return {
      partitionKey: `p${Math.floor(i / rows)}`,
      rowKey: `r${String(i % rows).padStart(3, '0')}`,
      properties: { ...(value === undefined ? {} : { Bucket: value }), Other: edm.int32(i % 3) },
    };
  });
}

const filters = [
  'Bucket eq 7',
  'Bucket eq 7L',
  'Bucket eq 7.0',
  "Bucket eq '7'",
  'Bucket eq true',
  'Bucket eq 0.0',
  'Bucket eq 9007199254740993L',
  'Bucket eq 9007199254740992.0',
  'Bucket eq 7 and Other eq 1',
  'Other eq 1 and Bucket eq 7',
  "PartitionKey eq 'p1' and Bucket eq 7",
];

/** Every page of a query, 7 entities at most each: the keys in order and the rows scanned. */
async function query(
  server: RunningServer,
  table: string,
  filter: string,
): Promise<{ keys: string[]; scanned: number }> {
  const pages = await fetchAllPages(server.port, table, { $filter: filter, $top: 7, $select: 'PartitionKey,RowKey' });
  return {
    keys: pages.flatMap((page) => page.keys.map(keyText)),
    scanned: pages.reduce((sum, page) => sum + page.plan.scanned, 0),
  };
}

/** Queries `Bucket eq 7` through `server` until it scans only the matches (its process uses the index). */
async function untilIndexed(server: RunningServer, table: string): Promise<void> {
  const deadline = Date.now() + buildWaitMs;
  for (;;) {
    const { keys, scanned } = await query(server, table, 'Bucket eq 7');
    if (scanned === keys.length) return;
    assert.ok(
      Date.now() < deadline,
      `an index serves Bucket eq 7 within ${buildWaitMs} ms (scanned ${scanned}, returned ${keys.length})`,
    );
    await sleep(50);
  }
}

async function indexesOf(database: string, table: string): Promise<string[]> {
  return onDatabase(database, async (client) => {
    const { rows } = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid ` +
        `WHERE i.indrelid = 'cerulean.entities'::regclass AND c.relname LIKE 'ci' || (SELECT id FROM cerulean.tables WHERE name_lower = $1) || '\\_%'`,
      [table.toLowerCase()],
    );
    return rows.map((row) => row.name);
  });
}

describe('automatic property indexes on PostgreSQL, two processes', { skip: postgresUnavailable() }, () => {
  let database: string;
  let a: RunningServer;
  let b: RunningServer;
  before(async () => {
    database = await createDatabase();
    const args = ['--log-level', 'silent', '--auto-index', String(autoIndexRows)];
    [a, b] = await Promise.all([startServer({ database, args }), startServer({ database, args })]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    if (database !== undefined) await dropDatabase(database);
  });

  test('same pages before and after the index, in both processes; writes, deletes and a re-created table after it', async () => {
    const table = uniqueTableName('indexed');
    await tableClient(a, table).createTable();
    await insertEntities(tableClient(a, table), entities(4, 100));
    const before = new Map<string, string[]>();
    for (const filter of filters) before.set(filter, (await query(a, table, filter)).keys);
    assert.equal(before.get('Bucket eq 7')!.length, 81, 'Int32, Int64 and Double 7 match');

    await untilIndexed(a, table);
    assert.ok((await indexesOf(database, table)).some((name) => name.endsWith('_Bucket')));
    await untilIndexed(b, table);
    for (const server of [a, b]) {
      for (const filter of filters)
        assert.deepEqual(
          (await query(server, table, filter)).keys,
          before.get(filter),
          `${filter} on port ${server.port}`,
        );
    }

    // Writes through b after the index, read through a.
    const client = tableClient(b, table);
    await client.updateEntity({ partitionKey: 'p0', rowKey: 'r000', Bucket: 8 }, 'Merge');
    await client.updateEntity({ partitionKey: 'p0', rowKey: 'r003', Bucket: { value: '7', type: 'Int64' } }, 'Merge');
    await client.deleteEntity('p0', 'r001');
    await client.upsertEntity({ partitionKey: 'p0', rowKey: 'r004', Bucket: 7.0 }, 'Replace');
    await client.submitTransaction([
      ['create', { partitionKey: 'p9', rowKey: 'a', Bucket: 7 }],
      ['create', { partitionKey: 'p9', rowKey: 'b', Bucket: 6 }],
    ]);
    const expected = before
      .get('Bucket eq 7')!
      .filter((key) => key !== keyText(['p0', 'r000']) && key !== keyText(['p0', 'r001']))
      .concat([keyText(['p0', 'r003']), keyText(['p0', 'r004']), keyText(['p9', 'a'])])
      .sort();
    const afterWrites = await query(a, table, 'Bucket eq 7');
    assert.deepEqual([...afterWrites.keys].sort(), expected);
    assert.equal(afterWrites.scanned, afterWrites.keys.length, 'still read from the index');

    // Deleted and created again through b; a, which knows the old table's index, reads the new table.
    await tableClient(b, table).deleteTable();
    await tableClient(b, table).createTable();
    await tableClient(b, table).createEntity({ partitionKey: 'q', rowKey: '1', Bucket: 7 });
    await tableClient(b, table).createEntity({ partitionKey: 'q', rowKey: '2', Bucket: 8 });
    assert.deepEqual((await query(a, table, 'Bucket eq 7')).keys, [keyText(['q', '1'])]);
  });

  test('a process started with --auto-index 0 builds no index', async () => {
    const never = await startServer({ database, args: ['--log-level', 'silent', '--auto-index', '0'] });
    const table = uniqueTableName('never');
    try {
      await tableClient(never, table).createTable();
      await insertEntities(tableClient(never, table), entities(1, 400));
      for (let round = 0; round < 3; round++) assert.equal((await query(never, table, 'Bucket eq 7')).scanned, 400);
    } finally {
      await never.stop();
    }
    // Its table could only have been indexed by the stopped process (a and b never scanned it).
    assert.deepEqual(await indexesOf(database, table), []);
  });
});
