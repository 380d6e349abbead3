// $filter semantics through HTTP (Azure REST: querying-tables-and-entities): every literal form, typed comparisons per
// EDM
// type, missing properties, type mismatches, numeric promotion, `not`, precedence, constants on the
// left, the 15-comparison limit, malformed filters, functions, unsupported options, $top and
// $select; and the SDK's odata template helper. Each topic lives in its own partition with its
// own property names, so a case queries the whole table and lists every row it must return.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { odata, type TableClient } from '@azure/data-tables';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { assertError, describeResponse, devPath, entityPath, send, type RawResponse } from '../../helpers/http.js';
import { memberSet } from '../../helpers/odata.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import {
  compareKeys,
  edm,
  fetchAllPages,
  insertEntities,
  queryEntities,
  type Key,
  type TestEntity,
  type TestValue,
} from '../../helpers/query.js';

const guidA = '0f8fad5b-d9cb-469f-a165-70867728950e';
const guidB = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

/** partition → row → properties. */
const data: Record<string, Record<string, Record<string, TestValue>>> = {
  int64: {
    a: { big: edm.int64(2n ** 53n) },
    b: { big: edm.int64(2n ** 53n + 1n) },
    c: { big: edm.int64(2n ** 63n - 1n) },
    d: { big: edm.int64(-(2n ** 63n)) },
    e: { big: edm.int32(5) },
  },
  num: {
    i32: { n: edm.int32(2) },
    i64: { n: edm.int64(2n) },
    dbl: { n: edm.double(2) },
    half: { n: edm.double(2.5) },
    str: { n: edm.string('2') },
    bool: { n: edm.boolean(true) },
  },
  dbl: {
    nan: { x: edm.double(NaN) },
    pinf: { x: edm.double(Infinity) },
    ninf: { x: edm.double(-Infinity) },
    max: { x: edm.double(Number.MAX_VALUE) },
    zero: { x: edm.double(0) },
    negzero: { x: edm.double(-0) },
  },
  dt: {
    a: { d: edm.dateTime('2019-07-10T18:59:59.999Z') },
    b: { d: edm.dateTime('2019-07-10T19:00:00.000Z') },
    c: { d: edm.dateTime('2019-07-10T19:00:00.001Z') },
    d: { d: edm.dateTime('2019-07-10T19:00:00.0000001Z') },
    e: { d: edm.dateTime('1601-01-01T00:00:00Z') },
    f: { d: edm.dateTime('9999-12-31T23:59:59.9999999Z') },
    g: { d: edm.dateTime('2019-07-10T18:59:59.9999999Z') },
  },
  guid: {
    a: { g: edm.guid(guidA) },
    b: { g: edm.guid(guidB) },
    c: { g: edm.string(guidA) },
  },
  bin: {
    a: { bin: edm.binary('01') },
    b: { bin: edm.binary('0102') },
    c: { bin: edm.binary('01ff') },
    d: { bin: edm.binary('02') },
  },
  str: {
    a: { s: edm.string("it's") },
    b: { s: edm.string('B') },
    c: { s: edm.string('a') },
    d: { s: edm.string('10') },
    e: { s: edm.string('2') },
    f: { s: edm.string('\u00e9') },
    g: { s: edm.string('\u{1F600}') }, // surrogates D83D DE00: below U+FFFD in UTF-16 order
    h: { s: edm.string('\uFFFD') },
    i: { s: edm.string('') },
  },
  bool: {
    t: { f: edm.boolean(true) },
    f: { f: edm.boolean(false) },
    s: { f: edm.string('true') },
  },
  url: {
    amp: { u: edm.string('a&b') },
    plus: { u: edm.string('a+b') },
    pct: { u: edm.string('a%20b') },
    hash: { u: edm.string('a#b') },
    eq: { u: edm.string('a=b') },
  },
  miss: {
    has: { m: edm.int32(1) },
    lacks: { other: edm.int32(1) },
  },
  // Row k carries the bits of k: p = bit 0, q = bit 1, r = bit 2.
  prec: Object.fromEntries(
    Array.from({ length: 8 }, (_, k) => [
      String(k),
      { p: edm.int32(k & 1), q: edm.int32((k >> 1) & 1), r: edm.int32((k >> 2) & 1) },
    ]),
  ),
};

