// Honest paging over 12,000 entities (Azure REST: query-timeout-and-pagination): pages end at $top or when the data is
// exhausted, continuations name the first entity not yet returned, nothing is lost or repeated,
// the headers are absent exactly on the last page, and no page reads rows an earlier page read
// (the sum of scanned= over all pages stays within the planned ranges plus one look-ahead a page).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TableClient } from '@azure/data-tables';
import { startServer, storeSetups, type RunningServer } from '../../helpers/server.js';
import { assertError } from '../../helpers/http.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import {
  compareKeys,
  edm,
  fetchAllPages,
  fetchEntityPage,
  insertEntities,
  keyOf,
  keyText,
  queryEntities,
  type EntityPage,
  type Key,
  type TestEntity,
} from '../../helpers/query.js';

/** Partition sizes summing to 12,000; partitions 9…12 hold no `sparse` matches at all. */
const partitionSizes = [1, 2, 3, 7, 50, 99, 100, 101, 500, 999, 1000, 1001, 1500, 2137, 4500];
const emptyRegion = new Set([9, 10, 11, 12]);
const partitionKey = (index: number) => `p${String(index).padStart(2, '0')}`;

function buildEntities(): TestEntity[] {
  const entities: TestEntity[] = [];
  let seq = 0;
  partitionSizes.forEach((size, index) => {
    for (let n = 0; n < size; n++, seq++) {
      // Unpadded RowKeys: ordinal order puts '10' before '2' (Azure REST: understanding-the-table-service-data-model).
      const sparse = (seq % 397 === 0 || seq === 11_999) && !emptyRegion.has(index);
      entities.push({
        partitionKey: partitionKey(index),
        rowKey: String(n),
        properties: { seq: edm.int32(seq), sparse: edm.int32(sparse ? 1 : 0) },
      });
    }
  });
  return entities.sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
}

const entities = buildEntities();
const isSparse = (e: TestEntity) => e.properties.sparse!.value === 1;

interface Scenario {
  filter: string | undefined;
  /** Rows inside the planned key ranges (what a page may read). */
  inRanges: (e: TestEntity) => boolean;
  matches: (e: TestEntity) => boolean;
  /** Key-only filters: the server can know exactly whether more results follow. */
  keyOnly: boolean;
  tops: number[];
}

const all = () => true;
const pkIn = (low: number, high: number) => (e: TestEntity) =>
  e.partitionKey >= partitionKey(low) && e.partitionKey <= partitionKey(high);

const scenarios: Scenario[] = [
  { filter: undefined, inRanges: all, matches: all, keyOnly: true, tops: [1000, 100] },
  { filter: "PartitionKey eq 'p13'", inRanges: pkIn(13, 13), matches: pkIn(13, 13), keyOnly: true, tops: [7] },
  {
    filter: "PartitionKey ge 'p03' and PartitionKey lt 'p07'",
    inRanges: pkIn(3, 6),
    matches: pkIn(3, 6),
    keyOnly: true,
    tops: [1],
  },
  {
    filter: "PartitionKey eq 'p14' and RowKey ge '1' and RowKey lt '2'",
    inRanges: (e) => e.partitionKey === 'p14' && e.rowKey >= '1' && e.rowKey < '2',
    matches: (e) => e.partitionKey === 'p14' && e.rowKey >= '1' && e.rowKey < '2',
    keyOnly: true,
    tops: [100],
  },
  { filter: 'sparse eq 1', inRanges: all, matches: isSparse, keyOnly: false, tops: [1, 7, 100, 1000] },
  {
    filter: "PartitionKey ge 'p08' and sparse eq 1",
    inRanges: pkIn(8, 14),
    matches: (e) => pkIn(8, 14)(e) && isSparse(e),
    keyOnly: false,
    tops: [1],
  },
  {
    filter: "(PartitionKey eq 'p01' or PartitionKey eq 'p12') and seq ge 0",
    inRanges: (e) => e.partitionKey === 'p01' || e.partitionKey === 'p12',
    matches: (e) => e.partitionKey === 'p01' || e.partitionKey === 'p12',
    keyOnly: false,
    tops: [7],
  },
  { filter: 'seq lt 0', inRanges: all, matches: () => false, keyOnly: false, tops: [1] },
  {
    filter: "PartitionKey ge 'p09' and PartitionKey le 'p12' and sparse eq 1",
    inRanges: pkIn(9, 12),
    matches: () => false,
    keyOnly: false,
    tops: [5],
  },
];

