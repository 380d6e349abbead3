// The PostgreSQL engine's automatic property indexes (src/storage/postgres/property-indexes.ts) on
// a real PostgreSQL, seen from the TableStore and the catalog: once a table's scans have examined
// autoIndexRows rows for a property, an index appears and equality steps examine only the matches,
// with the same results at every window and page size; a second store over the database uses it,
// one opened before learns it when its own demand fires or when it reads the catalog again (which
// also forgets an index dropped by hand); a table deleted and created again by
// another store is read correctly; a dead build is dropped and built again; a table gets at most
// indexesPerTableMax indexes; autoIndexRows 0 builds none.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EdmValue } from '../../src/domain/edm.js';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { indexesPerTableMax } from '../../src/storage/property-index.js';
import type { PropertyCondition, TableStore, TableInfo, Write } from '../../src/storage/table-store.js';
import { createDatabase, dropDatabase, onDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { satisfies } from './conformance/random-values.js';
import { edm, keyText, props, walk } from './conformance/support.js';

const account = 'devstoreaccount1';
const autoIndexRows = 100;
/** Bounds the wait for a background build: generous, as the machine may be busy. */
/** A background index build on a loaded machine: long, since only a build that never ends should fail. */
const buildWaitMs = 120_000;

function put(partitionKey: string, rowKey: string, properties: Record<string, EdmValue>): Write {
  return { partitionKey, rowKey, condition: { kind: 'none' }, action: { kind: 'put', properties: props(properties) } };
}

const eq = (
  property: string,
  value: number | bigint | string | boolean,
): Extract<PropertyCondition, { property: string }> =>
  typeof value === 'string'
    ? { kind: 'string', property, operator: 'eq', value }
    : typeof value === 'boolean'
      ? { kind: 'boolean', property, operator: 'eq', value }
      : { kind: 'number', property, operator: 'eq', value };

/** Values of `Bucket` in turn: every type, the edges of exact numbers, escapes. */
const bucketValues: readonly (EdmValue | undefined)[] = [
  edm.int32(7),
  edm.int64(7n),
  edm.double(7),
  edm.double(7.5),
  edm.string('7'),
  edm.boolean(true),
  undefined,
  edm.int64(2n ** 53n),
  edm.int64(2n ** 53n + 1n),
  edm.double(2 ** 53),
  edm.double(-0),
  edm.int32(0),
  edm.string('a\u0000b'),
  edm.string('lone \udc00'),
  edm.double(NaN),
  edm.boolean(false),
  edm.int32(3),
];

/** 3 partitions x 60 rows, `Bucket` cycling through bucketValues, `Other` 0..2. */
function seedWrites(): Write[][] {
  return [0, 1, 2].map((p) =>
    Array.from({ length: 60 }, (_, r) => {
      const value = bucketValues[(r + p) % bucketValues.length];
      return put(`p${p}`, `r${String(r).padStart(3, '0')}`, {
        ...(value === undefined ? {} : { Bucket: value }),
        Other: edm.int32(r % 3),
      });
    }),
  );
}

const literals: readonly PropertyCondition[] = [
  7,
  7n,
  7.5,
  '7',
  true,
  false,
  0,
  -0,
  2 ** 53,
  2n ** 53n + 1n,
  3,
  'a',
  4,
].map((value) => eq('Bucket', value));

/** The keys a full walk keeps that satisfy every condition, and the rows it examined. */
async function matches(
  store: TableStore,
  table: TableInfo,
  conditions: PropertyCondition[],
  limit = 1000,
): Promise<{ keys: string[]; examined: number }> {
  const walked = await walk(store, table, {}, limit, conditions);
  return {
    keys: walked.entities.filter((row) => conditions.every((c) => satisfies(row, c))).map(keyText),
    examined: walked.examined,
  };
}

/** Scans with `condition` until the steps examine only its matches (the index is in use). */
async function untilIndexed(
  store: TableStore,
  table: TableInfo,
  condition: Extract<PropertyCondition, { property: string }>,
): Promise<void> {
  const deadline = Date.now() + buildWaitMs;
  for (;;) {
    const { keys, examined } = await matches(store, table, [condition]);
    if (examined === keys.length) return;
    assert.ok(
      Date.now() < deadline,
      `an index serves ${condition.property} within ${buildWaitMs} ms (examined ${examined}, matches ${keys.length})`,
    );
    await sleep(50);
  }
}

async function catalogIndexes(url: string): Promise<{ name: string; valid: boolean }[]> {
  return onDatabase(url, async (client) => {
    const { rows } = await client.query<{ name: string; valid: boolean }>(
      `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid ` +
        `WHERE i.indrelid = 'cerulean.entities'::regclass AND c.relname LIKE 'ci%' ORDER BY c.relname`,
    );
    return rows;
  });
}

async function tableId(url: string, name: string): Promise<string> {
  return onDatabase(
    url,
    async (client) =>
      (await client.query<{ id: string }>('SELECT id FROM cerulean.tables WHERE name_lower = $1', [name.toLowerCase()]))
        .rows[0]!.id,
  );
}

describe('PostgreSQL automatic property indexes', { skip: postgresUnavailable() }, () => {
  let url: string;
  const stores: PostgresStore[] = [];
  const open = async (
    options: { autoIndexRows?: number; stepExamineMax?: number; indexCatalogRefreshMs?: number } = {},
  ) => {
    const store = await PostgresStore.open({ url, autoIndexRows, ...options });
    stores.push(store);
    return store;
  };
  before(async () => {
    url = await createDatabase();
  });
  after(async () => {
    await Promise.all(stores.map((store) => store.close()));
    if (url !== undefined) await dropDatabase(url);
  });

  async function seededTable(store: TableStore, name: string): Promise<TableInfo> {
    assert.equal(await store.createTable(account, name), 'created');
    const table = { account, name };
    for (const writes of seedWrites()) assert.ok((await store.commit(table, writes)).ok);
    return table;
  }

  test('an index appears once scans earn it; results are the same at every window and page; later writes are seen', async () => {
    const store = await open({ stepExamineMax: 7 });
    const table = await seededTable(store, 'Mixed');
    const conditionSets = [
      ...literals.map((c) => [c]),
      ...literals.map((c) => [eq('Other', 1), c]),
      [eq('Bucket', 7), eq('Other', 9)],
    ];
    const before = new Map<string, string[]>();
    for (const conditions of conditionSets) {
      for (const limit of [1, 4, 1000])
        before.set(
          `${JSON.stringify(conditions, bigints)} ${limit}`,
          (await matches(store, table, conditions, limit)).keys,
        );
    }
    await untilIndexed(store, table, eq('Bucket', 7));
    const id = await tableId(url, 'Mixed');
    assert.deepEqual(
      (await catalogIndexes(url)).filter((index) => index.name === `ci${id}_Bucket`),
      [{ name: `ci${id}_Bucket`, valid: true }],
    );
    for (const conditions of conditionSets) {
      for (const limit of [1, 4, 1000]) {
        const key = `${JSON.stringify(conditions, bigints)} ${limit}`;
        assert.deepEqual((await matches(store, table, conditions, limit)).keys, before.get(key), key);
      }
    }
    // The steps of an indexed equality examine the rows the index holds for it, nothing else.
    const sevens = await matches(store, table, [eq('Bucket', 7)]);
    assert.equal(sevens.keys.length, 33);
    assert.equal(sevens.examined, sevens.keys.length);

    // Writes after the index: a value changed out of and into 7 (replace, SQL merge, batch), a delete.
    assert.ok((await store.commit(table, [put('p0', 'r000', { Bucket: edm.string('no') })])).ok);
    assert.ok(
      (
        await store.commit(table, [
          {
            partitionKey: 'p0',
            rowKey: 'r003',
            condition: { kind: 'none' },
            action: { kind: 'merge', properties: props({ Bucket: edm.int64(7n) }) },
          },
        ])
      ).ok,
    );
    assert.ok(
      (await store.commit(table, [put('p9', 'a', { Bucket: edm.double(7) }), put('p9', 'b', { Bucket: edm.int32(8) })]))
        .ok,
    );
    assert.ok(
      (
        await store.commit(table, [
          { partitionKey: 'p1', rowKey: 'r016', condition: { kind: 'none' }, action: { kind: 'delete' } },
        ])
      ).ok,
    );
    const after = (await matches(store, table, [eq('Bucket', 7)], 3)).keys;
    const expected = sevens.keys.filter(
      (key) =>
        key !== keyText({ partitionKey: 'p0', rowKey: 'r000' }) &&
        key !== keyText({ partitionKey: 'p1', rowKey: 'r016' }),
    );
    expected.push(keyText({ partitionKey: 'p0', rowKey: 'r003' }), keyText({ partitionKey: 'p9', rowKey: 'a' }));
    assert.deepEqual([...after].sort(), [...expected].sort());
  });

  test('another store uses the index at once; one opened before learns it when its own demand fires', async () => {
    const earlier = await open();
    const builder = await open();
    const table = await seededTable(builder, 'Shared');
    await untilIndexed(builder, table, eq('Bucket', 7));
    const later = await open();
    const { keys, examined } = await matches(later, table, [eq('Bucket', 7)]);
    assert.equal(examined, keys.length, 'a store opened after the build reads the index from its first step');
    await untilIndexed(earlier, table, eq('Bucket', 7));
    assert.deepEqual((await matches(earlier, table, [eq('Bucket', 7)])).keys, keys);
  });

  test('the catalog read again: an index another store built is used, one dropped by hand forgotten', async () => {
    const watcher = await open({ autoIndexRows: 1_000_000_000, indexCatalogRefreshMs: 0 });
    const builder = await open();
    const table = await seededTable(builder, 'Watched');
    const expected = await matches(watcher, table, [eq('Bucket', 7)]);
    await untilIndexed(builder, table, eq('Bucket', 7));
    await untilIndexed(watcher, table, eq('Bucket', 7)); // its own demand never fires
    const id = await tableId(url, 'Watched');
    await onDatabase(url, (client) => client.query(`DROP INDEX cerulean."ci${id}_Bucket"`));
    const deadline = Date.now() + buildWaitMs;
    for (;;) {
      const now = await matches(watcher, table, [eq('Bucket', 7)]);
      assert.deepEqual(now.keys, expected.keys, 'the same answer with the index, without it, and in between');
      if (now.examined === expected.examined) break;
      assert.ok(Date.now() < deadline, 'the dropped index is forgotten');
      await sleep(50);
    }
  });

  test('a table deleted and created again by another store is read correctly; its indexes go with it', async () => {
    const reader = await open();
    const other = await open();
    const table = await seededTable(reader, 'Again');
    await untilIndexed(reader, table, eq('Bucket', 7));
    const oldId = await tableId(url, 'Again');
    assert.ok(await other.deleteTable(account, 'Again'));
    assert.equal(await other.createTable(account, 'Again'), 'created');
    assert.ok(
      (await other.commit(table, [put('q', '1', { Bucket: edm.int32(7) }), put('q', '2', { Bucket: edm.int32(8) })]))
        .ok,
    );
    assert.notEqual(await tableId(url, 'Again'), oldId, 'a table created again gets a new id');
    assert.deepEqual((await matches(reader, table, [eq('Bucket', 7)])).keys, [
      keyText({ partitionKey: 'q', rowKey: '1' }),
    ]);
    // The drop runs in the background of the deleting store: closing it waits for it.
    await other.close();
    assert.ok(
      !(await catalogIndexes(url)).some((index) => index.name.startsWith(`ci${oldId}_`)),
      'the deleted table has no index left',
    );
  });

  test('an INVALID index (a dead build) is never used, and is dropped and built again', async () => {
    const store = await open();
    const table = await seededTable(store, 'Dead');
    const id = await tableId(url, 'Dead');
    // A unique build over duplicate values fails and leaves an INVALID index of that name.
    await onDatabase(url, (client) =>
      client
        .query(
          `CREATE UNIQUE INDEX CONCURRENTLY "ci${id}_Bucket" ON cerulean.entities ((props -> 'Other')) WHERE table_id = ${id}`,
        )
        .catch(() => undefined),
    );
    assert.deepEqual(await catalogIndexes(url).then((rows) => rows.filter((row) => row.name === `ci${id}_Bucket`)), [
      { name: `ci${id}_Bucket`, valid: false },
    ]);
    const reopened = await open();
    const before = await matches(reopened, table, [eq('Bucket', 7)]);
    assert.equal(before.examined, 180, 'the invalid index is not read');
    await untilIndexed(reopened, table, eq('Bucket', 7));
    assert.deepEqual((await matches(reopened, table, [eq('Bucket', 7)])).keys, before.keys);
    assert.deepEqual(await catalogIndexes(url).then((rows) => rows.filter((row) => row.name === `ci${id}_Bucket`)), [
      { name: `ci${id}_Bucket`, valid: true },
    ]);
  });

  test(`a table gets at most ${indexesPerTableMax} indexes, whichever stores ask; long names fit`, async () => {
    const [one, two] = [await open(), await open()];
    assert.equal(await one.createTable(account, 'Many'), 'created');
    const table = { account, name: 'Many' };
    const names = ['A', 'B', 'C', 'D', 'E', 'F', `L${'o'.repeat(61)}ng`];
    const rows = Array.from({ length: 60 }, (_, r) =>
      put('p', String(r).padStart(3, '0'), Object.fromEntries(names.map((name) => [name, edm.int32(r % 5)]))),
    );
    assert.ok((await one.commit(table, rows)).ok);
    // Each store's demand fires for every name (two scans of 60 rows each).
    for (const store of [one, two, one, two]) for (const name of names) await matches(store, table, [eq(name, 1)]);
    const id = await tableId(url, 'Many');
    const ours = async () => (await catalogIndexes(url)).filter((index) => index.name.startsWith(`ci${id}_`));
    const deadline = Date.now() + buildWaitMs;
    while ((await ours()).filter((index) => index.valid).length < indexesPerTableMax) {
      assert.ok(Date.now() < deadline, `${indexesPerTableMax} indexes built within ${buildWaitMs} ms`);
      await sleep(50);
    }
    // Builds of the other names find the table's share taken (under the lock) and build nothing.
    await one.close();
    await two.close();
    const indexes = await ours();
    assert.equal(indexes.length, indexesPerTableMax, JSON.stringify(indexes));
    assert.ok(indexes.every((index) => index.valid && index.name.length <= 63));
  });

  test('autoIndexRows 0 never builds', async () => {
    const store = await open({ autoIndexRows: 0 });
    const table = await seededTable(store, 'Never');
    for (let round = 0; round < 5; round++) await matches(store, table, [eq('Bucket', 7)]);
    await store.close();
    const id = await tableId(url, 'Never');
    assert.deepEqual(
      (await catalogIndexes(url)).filter((index) => index.name.startsWith(`ci${id}_`)),
      [],
    );
  });
});

function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${value}n` : value;
}