const entities: TestEntity[] = Object.entries(data).flatMap(([partitionKey, rows]) =>
  Object.entries(rows).map(([rowKey, properties]) => ({ partitionKey, rowKey, properties })),
);

/** `pk/rk` names in key order (keys never contain `/`). */
function rows(partition: string, rowKeys: readonly string[]): string[] {
  return rowKeys
    .map((rk): Key => [partition, rk])
    .sort(compareKeys)
    .map(([pk, rk]) => `${pk}/${rk}`);
}

const allOf = (partition: string) => rows(partition, Object.keys(data[partition]!));

type Case = readonly [filter: string, expected: string[]];

const cases: ReadonlyArray<[topic: string, Case[]]> = [
  [
    'Int64 compares as a 64-bit integer, also beyond 2^53',
    [
      ['big eq 9007199254740993L', rows('int64', ['b'])],
      ['big gt 9007199254740992L', rows('int64', ['b', 'c'])],
      ['big eq 9223372036854775807L', rows('int64', ['c'])],
      ['big le -9223372036854775808L', rows('int64', ['d'])],
      ['big lt -9223372036854775807L', rows('int64', ['d'])],
      ['9007199254740992L lt big', rows('int64', ['b', 'c'])],
      ['big ge 5L and big le 5L', rows('int64', ['e'])],
      ['big gt 2147483647', rows('int64', ['a', 'b', 'c'])],
      ['big eq -2147483648', []],
      // Exact against a Double: 2^53 + 1 is not equal to the double 2^53.
      ['big eq 9007199254740992.0', rows('int64', ['a'])],
      ['big gt 9007199254740992.0', rows('int64', ['b', 'c'])],
      ['big gt 9.2e18', rows('int64', ['c'])],
      ['big lt -9.2E+18', rows('int64', ['d'])],
      // Top-level `and` terms, the shape a store may prefilter.
      ['big gt 9007199254740992.0 and big lt 9223372036854775807L', rows('int64', ['b'])],
      ['big ge -9223372036854775808L and big lt 6', rows('int64', ['d', 'e'])],
    ],
  ],
  [
    'numeric promotion between Int32, Int64 and Double; other types never match',
    [
      ['n eq 2', rows('num', ['i32', 'i64', 'dbl'])],
      ['n eq 2L', rows('num', ['i32', 'i64', 'dbl'])],
      ['n eq 2.0', rows('num', ['i32', 'i64', 'dbl'])],
      ['n ge 2e0', rows('num', ['i32', 'i64', 'dbl', 'half'])],
      ['n eq 25E-1', rows('num', ['half'])],
      ['n eq 0.25e+1', rows('num', ['half'])],
      ['n eq 2.5d', rows('num', ['half'])],
      ['n gt 2', rows('num', ['half'])],
      ['n lt 2.5', rows('num', ['i32', 'i64', 'dbl'])],
      ['n gt -1.5e-3', rows('num', ['i32', 'i64', 'dbl', 'half'])],
      ['n ne 2', rows('num', ['half'])],
      ["n eq '2'", rows('num', ['str'])],
      ["n ne '2'", []],
      ['n eq true', rows('num', ['bool'])],
      ['2 eq n', rows('num', ['i32', 'i64', 'dbl'])],
      ['n ge 2 and n lt 3', rows('num', ['i32', 'i64', 'dbl', 'half'])],
      ["n ge 2L and n le 2.0 and n ne '2'", []],
    ],
  ],
  [
    'Double: NaN is equal to nothing, infinities order at the ends',
    [
      ['x gt 1.0e308', rows('dbl', ['max', 'pinf'])],
      ['x lt -1.0e308', rows('dbl', ['ninf'])],
      ['x eq 0.0', rows('dbl', ['zero', 'negzero'])],
      ['x eq 0', rows('dbl', ['zero', 'negzero'])],
      ['x ge -1.7976931348623157e308 and x le 1.7976931348623157e308', rows('dbl', ['max', 'zero', 'negzero'])],
      ['x eq 1.0', []],
      ['x ne 1.0', allOf('dbl')],
      ["PartitionKey eq 'dbl' and not (x eq 1.0)", allOf('dbl')],
      ['x gt 0.0', rows('dbl', ['max', 'pinf'])],
      ['x lt 0.0', rows('dbl', ['ninf'])],
      ['x gt 9223372036854775807L', rows('dbl', ['max', 'pinf'])],
      ['x gt -1.0e308 and x lt 1.0e308', rows('dbl', ['zero', 'negzero'])],
    ],
  ],
  [
    'DateTime by instant at 100 ns, literals with 0, 3, 6 or 7 digits',
    [
      // The recorded real-service example: only the earlier instants.
      ["d lt datetime'2019-07-10T19:00:00.000Z'", rows('dt', ['a', 'e', 'g'])],
      ["d eq datetime'2019-07-10T19:00:00Z'", rows('dt', ['b'])],
      ["d eq datetime'2019-07-10T19:00:00.000000Z'", rows('dt', ['b'])],
      ["d eq datetime'2019-07-10T19:00:00.0000000Z'", rows('dt', ['b'])],
      ["d eq datetime'2019-07-10T19:00:00.0000001Z'", rows('dt', ['d'])],
      ["d gt datetime'2019-07-10T19:00:00Z' and d lt datetime'2019-07-10T19:00:00.001Z'", rows('dt', ['d'])],
      ["d gt datetime'2019-07-10T18:59:59.999Z' and d lt datetime'2019-07-10T19:00:00Z'", rows('dt', ['g'])],
      ["d le datetime'1601-01-01T00:00:00Z'", rows('dt', ['e'])],
      ["d ge datetime'9999-12-31T23:59:59.9999999Z'", rows('dt', ['f'])],
      ["d ne datetime'2019-07-10T19:00:00Z'", rows('dt', ['a', 'c', 'd', 'e', 'f', 'g'])],
      ["datetime'2019-07-10T19:00:00Z' gt d", rows('dt', ['a', 'e', 'g'])],
      ["d eq '2019-07-10T19:00:00Z'", []],
      ["PartitionKey eq 'dt' and Timestamp lt datetime'2000-01-01T00:00:00Z'", []],
    ],
  ],
  [
    'Guid: eq/ne on the value, hex case-insensitive; a Guid string is a String',
    [
      [`g eq guid'${guidA}'`, rows('guid', ['a'])],
      [`g eq guid'${guidA.toUpperCase()}'`, rows('guid', ['a'])],
      [`g ne guid'${guidA}'`, rows('guid', ['b'])],
      [`g eq '${guidA}'`, rows('guid', ['c'])],
      ["g gt guid'00000000-0000-0000-0000-000000000000'", rows('guid', ['a', 'b'])],
    ],
  ],
  [
    "Binary: X'…' and binary'…', hex either case, byte-wise order with prefixes first",
    [
      ["bin eq X'0102'", rows('bin', ['b'])],
      ["bin eq binary'0102'", rows('bin', ['b'])],
      ["bin eq X'01FF'", rows('bin', ['c'])],
      ["bin eq X'01fF'", rows('bin', ['c'])],
      ["bin lt X'0102'", rows('bin', ['a'])],
      ["bin gt X'01'", rows('bin', ['b', 'c', 'd'])],
      ["bin ge X'0103'", rows('bin', ['c', 'd'])],
      ["X'0102' eq bin", rows('bin', ['b'])],
      ["bin eq '0102'", []],
    ],
  ],
  [
    'String: ordinal by UTF-16 code unit, case-sensitive, doubled quotes',
    [
      ["s eq 'it''s'", rows('str', ['a'])],
      ["s eq 'IT''S'", []],
      ["s lt 'a'", rows('str', ['b', 'd', 'e', 'i'])],
      ["s gt '10' and s lt '3'", rows('str', ['e'])],
      ["s ge 'a' and s lt 'b'", rows('str', ['c'])],
      ["s ge '\u{1F600}'", rows('str', ['g', 'h'])],
      ["s gt '\u00e9' and s lt '\uFFFD'", rows('str', ['g'])],
      ["s eq ''", rows('str', ['i'])],
      ["s eq 'A'", []],
      ["s gt 'a' and s le 'zz'", rows('str', ['a'])],
      ["s ge 'B' and s lt '\u00ff'", rows('str', ['a', 'b', 'c', 'f'])],
    ],
  ],
  [
    'Boolean: true/false literals, false < true, bare forms',
    [
      ['f eq true', rows('bool', ['t'])],
      ['f eq false', rows('bool', ['f'])],
      ['f ne true', rows('bool', ['f'])],
      ['f gt false', rows('bool', ['t'])],
      ["f eq 'true'", rows('bool', ['s'])],
      ['f eq 1', []],
      // A bare Boolean property and a bare literal are (unverified) grammar forms of Azure REST:
      // querying-tables-and-entities.
      ["PartitionKey eq 'bool' and f", rows('bool', ['t'])],
      ["PartitionKey eq 'bool' and true", allOf('bool')],
      ["PartitionKey eq 'bool' and false", []],
    ],
  ],
  [
    'missing properties match no comparison, not even ne; not is two-valued',
    [
      ['m eq 1', rows('miss', ['has'])],
      ['m ne 1', []],
      ['m ne 2', rows('miss', ['has'])],
      ["PartitionKey eq 'miss' and not (m eq 1)", rows('miss', ['lacks'])],
      ["PartitionKey eq 'miss' and not (m ne 2)", rows('miss', ['lacks'])],
      ["nosuch eq 'x'", []],
      ["nosuch ne 'x'", []],
      // Property names are case-sensitive: these name properties no entity has.
      ['M eq 1', []],
      ["partitionkey eq 'miss'", []],
      // A key compared with a number is a type mismatch: no match, not even for ne.
      ['PartitionKey eq 5', []],
      ['RowKey ne 5', []],
      ["PartitionKey eq 'miss' and not (RowKey eq 5)", allOf('miss')],
    ],
  ],
  [
    'characters with a meaning in URLs survive percent-encoding',
    [
      ["u eq 'a&b'", rows('url', ['amp'])],
      ["u eq 'a+b'", rows('url', ['plus'])],
      ["u eq 'a%20b'", rows('url', ['pct'])],
      ["u eq 'a#b'", rows('url', ['hash'])],
      ["u eq 'a=b'", rows('url', ['eq'])],
    ],
  ],
];