/** The page-shape rules of Azure REST: query-timeout-and-pagination for one finished walk. */
function checkPages(pages: readonly EntityPage[], expected: readonly Key[], top: number, keyOnly: boolean): void {
  const got = pages.flatMap((p) => p.keys);
  assert.equal(new Set(got.map(keyText)).size, got.length, 'no duplicates');
  assert.deepEqual(got.map(keyText), expected.map(keyText), 'no gaps, key order');
  pages.forEach((page, i) => {
    const last = i === pages.length - 1;
    const where = `page ${i + 1}/${pages.length}`;
    assert.equal(
      page.continuation === undefined,
      last,
      `continuation headers absent exactly on the last page (${where})`,
    );
    // A page ends at $top results or when the data is exhausted.
    if (!last) assert.equal(page.keys.length, top, `page ${i + 1} is full`);
    else assert.ok(page.keys.length <= top);
    if (last) return;
    // The resume point lies after everything returned and at or before the next result.
    const resume = page.resumeKey!;
    const resumeKey: Key = [resume[0], resume[1] ?? ''];
    const lastKey = page.keys.at(-1);
    if (lastKey !== undefined)
      assert.ok(compareKeys(resumeKey, lastKey) > 0, `resume ${keyText(resumeKey)} after ${keyText(lastKey)}`);
    const nextFirst = pages.slice(i + 1).flatMap((p) => p.keys)[0];
    if (nextFirst !== undefined) {
      assert.ok(compareKeys(resumeKey, nextFirst) <= 0, `resume ${keyText(resumeKey)} not after ${keyText(nextFirst)}`);
    }
    if (keyOnly) assert.deepEqual(resumeKey, nextFirst, 'a key-only query resumes exactly at the next result');
  });
  const pagesExact = Math.max(1, Math.ceil(expected.length / top));
  if (keyOnly) assert.equal(pages.length, pagesExact, 'no unnecessary trailing page');
  else assert.ok(pages.length <= pagesExact + 1, `${pages.length} pages for ${expected.length} results at $top=${top}`);
}

