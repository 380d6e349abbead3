// The planner through the real server (docs/architecture.md#queries): for each query class, the plan header names
// the class AND its scanned= count proves that only the planned key ranges were read. The table
// has partitions of known, different sizes, so a table scan cannot pass for a partition scan.
// Also Query Tables with $filter on TableName (Azure REST: querying-tables-and-entities, query-timeout-and-pagination).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { assertError, describeResponse, devPath, send } from '../../helpers/http.js';
import { serviceClient, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import {
  edm,
  fetchAllPages,
  fetchEntityPage,
  insertEntities,
  queryEntities,
  queryString,
  type TestEntity,
} from '../../helpers/query.js';

/** Partition sizes; RowKeys r000, r001, …; `n` is the index inside the partition. */
const partitionSizes: Readonly<Record<string, number>> = { a: 30, b: 20, c: 50, d: 100 };
const tableSize = Object.values(partitionSizes).reduce((sum, size) => sum + size, 0);

function partitionEntities(sizes: Readonly<Record<string, number>>, extra: string): TestEntity[] {
  return Object.entries(sizes).flatMap(([pk, size]) =>
    Array.from({ length: size }, (_, n) => ({
      partitionKey: pk,
      rowKey: `r${String(n).padStart(3, '0')}`,
      properties: { n: edm.int32(n), extra: edm.string(extra) },
    })),
  );
}

interface PlanCase {
  filter: string | undefined;
  queryClass: string;
  /** Rows in the planned ranges; scanned may exceed it by one look-ahead row. */
  rowsInRanges: number;
  returned: number;
}

const planCases: ReadonlyArray<[string, PlanCase]> = [
  [
    'point: PK eq and RK eq',
    { filter: "PartitionKey eq 'c' and RowKey eq 'r010'", queryClass: 'point', rowsInRanges: 1, returned: 1 },
  ],
  [
    'point, key absent',
    { filter: "PartitionKey eq 'c' and RowKey eq 'zzz'", queryClass: 'point', rowsInRanges: 0, returned: 0 },
  ],
  [
    'point, constants on the left',
    { filter: "'r010' eq RowKey and 'c' eq PartitionKey", queryClass: 'point', rowsInRanges: 1, returned: 1 },
  ],
  [
    'point plus a property condition',
    {
      filter: "PartitionKey eq 'c' and RowKey eq 'r010' and n eq 11",
      queryClass: 'point',
      rowsInRanges: 1,
      returned: 0,
    },
  ],
  [
    'range: PK eq, RK ge/lt',
    {
      filter: "PartitionKey eq 'c' and RowKey ge 'r010' and RowKey lt 'r020'",
      queryClass: 'range',
      rowsInRanges: 10,
      returned: 10,
    },
  ],
  [
    'range: PK eq, RK gt (open end)',
    { filter: "PartitionKey eq 'd' and RowKey gt 'r089'", queryClass: 'range', rowsInRanges: 10, returned: 10 },
  ],
  [
    'range: PK eq, RK le, filtered',
    {
      filter: "PartitionKey eq 'd' and RowKey le 'r019' and n ge 15",
      queryClass: 'range',
      rowsInRanges: 20,
      returned: 5,
    },
  ],
  [
    'partition-scan: PK eq only',
    { filter: "PartitionKey eq 'c'", queryClass: 'partition-scan', rowsInRanges: 50, returned: 50 },
  ],
  [
    'partition-scan: PK eq and a property',
    { filter: "PartitionKey eq 'c' and n ge 45", queryClass: 'partition-scan', rowsInRanges: 50, returned: 5 },
  ],
  [
    'partition-scan: property first',
    { filter: "n lt 3 and PartitionKey eq 'b'", queryClass: 'partition-scan', rowsInRanges: 20, returned: 3 },
  ],
  [
    'multi-range: PK eq a or PK eq d',
    {
      filter: "PartitionKey eq 'a' or PartitionKey eq 'd'",
      queryClass: 'multi-range',
      rowsInRanges: 130,
      returned: 130,
    },
  ],
  [
    'multi-range: two RowKey ranges in two partitions',
    {
      filter: "(PartitionKey eq 'a' and RowKey lt 'r005') or (PartitionKey eq 'd' and RowKey ge 'r095')",
      queryClass: 'multi-range',
      rowsInRanges: 10,
      returned: 10,
    },
  ],
  [
    'multi-range with a property',
    {
      filter: "(PartitionKey eq 'b' or PartitionKey eq 'c') and n eq 7",
      queryClass: 'multi-range',
      rowsInRanges: 70,
      returned: 2,
    },
  ],
  [
    'range: PK ge/lt only',
    { filter: "PartitionKey ge 'a' and PartitionKey lt 'c'", queryClass: 'range', rowsInRanges: 50, returned: 50 },
  ],
  ['range: PK gt only', { filter: "PartitionKey gt 'b'", queryClass: 'range', rowsInRanges: 150, returned: 150 }],
  [
    'range: not (PK lt d)',
    { filter: "not (PartitionKey lt 'd')", queryClass: 'range', rowsInRanges: 100, returned: 100 },
  ],
  [
    'table-scan: no filter',
    { filter: undefined, queryClass: 'table-scan', rowsInRanges: tableSize, returned: tableSize },
  ],
  ['table-scan: property only', { filter: 'n lt 5', queryClass: 'table-scan', rowsInRanges: tableSize, returned: 20 }],
  [
    'table-scan: RowKey eq only',
    { filter: "RowKey eq 'r001'", queryClass: 'table-scan', rowsInRanges: tableSize, returned: 4 },
  ],
  [
    'table-scan: or with a non-key condition',
    { filter: "PartitionKey eq 'c' or n eq 3", queryClass: 'table-scan', rowsInRanges: tableSize, returned: 53 },
  ],
];

describe('query plans through the server', () => {
  let server: RunningServer;
  let table: string;

  before(async () => {
    server = await startServer({ inMemory: true, args: ['--log-level', 'warn'] });
    const client = tableClient(server, uniqueTableName('plan'));
    table = client.tableName;
    await client.createTable();
    await insertEntities(client, partitionEntities(partitionSizes, 'main'));
    // A second table with the same keys: a scan that strayed outside its table would count these.
    const other = tableClient(server, uniqueTableName('planother'));
    await other.createTable();
    await insertEntities(other, partitionEntities({ a: 100, c: 100, e: 100 }, 'other'));
  });
  after(async () => {
    await server?.stop();
  });

  for (const [label, c] of planCases) {
    test(`${label}: ${c.filter ?? '(no filter)'} → ${c.queryClass}, scanned ${c.rowsInRanges}`, async () => {
      const page = await fetchEntityPage(server.port, table, { $filter: c.filter });
      const { queryClass, scanned, returned } = page.plan;
      assert.equal(queryClass, c.queryClass, 'plan class');
      assert.ok(
        scanned >= c.returned && scanned >= c.rowsInRanges && scanned <= c.rowsInRanges + 1,
        `scanned=${scanned}, rows in the planned ranges: ${c.rowsInRanges} (+1 look-ahead at most)`,
      );
      assert.equal(returned, c.returned);
      assert.equal(page.continuation, undefined, 'everything fits in one page');
      assert.ok(
        page.entities.every((e) => e.extra === 'main'),
        'only this table',
      );
    });
  }

  test('a contradiction reads nothing', async () => {
    const page = await fetchEntityPage(server.port, table, { $filter: "PartitionKey eq 'a' and PartitionKey eq 'b'" });
    assert.equal(page.plan.scanned, 0);
    assert.equal(page.plan.returned, 0);
  });

  test('$select and $top do not change the plan class', async () => {
    const page = await fetchEntityPage(server.port, table, { $filter: "PartitionKey eq 'c'", $select: 'n', $top: 5 });
    assert.equal(page.plan.queryClass, 'partition-scan');
    assert.ok(page.plan.scanned <= 6, `scanned=${page.plan.scanned} for a 5-entity page`);
  });

  const pagedCases: ReadonlyArray<[queryClass: string, filter: string, rows: number]> = [
    ['partition-scan', "PartitionKey eq 'd'", 100],
    ['range', "PartitionKey eq 'd' and RowKey ge 'r010' and RowKey lt 'r073'", 63],
    ['multi-range', "PartitionKey eq 'a' or PartitionKey eq 'c'", 80],
    ['range', "PartitionKey ge 'b' and PartitionKey le 'c'", 70],
  ];
  for (const [queryClass, filter, rows] of pagedCases) {
    test(`${queryClass} paged with $top=30: each page reads its own rows only (${filter})`, async () => {
      const pages = await fetchAllPages(server.port, table, { $filter: filter, $top: 30 });
      assert.equal(pages[0]!.plan.queryClass, queryClass);
      assert.equal(pages.flatMap((p) => p.keys).length, rows);
      for (const page of pages) assert.ok(page.plan.scanned <= 31, `a page of 30 scanned ${page.plan.scanned}`);
      const scanned = pages.reduce((sum, p) => sum + p.plan.scanned, 0);
      assert.ok(
        scanned >= rows && scanned <= rows + pages.length,
        `scanned ${scanned} over ${pages.length} pages for ${rows} rows`,
      );
    });
  }

  test('a missing table is 404 TableNotFound, not an empty plan', async () => {
    assertError(
      await queryEntities(server.port, 'nosuchtable1', { $filter: "PartitionKey eq 'a'" }),
      404,
      'TableNotFound',
    );
  });

  describe('Query Tables with $filter on TableName', () => {
    // A prefix of our own keeps other tables of this server out of range filters.
    const prefix = `qt${randomBytes(3).toString('hex')}`;
    const names = ['alpha', 'beta', 'Gamma', 'delta'].map((suffix) => prefix + suffix);
    const inOurRange = `TableName ge '${prefix}' and TableName lt '${prefix}{'`;

    before(async () => {
      const service = serviceClient(server);
      for (const name of names) await service.createTable(name);
    });

    async function listTables(params: Record<string, string | number | undefined>) {
      const res = await send(server.port, { method: 'GET', path: devPath(`Tables${queryString(params)}`) });
      assert.equal(res.status, 200, describeResponse(res));
      return {
        names: (res.json().value as Array<{ TableName: string }>).map((t) => t.TableName),
        next: res.headers['x-ms-continuation-nexttablename'] as string | undefined,
      };
    }

    /** Tables are listed in case-insensitive name order (docs/protocol-notes.md#order-of-results). */
    const listed = (subset: string[]) => [...subset].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));

    const tableCases: ReadonlyArray<[string, string, string[]]> = [
      ['eq', `TableName eq '${prefix}beta'`, [`${prefix}beta`]],
      ['a prefix range', inOurRange, listed(names)],
      [
        'gt/lt compare ordinally and case-sensitively',
        `TableName gt '${prefix}b' and TableName lt '${prefix}e'`,
        [`${prefix}beta`, `${prefix}delta`],
      ],
      ['not', `not (TableName eq '${prefix}beta') and ${inOurRange}`, listed(names.filter((n) => !n.endsWith('beta')))],
      ['or', `TableName eq '${prefix}alpha' or TableName eq '${prefix}delta'`, [`${prefix}alpha`, `${prefix}delta`]],
      ['eq with the stored case', `TableName eq '${prefix}Gamma'`, [`${prefix}Gamma`]],
      // Azure REST: querying-tables-and-entities: compare with the stored (creation-time) case (unverified; its
      // recommendation).
      ['eq with another case does not match', `TableName eq '${prefix}gamma'`, []],
      ['any other property is missing: no match', `Name eq '${prefix}alpha'`, []],
    ];
    for (const [label, filter, expected] of tableCases) {
      test(`${label}: ${filter}`, async () => {
        assert.deepEqual((await listTables({ $filter: filter })).names, expected);
      });
    }

    test('$top=1 with a filter pages through NextTableName without loss', async () => {
      const seen: string[] = [];
      let next: string | undefined;
      let pages = 0;
      do {
        const page = await listTables({ $filter: inOurRange, $top: 1, NextTableName: next });
        assert.ok(page.names.length <= 1);
        seen.push(...page.names);
        next = page.next;
        assert.ok(++pages <= 200, 'too many pages');
      } while (next !== undefined);
      assert.deepEqual(seen, listed(names));
    });

    test('functions → 501 NotImplemented; malformed → 400 InvalidInput', async () => {
      const get = (filter: string) =>
        send(server.port, { method: 'GET', path: devPath(`Tables${queryString({ $filter: filter })}`) });
      assertError(await get(`startswith(TableName,'${prefix}')`), 501, 'NotImplemented');
      assertError(await get('TableName eq'), 400, 'InvalidInput');
      assertError(await get("TableName eq 'a' and"), 400, 'InvalidInput');
    });
  });
});