type Bits = (p: boolean, q: boolean, r: boolean) => boolean;

/** Precedence comparison > not > and > or, checked against the same logic in JS. */
const precedenceCases: ReadonlyArray<[string, Bits]> = [
  ['p eq 1 or q eq 1 and r eq 1', (p, q, r) => p || (q && r)],
  ['(p eq 1 or q eq 1) and r eq 1', (p, q, r) => (p || q) && r],
  ['p eq 1 and q eq 1 or r eq 1', (p, q, r) => (p && q) || r],
  ['p eq 1 and (q eq 1 or r eq 1)', (p, q, r) => p && (q || r)],
  ['not p eq 1 and q eq 1', (p, q) => !p && q],
  ['not (p eq 1 and q eq 1)', (p, q) => !(p && q)],
  ['not(p eq 1) or r eq 0', (p, _q, r) => !p || !r],
  ['not not p eq 1', (p) => p],
  ['not p eq 1 or not q eq 1 and r eq 1', (p, q, r) => !p || (!q && r)],
  ['1 eq p', (p) => p],
  ['1 gt q', (_p, q) => !q],
  ['0 lt r', (_p, _q, r) => r],
  ['1 le p and 0 ge q', (p, q) => p && !q],
  ['false or p eq 1', (p) => p],
  ['  p eq 1   and    q eq 1  ', (p, q) => p && q],
  ['((((p eq 1))))', (p) => p],
];

