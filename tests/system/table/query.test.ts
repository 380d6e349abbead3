// Query Entities (Azure REST: querying-tables-and-entities, query-timeout-and-pagination,
// understanding-the-table-service-data-model): key order, key filters, $top, $select,
// continuation headers, SDK paging, and the query-plan diagnostic header.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TableClient } from '@azure/data-tables';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { assertError, describeResponse, devPath, send, type RawResponse } from '../../helpers/http.js';
import { inParallel, tableClient, uniqueTableName } from '../../helpers/sdk.js';

type Key = [pk: string, rk: string];

/**
 * Key order: ordinal over UTF-16 code units, PartitionKey first (Azure REST:
 * understanding-the-table-service-data-model).
 */
function compareKeys(a: Key, b: Key): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

function keysOf(res: RawResponse): Key[] {
  return res.json().value.map((e: { PartitionKey: string; RowKey: string }) => [e.PartitionKey, e.RowKey]);
}

interface Page {
  keys: Key[];
  nextPk: string | undefined;
  nextRk: string | undefined;
}

describe('query entities', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true });
  });
  after(async () => {
    await server?.stop();
  });

  async function query(table: string, params: Record<string, string> = {}): Promise<RawResponse> {
    const qs = Object.entries(params)
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join('&');
    return send(server.port, { method: 'GET', path: devPath(`${table}()${qs ? `?${qs}` : ''}`) });
  }

  async function page(table: string, params: Record<string, string>): Promise<Page> {
    const res = await query(table, params);
    assert.equal(res.status, 200, describeResponse(res));
    const nextPk = res.headers['x-ms-continuation-nextpartitionkey'] as string | undefined;
    const nextRk = res.headers['x-ms-continuation-nextrowkey'] as string | undefined;
    assert.notEqual(nextPk, '', 'continuation headers are absent, never empty');
    assert.notEqual(nextRk, '', 'continuation headers are absent, never empty');
    if (nextRk !== undefined) assert.ok(nextPk !== undefined, 'NextRowKey never comes without NextPartitionKey');
    return { keys: keysOf(res), nextPk, nextRk };
  }

  /** Follows continuation headers to the end; returns every page. */
  async function allPages(table: string, params: Record<string, string>, maxPages = 100): Promise<Page[]> {
    const pages: Page[] = [];
    let next: Record<string, string> = {};
    for (;;) {
      const p = await page(table, { ...params, ...next });
      pages.push(p);
      if (p.nextPk === undefined) return pages;
      assert.ok(pages.length < maxPages, 'too many pages');
      next = { NextPartitionKey: p.nextPk, ...(p.nextRk !== undefined ? { NextRowKey: p.nextRk } : {}) };
    }
  }

  describe('ordering and key filters', () => {
    // '10' < '2' and 'B' < 'a' ordinally; U+10000 (surrogates D800 DC00) sorts before U+E000 in UTF-16.
    const pks = ['p1', 'p10', 'p2', 'P0', '\uE000', '\u{10000}'];
    const rks = ['1', '10', '2', '9', 'a', 'B'];
    const all: Key[] = pks.flatMap((pk) => rks.map((rk): Key => [pk, rk]));
    const ordered = [...all].sort(compareKeys);
    let client: TableClient;
    let table: string;

    before(async () => {
      client = tableClient(server, uniqueTableName('order'));
      table = client.tableName;
      await client.createTable();
      const shuffled = [...all].sort(() => Math.random() - 0.5);
      await inParallel(shuffled, 8, ([pk, rk]) =>
        client.createEntity({ partitionKey: pk, rowKey: rk, n: Number.parseInt(rk, 10) || 0, other: 'o' }),
      );
    });

    test('no filter: the whole table in ordinal key order', async () => {
      const res = await query(table);
      assert.deepEqual(keysOf(res), ordered);
      assert.equal(res.headers['x-ms-continuation-nextpartitionkey'], undefined);
      const flat = keysOf(res).map(([pk, rk]) => `${pk}|${rk}`);
      assert.ok(flat.indexOf('p1|10') < flat.indexOf('p1|2'), "'10' sorts before '2'");
      assert.ok(flat.indexOf('p1|B') < flat.indexOf('p1|a'), "'B' sorts before 'a'");
      assert.ok(flat.indexOf('\u{10000}|1') < flat.indexOf('\uE000|1'), 'UTF-16 code-unit order above U+FFFF');
    });

    const cases: Array<[string, string, (k: Key) => boolean]> = [
      ['PartitionKey eq', "PartitionKey eq 'p1'", ([pk]) => pk === 'p1'],
      [
        'PartitionKey and RowKey eq',
        "PartitionKey eq 'p2' and RowKey eq '10'",
        ([pk, rk]) => pk === 'p2' && rk === '10',
      ],
      [
        'RowKey range in a partition',
        "PartitionKey eq 'p2' and RowKey ge '1' and RowKey lt '2'",
        ([pk, rk]) => pk === 'p2' && rk >= '1' && rk < '2',
      ],
      ['RowKey range, open end', "PartitionKey eq 'p10' and RowKey gt '9'", ([pk, rk]) => pk === 'p10' && rk > '9'],
      ['PartitionKey range', "PartitionKey ge 'p1' and PartitionKey lt 'p2'", ([pk]) => pk >= 'p1' && pk < 'p2'],
      ['PartitionKey range above the BMP', "PartitionKey gt 'p2'", ([pk]) => pk > 'p2'],
      ['RowKey only (table scan)', "RowKey eq '9'", ([, rk]) => rk === '9'],
      ['or across partitions', "PartitionKey eq 'p1' or PartitionKey eq 'P0'", ([pk]) => pk === 'p1' || pk === 'P0'],
      [
        'key range plus a property',
        "PartitionKey eq 'p1' and n gt 5",
        ([pk, rk]) => pk === 'p1' && (Number.parseInt(rk, 10) || 0) > 5,
      ],
      ['not', "not (PartitionKey lt 'p2')", ([pk]) => !(pk < 'p2')],
      ['nothing matches', "PartitionKey eq 'none'", () => false],
    ];
    for (const [label, filter, keep] of cases) {
      test(`$filter ${label}: ${filter}`, async () => {
        const res = await query(table, { $filter: filter });
        assert.equal(res.status, 200, describeResponse(res));
        assert.deepEqual(keysOf(res), ordered.filter(keep));
      });
    }

    test('$top pages with NextPartitionKey/NextRowKey; absent on the last page; nothing lost', async () => {
      const pages = await allPages(table, { $top: '5' });
      assert.deepEqual(
        pages.flatMap((p) => p.keys),
        ordered,
      );
      for (const p of pages.slice(0, -1)) assert.ok(p.keys.length <= 5);
      assert.equal(pages.at(-1)!.nextPk, undefined);
      assert.ok(pages.length >= Math.ceil(ordered.length / 5));
    });

    test('continuation keeps the filter', async () => {
      const pages = await allPages(table, { $filter: "PartitionKey eq 'p1' or PartitionKey eq 'p2'", $top: '4' });
      assert.deepEqual(
        pages.flatMap((p) => p.keys),
        ordered.filter(([pk]) => pk === 'p1' || pk === 'p2'),
      );
    });

    test('a page that ends exactly at the last entity does not need a continuation', async () => {
      const pages = await allPages(table, { $filter: "PartitionKey eq 'p1'", $top: '6' });
      assert.equal(pages.flatMap((p) => p.keys).length, 6);
      // Allowed to return one empty extra page, never more.
      assert.ok(pages.length <= 2, `pages: ${pages.length}`);
    });

    test('SDK listEntities().byPage({ maxPageSize }) walks every page in order', async () => {
      const pages: Key[][] = [];
      for await (const p of client.listEntities().byPage({ maxPageSize: 7 })) {
        pages.push(p.map((e): Key => [e.partitionKey!, e.rowKey!]));
      }
      assert.ok(pages.every((p) => p.length <= 7));
      assert.deepEqual(pages.flat(), ordered);
    });

    test('$top=1000 is allowed; $top=1001 → 400 InvalidInput', async () => {
      assert.equal((await query(table, { $top: '1000' })).status, 200);
      assertError(await query(table, { $top: '1001' }), 400, 'InvalidInput');
    });

    test('$select returns the listed properties, null for missing ones, no Timestamp', async () => {
      const res = await query(table, { $filter: "PartitionKey eq 'p1'", $select: 'n,missing' });
      assert.equal(res.status, 200, describeResponse(res));
      const entities = res.json().value as Array<Record<string, unknown>>;
      assert.equal(entities.length, 6);
      for (const e of entities) {
        assert.ok('n' in e, 'selected property present');
        assert.equal(e.missing, null, 'selected but missing → null');
        assert.ok(!('Timestamp' in e), 'Timestamp only when selected');
        assert.ok(!('other' in e), 'unselected property absent');
        assert.equal(typeof e['odata.etag'], 'string', 'odata.etag stays in minimal metadata');
      }
    });

    test('$select on a point read', async () => {
      const res = await send(server.port, {
        method: 'GET',
        path: devPath(`${table}(PartitionKey='p1',RowKey='9')?$select=${encodeURIComponent('n,RowKey')}`),
      });
      assert.equal(res.status, 200, describeResponse(res));
      const e = res.json();
      assert.equal(e.n, 9);
      assert.equal(e.RowKey, '9');
      assert.ok(!('other' in e) && !('Timestamp' in e));
    });

    test('x-cerulean-query-plan names the query class', async () => {
      const plan = async (filter?: string) =>
        String((await query(table, filter === undefined ? {} : { $filter: filter })).headers['x-cerulean-query-plan']);
      assert.match(await plan(), /table-scan/);
      assert.match(await plan("PartitionKey eq 'p1'"), /partition-scan/);
      assert.match(await plan("PartitionKey eq 'p1' and RowKey eq '2'"), /point/);
      assert.match(await plan("RowKey eq '2'"), /table-scan/);
    });

    test('an empty table answers an empty page without continuation', async () => {
      const empty = tableClient(server, uniqueTableName('empty'));
      await empty.createTable();
      const res = await query(empty.tableName);
      assert.deepEqual(res.json().value, []);
      assert.equal(res.headers['x-ms-continuation-nextpartitionkey'], undefined);
    });
  });

  test('2,500 entities paged with $top=100: no duplicates, no gaps, in order', async () => {
    const client = tableClient(server, uniqueTableName('many'));
    await client.createTable();
    const expected: Key[] = Array.from({ length: 2500 }, (_, i): Key => [`p${i % 7}`, String(i).padStart(5, '0')]).sort(
      compareKeys,
    );
    await inParallel(expected, 16, ([pk, rk]) => client.createEntity({ partitionKey: pk, rowKey: rk }));
    const pages = await allPages(client.tableName, { $top: '100' }, 200);
    for (const p of pages) assert.ok(p.keys.length <= 100, `page of ${p.keys.length}`);
    const got = pages.flatMap((p) => p.keys);
    assert.equal(new Set(got.map((k) => k.join('|'))).size, got.length, 'no duplicates');
    assert.deepEqual(got, expected);
    const sdkCount = await (async () => {
      let n = 0;
      for await (const _ of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'p3'" } })) n++;
      return n;
    })();
    assert.equal(sdkCount, expected.filter(([pk]) => pk === 'p3').length);
  });
});