for (const setup of storeSetups) {
  describe(`paging over 12,000 entities (${setup.label})`, () => {
    let server: RunningServer;
    let client: TableClient;
    let table: string;

    before(async () => {
      server = await startServer({ ...setup.options, args: ['--log-level', 'warn'] });
      client = tableClient(server, uniqueTableName('paging'));
      table = client.tableName;
      await client.createTable();
      await insertEntities(client, entities);
    });
    after(async () => {
      await server?.stop();
    });

    for (const scenario of scenarios) {
      for (const top of scenario.tops) {
        const expected = entities.filter(scenario.matches).map(keyOf);
        const rowsInRanges = entities.filter(scenario.inRanges).length;
        test(`$top=${top}, ${scenario.filter ?? 'no filter'}: ${expected.length} results, no page rescans`, async () => {
          const pages = await fetchAllPages(server.port, table, { $filter: scenario.filter, $top: top });
          checkPages(pages, expected, top, scenario.keyOnly);
          const scanned = pages.reduce((sum, p) => sum + p.plan.scanned, 0);
          assert.ok(
            scanned >= rowsInRanges && scanned <= rowsInRanges + pages.length,
            `scanned ${scanned} over ${pages.length} pages; ${rowsInRanges} rows in the planned ranges`,
          );
          if (scenario.keyOnly)
            for (const p of pages) assert.ok(p.plan.scanned <= top + 1, `a page of ${top} scanned ${p.plan.scanned}`);
        });
      }
    }

    describe('SDK listEntities().byPage({ maxPageSize })', () => {
      async function sdkPages(filter: string | undefined, maxPageSize: number): Promise<Key[][]> {
        const pages: Key[][] = [];
        const list = client.listEntities(filter === undefined ? {} : { queryOptions: { filter } });
        for await (const page of list.byPage({ maxPageSize }))
          pages.push(page.map((e): Key => [e.partitionKey!, e.rowKey!]));
        return pages;
      }

      test('the whole table in pages of 1000', async () => {
        const pages = await sdkPages(undefined, 1000);
        assert.equal(pages.length, 12);
        assert.ok(pages.every((p) => p.length === 1000));
        assert.deepEqual(pages.flat().map(keyText), entities.map(keyOf).map(keyText));
      });

      test('a sparse filter in pages of 7', async () => {
        const pages = await sdkPages('sparse eq 1', 7);
        assert.ok(pages.every((p) => p.length <= 7));
        assert.deepEqual(pages.flat().map(keyText), entities.filter(isSparse).map(keyOf).map(keyText));
      });
    });

    test('keys that need escaping or base64 "+" survive continuation tokens', async () => {
      // '\uFFFD' and '\u{1F600}' encode to base64 with '+'; '' gives an empty payload.
      const awkward = ['', ' ', "'", '%', '&', '+', '=', '\u00e9', '\u{1F600}', '\uFFFD'];
      const keyed = awkward.flatMap((pk) =>
        awkward.map((rk): TestEntity => ({ partitionKey: pk, rowKey: rk, properties: {} })),
      );
      const awkwardClient = tableClient(server, uniqueTableName('awkward'));
      await awkwardClient.createTable();
      await insertEntities(awkwardClient, keyed);
      const expected = keyed.map(keyOf).sort(compareKeys);
      for (const top of [1, 3]) {
        checkPages(await fetchAllPages(server.port, awkwardClient.tableName, { $top: top }), expected, top, true);
      }
    });

    describe('resuming', () => {
      // The first 150 entities end inside p05, which starts at entity 63.
      const p05First = entities.findIndex((e) => e.partitionKey === 'p05');

      test('NextPartitionKey without NextRowKey resumes at the start of that partition', async () => {
        const first = await fetchEntityPage(server.port, table, { $top: 150 });
        assert.equal(first.resumeKey?.[0], 'p05');
        const rest = await fetchAllPages(server.port, table, {
          $top: 1000,
          NextPartitionKey: first.continuation!.NextPartitionKey,
        });
        assert.deepEqual(rest.flatMap((p) => p.keys).map(keyText), entities.slice(p05First).map(keyOf).map(keyText));
      });

      test('an empty NextRowKey= is read as absent (recommendation)', async () => {
        const first = await fetchEntityPage(server.port, table, { $top: 150 });
        const { NextPartitionKey } = first.continuation!;
        const page = await fetchEntityPage(server.port, table, { $top: 5, NextPartitionKey, NextRowKey: '' });
        assert.deepEqual(
          page.keys.map(keyText),
          entities
            .slice(p05First, p05First + 5)
            .map(keyOf)
            .map(keyText),
        );
      });

      test('a resume point after the last entity gives an empty last page', async () => {
        const afterAll = `1!4!${Buffer.from('zzz').toString('base64')}`; // 'enp6', no padding
        const page = await fetchEntityPage(server.port, table, { NextPartitionKey: afterAll });
        assert.deepEqual(page.keys, []);
        assert.equal(page.continuation, undefined);
      });

      test('a garbled continuation token → 400 InvalidInput (unverified code)', async () => {
        const valid = (await fetchEntityPage(server.port, table, { $top: 150 })).continuation!;
        const garbled = ['garbage', '1!99!cDA1', '2!4!cDA1', '1!4!!!!!', '1!4!__4-', '1!x!cDA1', '1!4!cDA1!'];
        for (const token of garbled) {
          assertError(await queryEntities(server.port, table, { NextPartitionKey: token }), 400, 'InvalidInput');
          const garbledRowKey = { NextPartitionKey: valid.NextPartitionKey, NextRowKey: token };
          assertError(await queryEntities(server.port, table, garbledRowKey), 400, 'InvalidInput');
        }
      });
    });
  });
}