describe('$filter semantics through HTTP', () => {
  let server: RunningServer;
  let client: TableClient;
  let table: string;
  const startedAt = new Date(Date.now() - 60_000);

  before(async () => {
    server = await startServer({ inMemory: true, args: ['--log-level', 'warn'] });
    client = tableClient(server, uniqueTableName('sem'));
    table = client.tableName;
    await client.createTable();
    await insertEntities(client, entities);
  });
  after(async () => {
    await server?.stop();
  });

  async function matching(filter: string): Promise<string[]> {
    const pages = await fetchAllPages(server.port, table, { $filter: filter });
    return pages.flatMap((p) => p.keys).map(([pk, rk]) => `${pk}/${rk}`);
  }

  const query = (params: Record<string, string | number | undefined>) => queryEntities(server.port, table, params);

  for (const [topic, topicCases] of cases) {
    test(topic, async () => {
      for (const [filter, expected] of topicCases)
        assert.deepEqual(await matching(filter), expected, `$filter=${filter}`);
    });
  }

  test('precedence: comparison > not > and > or; constants on the left', async () => {
    for (const [filter, holds] of precedenceCases) {
      const expected = Object.keys(data.prec!).filter((k) =>
        holds((Number(k) & 1) === 1, (Number(k) & 2) === 2, (Number(k) & 4) === 4),
      );
      assert.deepEqual(
        await matching(`PartitionKey eq 'prec' and (${filter})`),
        rows('prec', expected),
        `$filter=${filter}`,
      );
    }
  });

  test('Timestamp compares as a DateTime', async () => {
    const since = `datetime'${startedAt.toISOString()}'`;
    assert.deepEqual(await matching(`PartitionKey eq 'dt' and Timestamp ge ${since}`), allOf('dt'));
    const res = await send(server.port, { method: 'GET', path: entityPath(table, 'dt', 'b') });
    const timestamp: string = res.json().Timestamp;
    const same = await matching(`PartitionKey eq 'dt' and Timestamp eq datetime'${timestamp}'`);
    assert.ok(same.includes('dt/b'), `Timestamp eq its own value (${timestamp}) finds the entity: ${same}`);
  });

  test("'+' in the query string decodes as a space", async () => {
    const res = await send(server.port, { method: 'GET', path: devPath(`${table}()?$filter=u+eq+'a%2Bb'`) });
    assert.equal(res.status, 200, describeResponse(res));
    assert.deepEqual(
      res.json().value.map((e: { RowKey: string }) => e.RowKey),
      ['plus'],
    );
  });

  test('an empty $filter= is no filter (unverified)', async () => {
    const pages = await fetchAllPages(server.port, table, { $filter: '' });
    assert.equal(pages.flatMap((p) => p.keys).length, entities.length);
  });

  describe('the 15-comparison limit', () => {
    const scoped = (n: number) =>
      `PartitionKey eq 'prec' and (${Array.from({ length: n - 1 }, () => 'p eq 1').join(' or ')})`;

    test('15 comparisons are accepted', async () => {
      assert.deepEqual(await matching(scoped(15)), rows('prec', ['1', '3', '5', '7']));
    });
    test('parentheses and not do not count', async () => {
      const negated = Array.from({ length: 15 }, (_, i) => `not (not (p eq ${i % 2}))`).join(' or ');
      assert.equal((await query({ $filter: `(((${negated})))` })).status, 200);
    });
    test('16 comparisons → 400 InvalidInput', async () => {
      assertError(await query({ $filter: scoped(16) }), 400, 'InvalidInput');
      assertError(
        await query({ $filter: Array.from({ length: 16 }, () => 'not p eq 1').join(' and ') }),
        400,
        'InvalidInput',
      );
    });
  });

  describe('malformed filters → 400 InvalidInput whose message says where', () => {
    /** Filter and the acceptable 0-based positions of the fault (start of the bad token, or the end). */
    const malformed: ReadonlyArray<[string, number[]]> = [
      ['PartitionKey eq', [15]],
      ["PartitionKey eq 'abc", [16, 20]],
      ["PartitionKey eq 'a' and", [23]],
      ["(PartitionKey eq 'a'", [20]],
      ["PartitionKey eq 'a')", [19]],
      ["PartitionKey equals 'a'", [13]],
      ["PartitionKey == 'a'", [13]],
      ["PartitionKey Eq 'a'", [13]],
      ["PartitionKey eq 'a' AND RowKey eq 'b'", [20]],
      ["PartitionKey eq 'a' or or RowKey eq 'b'", [23]],
      ["PartitionKey eq 'a' RowKey eq 'b'", [20]],
      ['PartitionKey eq RowKey', [0, 16]], // two properties
      ["'a' eq 'b'", [0, 7]], // two literals
      ['PartitionKey eq null', [16]],
      ["eq 'a'", [0]],
      ['()', [1]],
      ['not', [3]],
      ['n eq 12x', [5, 7]],
      ['n eq 1.', [5, 6]],
      ["d eq datetime'garbage'", [5]],
      ["d eq datetime'2019-13-01T00:00:00Z'", [5]],
      ["g eq guid'xyz'", [5]],
      [`g eq guid'${guidA.slice(0, -1)}'`, [5]],
      ["bin eq X'012'", [7]],
      ["bin eq X'zz'", [7]],
      ["s eq 'it's'", [5, 9, 10]],
      ['n eq 9223372036854775808L', [5]],
      ['x eq inf', [0, 5]], // Python's str(float) forms are not OData
      ['x eq nan', [0, 5]],
      ['x eq -inf', [5]],
    ];
    for (const [filter, positions] of malformed) {
      test(filter, async () => {
        const res = await query({ $filter: filter });
        assertError(res, 400, 'InvalidInput');
        const message: string = res.json()['odata.error'].message.value.split('\n')[0];
        const says = positions.some((at) => new RegExp(`(?<!\\d)${at}(?!\\d)`).test(message));
        assert.ok(says, `message should name position ${positions.join(' or ')}: ${message}`);
      });
    }

    test("an Int32 literal out of range: Unrecognized 'Edm.Int32' literal (as the service says)", async () => {
      for (const filter of ['big eq 2147483648', 'big gt -2147483649']) {
        const res = await query({ $filter: filter });
        assertError(res, 400, 'InvalidInput');
        assert.match(res.json()['odata.error'].message.value, /Unrecognized 'Edm\.Int32' literal/);
      }
    });

    test('deep nesting is refused, not a crash', async () => {
      for (const open of ['(', 'not (']) {
        const deep = `${open.repeat(5000)}p eq 1${')'.repeat(5000)}`;
        assertError(await query({ $filter: deep }), 400, 'InvalidInput');
      }
    });
  });

  test('functions and operators outside the grammar → 501 NotImplemented', async () => {
    const unsupported = [
      "startswith(PartitionKey,'a')",
      "startswith(PartitionKey, 'a') eq true",
      "PartitionKey eq 'prec' and startswith(RowKey,'1')",
      "endswith(RowKey,'1')",
      "substringof('a',s)",
      "contains(s,'a')",
      'length(s) eq 1',
      "tolower(s) eq 'a'",
      "toupper(s) eq 'A'",
      "trim(s) eq 'a'",
      "concat(s,'x') eq 'ax'",
      "substring(s,1) eq 'a'",
      "indexof(s,'a') eq 0",
      "replace(s,'a','b') eq 'b'",
      'year(d) eq 2019',
      'round(x) eq 1',
      "isof(s,'Edm.String')",
      "cast(n,'Edm.Int64') eq 2L",
      // Arithmetic and membership are in the same unsupported list as the functions.
      'n add 1 eq 3',
      'n mul 2 eq 4',
      "PartitionKey in ('a','b')",
    ];
    for (const filter of unsupported) assertError(await query({ $filter: filter }), 501, 'NotImplemented');
  });

  test('unsupported OData options → 400 InvalidQueryParameterValue (recommendation)', async () => {
    const options: Record<string, string>[] = [
      { $orderby: 'RowKey' },
      { $orderby: 'RowKey desc', $filter: "PartitionKey eq 'str'" },
      { $skip: '1' },
      { $expand: 'x' },
      { $count: 'true' },
      { $inlinecount: 'allpages' },
    ];
    for (const params of options) assertError(await query(params), 400, 'InvalidQueryParameterValue');
    // Parameters without `$` are not OData options: timeout is honoured, unknown ones ignored
    // (docs/protocol-notes.md#unknown-input-is-ignored).
    const ignored = await query({ $filter: "PartitionKey eq 'bin'", timeout: '30', foo: 'bar' });
    assert.equal(ignored.status, 200, describeResponse(ignored));
    assert.equal(ignored.json().value.length, Object.keys(data.bin!).length);
  });

  test('$top outside 1…1000 or not an integer → 400 InvalidInput (recommendation)', async () => {
    for (const top of ['0', '1001', 'abc', '-1', '1.5', '99999999999'])
      assertError(await query({ $top: top }), 400, 'InvalidInput');
    for (const top of ['1', '1000']) assert.equal((await query({ $top: top })).status, 200);
  });

  describe('$select', () => {
    const base = () => `http://127.0.0.1:${server.port}/devstoreaccount1`;
    const values = (res: RawResponse): Array<Record<string, unknown>> => {
      assert.equal(res.status, 200, describeResponse(res));
      return res.json().value;
    };

    test('exactly the listed properties plus odata.etag; a missing one is null', async () => {
      const got = values(await query({ $filter: "PartitionKey eq 'str'", $select: 's,missingProp' }));
      assert.equal(got.length, Object.keys(data.str!).length);
      for (const e of got) {
        assert.deepEqual(memberSet(e), ['missingProp', 'odata.etag', 's']);
        assert.equal(e.missingProp, null);
      }
    });

    test('system properties only when listed; Timestamp included then', async () => {
      const got = values(await query({ $filter: "PartitionKey eq 'bin'", $select: 'PartitionKey,RowKey,Timestamp' }));
      for (const e of got) assert.deepEqual(memberSet(e), ['PartitionKey', 'RowKey', 'Timestamp', 'odata.etag']);
    });

    test('typed properties keep their @odata.type; spaces around names are accepted', async () => {
      const got = values(await query({ $filter: "PartitionKey eq 'int64'", $select: ' big , RowKey ' }));
      const byRow = new Map(got.map((e) => [e.RowKey, e]));
      assert.equal(byRow.get('b')!['big@odata.type'], 'Edm.Int64');
      assert.equal(byRow.get('b')!.big, '9007199254740993');
      assert.equal(byRow.get('e')!.big, 5);
      assert.ok(!('big@odata.type' in byRow.get('e')!), 'Int32 stays unannotated');
      const dates = values(await query({ $filter: "PartitionKey eq 'dt' and RowKey eq 'd'", $select: 'd' }));
      assert.deepEqual(
        dates.map((e) => [e['d@odata.type'], e.d]),
        [['Edm.DateTime', '2019-07-10T19:00:00.0000001Z']],
      );
    });

    test('$select does not change which entities match', async () => {
      const got = values(await query({ $filter: "s eq 'a'", $select: 'big' }));
      assert.equal(got.length, 1);
      assert.deepEqual(memberSet(got[0]!), ['big', 'odata.etag']);
      assert.equal(got[0]!.big, null);
    });

    test('odata.metadata: the point read gets &$select=<list>; the feed keeps its table context', async () => {
      const point = await send(server.port, {
        method: 'GET',
        path: `${entityPath(table, 'str', 'a')}?$select=${encodeURIComponent('s,PartitionKey,RowKey')}`,
      });
      assert.equal(point.status, 200, describeResponse(point));
      const body = point.json();
      assert.equal(body['odata.metadata'], `${base()}/$metadata#${table}/@Element&$select=s,PartitionKey,RowKey`);
      assert.deepEqual(memberSet(body), ['PartitionKey', 'RowKey', 'odata.etag', 'odata.metadata', 's']);
      const plain = (await send(server.port, { method: 'GET', path: entityPath(table, 'str', 'a') })).json();
      assert.equal(plain['odata.metadata'], `${base()}/$metadata#${table}/@Element`);
      const feed = await query({ $filter: "PartitionKey eq 'str'", $select: 's' });
      assert.ok(
        String(feed.json()['odata.metadata']).startsWith(`${base()}/$metadata#${table}`),
        feed.text.slice(0, 200),
      );
    });

    test('nometadata drops odata.*; fullmetadata keeps annotations on selected properties', async () => {
      const selectBig = { $filter: "PartitionKey eq 'int64' and RowKey eq 'b'", $select: 'big' };
      const none = await query({ ...selectBig, $format: 'application/json;odata=nometadata' });
      assert.deepEqual(values(none), [{ big: '9007199254740993' }]);
      const full = await query({ ...selectBig, $format: 'application/json;odata=fullmetadata' });
      const [entity] = values(full);
      assert.equal(entity!['big@odata.type'], 'Edm.Int64');
      assert.equal(typeof entity!['odata.etag'], 'string');
    });
  });

  describe('through the SDK with the odata template helper', () => {
    test('quotes are doubled by odata`…`', async () => {
      const found = [];
      for await (const e of client.listEntities({ queryOptions: { filter: odata`s eq ${"it's"}` } })) found.push(e);
      assert.deepEqual(
        found.map((e) => [e.partitionKey, e.rowKey]),
        [['str', 'a']],
      );
    });

    test('a Date becomes a datetime literal', async () => {
      const found = [];
      const cut = new Date('2019-07-10T19:00:00.000Z');
      for await (const e of client.listEntities({ queryOptions: { filter: odata`d lt ${cut}` } })) found.push(e.rowKey);
      assert.deepEqual(found, ['a', 'e', 'g']);
    });

    test('filter and select together: null for a missing selected property, etag kept', async () => {
      const found: Array<Record<string, unknown>> = [];
      const filter = odata`PartitionKey eq ${'str'} and RowKey eq ${'a'}`;
      for await (const e of client.listEntities({ queryOptions: { filter, select: ['s', 'missing'] } })) found.push(e);
      assert.equal(found.length, 1);
      assert.equal(found[0]!.s, "it's");
      assert.equal(found[0]!.missing, null);
      assert.equal(typeof found[0]!.etag, 'string');
      assert.equal(found[0]!.partitionKey, undefined, 'keys only when selected');
    });

    test('Int64 beyond 2^53 with an L literal comes back as a bigint', async () => {
      const found: unknown[] = [];
      const filter = odata`big eq ${2n ** 53n + 1n}L`;
      for await (const e of client.listEntities<{ big: bigint }>({ queryOptions: { filter } })) found.push(e.big);
      assert.deepEqual(found, [2n ** 53n + 1n]);
    });
  });
});
