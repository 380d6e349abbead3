import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import type { ErrorCode } from '../../src/errors.js';
import { filterComparisonsMax, filterDepthMax, filterLengthUtf16Max } from '../../src/limits.js';
import type { EdmValue } from '../../src/domain/edm.js';
import { comparisonOperators, printLiteral, printNode } from '../../src/table/query/ast.js';
import type { FilterNode } from '../../src/table/query/ast.js';
import {
  compileEntityQuery,
  compileTableFilter,
  printFilter,
  rejectUnsupportedQueryOptions,
} from '../../src/table/query/index.js';
import { parseFilter } from '../../src/table/query/parser.js';
import { runSeed, seededRandom } from './random.js';
import type { Random } from './random.js';
import { scaled } from '../helpers/scale.js';

function parseError(filter: string): StorageError {
  try {
    parseFilter(filter);
  } catch (error) {
    assert.ok(error instanceof StorageError, `${filter}: ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(filter)} to be rejected`);
}

describe('valid filters: text → printed tree', () => {
  const cases: Array<[string, string]> = [
    // Wire examples (Azure REST: querying-tables-and-entities) and issues the spec cites.
    ["PartitionKey eq 'listEntitiesTest'", "PartitionKey eq 'listEntitiesTest'"],
    ["PartitionKey eq 'p''x' and n gt 5", "(PartitionKey eq 'p''x' and n gt 5)"],
    ["PartitionKey eq 'somPartition' and RowKey eq '1'", "(PartitionKey eq 'somPartition' and RowKey eq '1')"],
    ["not (PartitionKey lt 'Part2')", "not (PartitionKey lt 'Part2')"],
    ["not(PartitionKey lt 'Part2')", "not (PartitionKey lt 'Part2')"],
    ['PlayIndex ge 12 and PlayIndex lt 13', '(PlayIndex ge 12 and PlayIndex lt 13)'],
    ["Timestamp ge datetime'2020-01-01T00:00:00Z'", "Timestamp ge datetime'2020-01-01T00:00:00Z'"],
    ["date lt datetime'2019-07-10T19:00:00.000Z'", "date lt datetime'2019-07-10T19:00:00Z'"],
    ["RowKey ge 'A' and RowKey lt 'B'", "(RowKey ge 'A' and RowKey lt 'B')"],
    ["TableName eq 'mytable'", "TableName eq 'mytable'"],
    // Precedence: comparison > not > and > or.
    ['a eq 1 or b eq 2 and c eq 3', '(a eq 1 or (b eq 2 and c eq 3))'],
    ['a eq 1 and b eq 2 or c eq 3', '((a eq 1 and b eq 2) or c eq 3)'],
    ['a eq 1 and b eq 2 or c eq 3 and d eq 4', '((a eq 1 and b eq 2) or (c eq 3 and d eq 4))'],
    ['a eq 1 or b eq 2 or c eq 3', '(a eq 1 or b eq 2 or c eq 3)'],
    ['a eq 1 and b eq 2 and c eq 3', '(a eq 1 and b eq 2 and c eq 3)'],
    ['not a eq 1 and b eq 2', '(not (a eq 1) and b eq 2)'],
    ['not a eq 1 or b eq 2', '(not (a eq 1) or b eq 2)'],
    ['a eq 1 and not b eq 2', '(a eq 1 and not (b eq 2))'],
    ['not (a eq 1 and b eq 2)', 'not (a eq 1 and b eq 2)'],
    ['not (a eq 1 or b eq 2)', 'not (a eq 1 or b eq 2)'],
    ['not not a eq 1', 'not (not (a eq 1))'],
    ['not (not (a eq 1))', 'not (not (a eq 1))'],
    ['(a eq 1 or b eq 2) and c eq 3', '((a eq 1 or b eq 2) and c eq 3)'],
    ['a eq 1 and (b eq 2 or c eq 3)', '(a eq 1 and (b eq 2 or c eq 3))'],
    ['a eq 1 and (b eq 2 and c eq 3)', '(a eq 1 and (b eq 2 and c eq 3))'],
    ['(a eq 1 and b eq 2) and c eq 3', '((a eq 1 and b eq 2) and c eq 3)'],
    ['((a eq 1))', 'a eq 1'],
    ['(a eq 1)', 'a eq 1'],
    ['( a eq 1 )', 'a eq 1'],
    ['(a eq 1)and(b eq 2)', '(a eq 1 and b eq 2)'],
    ['  a eq 1  ', 'a eq 1'],
    ['a  eq\t1', 'a eq 1'],
    ['((a eq 1) or ((b eq 2)))', '(a eq 1 or b eq 2)'],
    // Bare forms (unverified): Boolean constants and bare Boolean properties.
    ['true', 'true'],
    ['false', 'false'],
    ['not true', 'not (true)'],
    ['(false)', 'false'],
    ['true and a eq 1', '(true and a eq 1)'],
    ['false or a eq 1', '(false or a eq 1)'],
    ['Flag', 'Flag eq true'],
    ['not Flag', 'not (Flag eq true)'],
    ['(Flag)', 'Flag eq true'],
    ['Flag and Other', '(Flag eq true and Other eq true)'],
    ['Flag or a eq 1', '(Flag eq true or a eq 1)'],
    ['not Flag and not Other', '(not (Flag eq true) and not (Other eq true))'],
    // A literal on the left is mirrored (recommendation).
    ['5 lt Age', 'Age gt 5'],
    ['5 le Age', 'Age ge 5'],
    ['5 gt Age', 'Age lt 5'],
    ['5 ge Age', 'Age le 5'],
    ['5 eq Age', 'Age eq 5'],
    ['5 ne Age', 'Age ne 5'],
    ["'a' eq PartitionKey", "PartitionKey eq 'a'"],
    ["'a' le RowKey and 'b' gt RowKey", "(RowKey ge 'a' and RowKey lt 'b')"],
    ['true eq Flag', 'Flag eq true'],
    ["datetime'2020-01-01T00:00:00Z' lt Timestamp", "Timestamp gt datetime'2020-01-01T00:00:00Z'"],
    // Names that only start like keywords, keywords inside strings, case-sensitive keywords as names.
    ['and1 eq 1', 'and1 eq 1'],
    ['notX eq 1', 'notX eq 1'],
    ['order eq 1', 'order eq 1'],
    ['equal eq 1', 'equal eq 1'],
    ['truth eq true', 'truth eq true'],
    ['nullable eq 1', 'nullable eq 1'],
    ['X eq 1', 'X eq 1'],
    ['binary eq 1', 'binary eq 1'],
    ['datetime eq 1', 'datetime eq 1'],
    ['guid eq 1', 'guid eq 1'],
    ['AND eq 1', 'AND eq 1'],
    ['True eq 1', 'True eq 1'],
    ['add eq 1', 'add eq 1'],
    ["a eq 'not'", "a eq 'not'"],
    ["a eq 'x and b eq 1'", "a eq 'x and b eq 1'"],
    ["a eq ')'", "a eq ')'"],
    ['_private eq 1', '_private eq 1'],
    ['Straße eq 1', 'Straße eq 1'],
    ['名前 eq 1', '名前 eq 1'],
    // Case-sensitive property names are kept as written.
    ['partitionkey eq 1', 'partitionkey eq 1'],
    ['PARTITIONKEY eq 1', 'PARTITIONKEY eq 1'],
  ];

  for (const [filter, printed] of cases) {
    test(filter, () => assert.equal(printFilter(filter), printed));
  }
});

describe('literal forms produced by the clients (Azure REST: querying-tables-and-entities)', () => {
  const cases: Array<[string, string, string]> = [
    // [client, filter, printed]
    ['JS', "PartitionKey eq 'it''s'", "PartitionKey eq 'it''s'"],
    ['JS', 'n eq 5', 'n eq 5'],
    ['JS', 'd eq 2', 'd eq 2'],
    ['JS', 'd eq 1.5', 'd eq 1.5'],
    ['JS', 'd eq 1e+21', 'd eq 1e+21'],
    ['JS', 'd eq 5e-7', 'd eq 5e-7'],
    ['JS', 'b eq true', 'b eq true'],
    ['JS', 'big eq 5L', 'big eq 5L'],
    ['JS', "t eq datetime'2019-07-10T19:00:00.000Z'", "t eq datetime'2019-07-10T19:00:00Z'"],
    ['JS', "t eq datetime'2019-07-10T19:00:00.001Z'", "t eq datetime'2019-07-10T19:00:00.001Z'"],
    ['Python', "PartitionKey eq 'it''s'", "PartitionKey eq 'it''s'"],
    ['Python', 'n eq 5', 'n eq 5'],
    ['Python', 'big eq 4294967296L', 'big eq 4294967296L'],
    ['Python', 'd eq 2.0', 'd eq 2.0'],
    ['Python', 'd eq 1e-05', 'd eq 0.00001'],
    ['Python', "t eq datetime'2020-01-02T03:04:05Z'", "t eq datetime'2020-01-02T03:04:05Z'"],
    ['Python', "t eq datetime'2020-01-02T03:04:05.678901Z'", "t eq datetime'2020-01-02T03:04:05.678901Z'"],
    ['Python', "g eq guid'12345678-1234-5678-1234-567812345678'", "g eq guid'12345678-1234-5678-1234-567812345678'"],
    ['Python', "b eq X'0102'", "b eq X'0102'"],
    ['Python', "b eq X'0a0b'", "b eq X'0a0b'"],
    ['.NET', "PartitionKey eq 'it''s'", "PartitionKey eq 'it''s'"],
    ['.NET', 'n eq 5', 'n eq 5'],
    ['.NET', 'big eq 5L', 'big eq 5L'],
    ['.NET', 'd eq 2', 'd eq 2'],
    ['.NET', 'd eq 1.5', 'd eq 1.5'],
    ['.NET', 'd eq 1E+24', 'd eq 1e+24'],
    ['.NET', 'b eq false', 'b eq false'],
    ['.NET', "t eq datetime'2020-01-02T03:04:05.6789012Z'", "t eq datetime'2020-01-02T03:04:05.6789012Z'"],
    ['.NET', "g eq guid'ABCDEF01-2345-6789-ABCD-EF0123456789'", "g eq guid'abcdef01-2345-6789-abcd-ef0123456789'"],
    ['.NET', "b eq X'0A0B'", "b eq X'0a0b'"],
    ['OData', "b eq binary'0A0B'", "b eq X'0a0b'"],
    ['OData', 'd eq 2.5d', 'd eq 2.5'],
    ['OData', 'big eq 7l', 'big eq 7L'],
  ];

  for (const [client, filter, printed] of cases) {
    test(`${client}: ${filter}`, () => assert.equal(printFilter(filter), printed));
  }

  test('Python inf/nan and .NET NaN are not OData literals: 400 InvalidInput (recommendation)', () => {
    for (const filter of ['d eq inf', 'd eq nan', 'd eq NaN', 'd lt INF', 'd gt -inf', 'd eq -INF']) {
      assert.equal(parseError(filter).code, 'InvalidInput', filter);
    }
  });
});

describe('every operator with every literal form, property on either side', () => {
  const literals = [
    "'text'",
    "''",
    "'it''s'",
    '0',
    '-2147483648',
    '2147483647',
    '5L',
    '-9223372036854775808L',
    '1.5',
    '-1e-300',
    'true',
    'false',
    "datetime'2020-01-02T03:04:05.6789012Z'",
    "guid'12345678-1234-5678-1234-567812345678'",
    "X'00ff'",
    "X''",
  ];
  for (const property of ['PartitionKey', 'RowKey', 'Timestamp', 'Custom_1']) {
    test(property, () => {
      for (const operator of comparisonOperators) {
        for (const literal of literals) {
          const printedLiteral = printFilter(`x eq ${literal}`).slice('x eq '.length);
          const direct = `${property} ${operator} ${literal}`;
          assert.equal(printFilter(direct), `${property} ${operator} ${printedLiteral}`, direct);
          const mirrored = `${literal} ${operator} ${property}`;
          const expectedOperator = { eq: 'eq', ne: 'ne', gt: 'lt', ge: 'le', lt: 'gt', le: 'ge' }[operator];
          assert.equal(printFilter(mirrored), `${property} ${expectedOperator} ${printedLiteral}`, mirrored);
        }
      }
    });
  }
});

describe('malformed filters: 400 InvalidInput saying where and what was expected', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /^Expected a property name or a literal but found the end of the filter at offset 0 of \$filter\.$/],
    ['   ', /found the end of the filter at offset 3/],
    ['a eq', /^Expected a property name or a literal but found the end of the filter at offset 4/],
    ['eq 1', /Expected a property name or a literal but found 'eq' at offset 0/],
    ['a eq 1 b eq 2', /^Expected 'and', 'or' or the end of the filter but found 'b' at offset 7/],
    ['a eq 1 and', /found the end of the filter at offset 10/],
    ['a eq 1 or', /found the end of the filter at offset 9/],
    ['a eq 1 or or b eq 1', /Expected a property name or a literal but found 'or' at offset 10/],
    ['a eq 1 and and b eq 1', /but found 'and' at offset 11/],
    ['and a eq 1', /but found 'and' at offset 0/],
    ['or', /but found 'or' at offset 0/],
    ['(a eq 1', /^Expected '\)' but found the end of the filter at offset 7/],
    ['((a eq 1)', /Expected '\)' but found the end of the filter at offset 9/],
    ['a eq 1)', /Expected 'and', 'or' or the end of the filter but found '\)' at offset 6/],
    ['()', /Expected a property name or a literal but found '\)' at offset 1/],
    ['(', /found the end of the filter at offset 1/],
    [')', /found '\)' at offset 0/],
    ['not', /found the end of the filter at offset 3/],
    ['not not', /found the end of the filter at offset 7/],
    ['a eq 1 and not', /found the end of the filter at offset 14/],
    ['not(a eq 1', /Expected '\)' but found the end of the filter/],
    ['a eq b', /^A comparison needs a property name on one side and a literal on the other at offset 0/],
    ['PartitionKey eq RowKey', /A comparison needs a property name on one side/],
    ["'a' eq 'b'", /A comparison needs a property name on one side/],
    ['1 eq 1', /A comparison needs a property name on one side/],
    ['true eq false', /A comparison needs a property name on one side/],
    ['x and a eq b', /A comparison needs a property name on one side and a literal on the other at offset 6/],
    ['a eq 1 eq 2', /Expected 'and', 'or' or the end of the filter but found 'eq' at offset 7/],
    ['a b', /^Expected a comparison operator \(eq, ne, gt, ge, lt, le\) but found 'b' at offset 2/],
    ["a 'x'", /Expected a comparison operator .* but found 'x' at offset 2/],
    ['a 5', /Expected a comparison operator .* but found 5 at offset 2/],
    ['a not', /Expected a comparison operator .* but found 'not'/],
    ['a )', /Expected 'and', 'or' or the end of the filter but found '\)' at offset 2/],
    ['a EQ 1', /Expected a comparison operator .* but found 'EQ' at offset 2/],
    ['a Eq 1', /but found 'Eq'/],
    ['a equals 1', /but found 'equals'/],
    ['a eq 1 AND b eq 2', /Expected a comparison operator .* but found 'b'|but found 'AND'/],
    ['a eq 1 Or b eq 2', /but found 'Or'/],
    ['NOT a eq 1', /Expected a comparison operator .* but found 'a' at offset 4/],
    ['5', /^The literal 5 is not a condition at offset 0/],
    ["'x'", /The literal 'x' is not a condition at offset 0/],
    ['5L and a eq 1', /The literal 5L is not a condition/],
    ["datetime'2020-01-01T00:00:00Z'", /The literal datetime'2020-01-01T00:00:00Z' is not a condition/],
    ['a eq not b', /Expected a property name or a literal but found 'not' at offset 5/],
    ['a eq (1)', /Expected a property name or a literal but found '\(' at offset 5/],
    ['(a) eq 1', /Expected 'and', 'or' or the end of the filter but found 'eq' at offset 4/],
    ['a eq eq', /found 'eq' at offset 5/],
    ['a eq null', /A null literal is not allowed at offset 5/],
    ['null ne a', /A null literal is not allowed at offset 0/],
    ['a eq 2147483648', /Unrecognized 'Edm\.Int32' literal '2147483648'/],
    ['Timestamp gt 1498179600055', /Unrecognized 'Edm\.Int32' literal '1498179600055' at offset 13/],
    ["Tags/any(t: t eq 'a')", /Unexpected character '\/' after 'Tags'/],
    ['-Age gt 5', /Unexpected character '-' at offset 0/],
    ["$filter=a eq 'x'", /Unexpected character '\$'/],
    ['a eq 1;', /Unexpected character ';'/],
    ["a eq 'x' and", /found the end of the filter/],
    [`a ${'b'.repeat(1000)}`, /^Expected a comparison operator .* but found 'b{64}…' at offset 2 of \$filter\.$/],
    [`'${'x'.repeat(1000)}'`, /^The literal 'x{63}… is not a condition at offset 0/],
  ];

  for (const [filter, message] of cases) {
    test(JSON.stringify(filter), () => {
      const error = parseError(filter);
      assert.equal(error.code, 'InvalidInput');
      assert.equal(error.status, 400);
      assert.match(error.message, message);
    });
  }
});

describe('functions, arithmetic, in/has: 501 NotImplemented (Azure REST: querying-tables-and-entities)', () => {
  const cases = [
    "startswith(PartitionKey, 'a')",
    "startswith(PartitionKey,'a') eq true",
    "startswith (PartitionKey, 'a')",
    "endswith(Name,'x')",
    "substringof('a', Name)",
    "contains(Name,'a')",
    "indexof(Name,'a') eq 1",
    'length(Name) gt 3',
    "tolower(Name) eq 'a'",
    "toupper(Name) eq 'A'",
    "trim(Name) eq 'a'",
    "concat(Name,'a') eq 'ba'",
    "substring(Name,1) eq 'a'",
    "replace(Name,'a','b') eq 'b'",
    'year(Timestamp) eq 2020',
    'month(d) eq 1',
    'day(d) eq 1',
    'hour(d) eq 1',
    'minute(d) eq 1',
    'second(d) eq 1',
    'round(d) eq 1',
    'floor(d) eq 1',
    'ceiling(d) eq 1',
    "isof(d, 'Edm.Int32')",
    "cast(d, 'Edm.Int32') eq 1",
    'unknownfunction()',
    'now() gt Timestamp',
    'Timestamp lt now()',
    'Age add 1 gt 5',
    'Age sub 1 gt 5',
    'Age mul 2 gt 5',
    'Age div 2 gt 5',
    'Age mod 2 eq 0',
    'Age gt 5 add 1',
    "Name in ('a','b')",
    'Flags has 1',
    "a eq 1 and startswith(Name, 'a')",
    "not startswith(Name,'a')",
    "Name eq 'a' or contains(Name, 'b')",
    "PartitionKey eq 'a' and length(RowKey) eq 1",
    "(startswith(Name, 'a'))",
  ];
  for (const filter of cases) {
    test(filter, () => {
      const error = parseError(filter);
      assert.equal(error.code, 'NotImplemented');
      assert.equal(error.status, 501);
      assert.equal(error.message, 'The requested operation is not implemented on the specified resource.');
    });
  }
});

describe('limits (limits.ts), tested at the edge and one past it', () => {
  const chain = (count: number, join: string): string =>
    Array.from({ length: count }, (_, i) => `p${i} eq ${i}`).join(` ${join} `);

  test(`${filterComparisonsMax} comparisons are accepted, one more is InvalidInput`, () => {
    assert.doesNotThrow(() => parseFilter(chain(filterComparisonsMax, 'and')));
    assert.doesNotThrow(() => parseFilter(chain(filterComparisonsMax, 'or')));
    for (const join of ['and', 'or']) {
      const error = parseError(chain(filterComparisonsMax + 1, join));
      assert.equal(error.code, 'InvalidInput');
      assert.match(error.message, /^More than 15 comparisons at offset \d+ of \$filter\.$/);
    }
  });

  test('bare Boolean properties count as comparisons; constants do not', () => {
    const bare = Array.from({ length: filterComparisonsMax }, (_, i) => `f${i}`).join(' and ');
    assert.doesNotThrow(() => parseFilter(bare));
    assert.equal(parseError(`${bare} and g`).code, 'InvalidInput');
    assert.doesNotThrow(() =>
      parseFilter(`${chain(filterComparisonsMax, 'or')} or ${Array(100).fill('true').join(' or ')}`),
    );
  });

  test('a mirrored comparison and comparisons under not count the same', () => {
    const mixed = Array.from({ length: filterComparisonsMax + 1 }, (_, i) => (i % 2 ? `not (${i} lt p)` : `p lt ${i}`));
    assert.equal(parseError(mixed.join(' or ')).code, 'InvalidInput');
  });

  test(`nesting: ${filterDepthMax} levels accepted, one more rejected (parentheses, not, and both)`, () => {
    const parens = (depth: number): string => `${'('.repeat(depth)}a eq 1${')'.repeat(depth)}`;
    const nots = (depth: number): string => `${'not '.repeat(depth)}a eq 1`;
    const mixed = (depth: number): string => `${'not ('.repeat(depth / 2)}a eq 1${')'.repeat(depth / 2)}`;
    assert.equal(printFilter(parens(filterDepthMax)), 'a eq 1');
    assert.doesNotThrow(() => parseFilter(nots(filterDepthMax)));
    assert.doesNotThrow(() => parseFilter(mixed(filterDepthMax)));
    for (const filter of [parens(filterDepthMax + 1), nots(filterDepthMax + 1), mixed(filterDepthMax + 2)]) {
      const error = parseError(filter);
      assert.equal(error.code, 'InvalidInput');
      assert.match(error.message, /nested deeper than 32 levels at offset \d+/);
    }
  });

  test('hostile nesting far past the limit is a clean 400, not a stack overflow', () => {
    for (const filter of ['('.repeat(100_000), 'not '.repeat(8000) + 'a', '(not '.repeat(6000)]) {
      assert.equal(parseError(filter.slice(0, filterLengthUtf16Max)).code, 'InvalidInput');
    }
  });

  test(`length: ${filterLengthUtf16Max} UTF-16 code units accepted, one more rejected`, () => {
    const prefix = "a eq '";
    const exact = `${prefix}${'x'.repeat(filterLengthUtf16Max - prefix.length - 1)}'`;
    assert.equal(exact.length, filterLengthUtf16Max);
    assert.doesNotThrow(() => parseFilter(exact));
    const error = parseError(`${exact} `);
    assert.equal(error.code, 'InvalidInput');
    assert.match(error.message, /^The filter is longer than 32768 characters/);
  });
});

describe('public entry points', () => {
  test('compileEntityQuery: undefined and empty mean no filter; errors are StorageErrors', () => {
    for (const filter of [undefined, '']) {
      const query = compileEntityQuery(filter);
      assert.equal(query.plan.queryClass, 'table-scan');
      assert.deepEqual(query.plan.ranges, [{}]);
      assert.equal(query.matches({ partitionKey: 'p', rowKey: 'r', timestamp: 0n, properties: new Map() }), true);
    }
    assert.throws(
      () => compileEntityQuery('a eq'),
      (error) => error instanceof StorageError && error.code === 'InvalidInput',
    );
    assert.throws(
      () => compileEntityQuery('startswith(a)'),
      (error) => error instanceof StorageError && error.code === 'NotImplemented',
    );
  });

  test('compileTableFilter: TableName is the one property, compared as stored, case-sensitively', () => {
    assert.equal(compileTableFilter(undefined)('any'), true);
    assert.equal(compileTableFilter('')('any'), true);
    const prefix = compileTableFilter("TableName ge 'my' and TableName lt 'mz'");
    assert.deepEqual(['my', 'myTable', 'mz', 'MyTable', 'm'].filter(prefix), ['my', 'myTable']);
    assert.equal(compileTableFilter("TableName eq 'Orders'")('orders'), false);
    assert.equal(compileTableFilter("TableName ne 'Orders'")('orders'), true);
    assert.equal(compileTableFilter("Name eq 'Orders'")('Orders'), false, 'other properties do not exist');
    assert.equal(compileTableFilter("not (Name eq 'Orders')")('Orders'), true);
    assert.equal(compileTableFilter('TableName eq 5')('5'), false, 'type mismatch');
    assert.throws(() => compileTableFilter('TableName eq'), StorageError);
  });

  test('rejectUnsupportedQueryOptions: other $-options are 400 InvalidQueryParameterValue', () => {
    assert.doesNotThrow(() =>
      rejectUnsupportedQueryOptions(['$filter', '$select', '$top', '$format', 'NextPartitionKey', 'timeout', 'sv']),
    );
    for (const option of ['$orderby', '$skip', '$expand', '$count', '$inlinecount', '$search', '$skiptoken']) {
      assert.throws(
        () => rejectUnsupportedQueryOptions(['$filter', option]),
        (error) => error instanceof StorageError && error.code === 'InvalidQueryParameterValue' && error.status === 400,
        option,
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Randomized: printed trees parse back to themselves; arbitrary text never crashes.

const names = ['PartitionKey', 'RowKey', 'Timestamp', 'Age', 'flag', 'Name_2', 'Straße'];

function randomLiteral(random: Random): EdmValue {
  switch (random.int(8)) {
    case 0:
      return { type: 'Edm.String', value: random.pick(['', 'a', "it's", "''", ' x ', 'é😀', 'and', ')']) };
    case 1:
      return { type: 'Edm.Int32', value: random.pick([0, 1, -1, 2147483647, -2147483648, 42]) };
    case 2:
      return { type: 'Edm.Int64', value: random.pick([0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 9007199254740993n]) };
    case 3:
      return { type: 'Edm.Double', value: random.pick([0, -0, 1.5, -2.25e-7, 1e21, 1.7976931348623157e308, 5e-324]) };
    case 4:
      return { type: 'Edm.Boolean', value: random.chance(0.5) };
    case 5:
      return {
        type: 'Edm.DateTime',
        value: random.pick([0n, 15779342456789012n, -116444736000000000n, 2534023007999999999n]),
      };
    case 6:
      return { type: 'Edm.Guid', value: '12345678-9abc-def0-1234-56789abcdef0' };
    default:
      return { type: 'Edm.Binary', value: Buffer.from(random.pick(['', '00', 'ff01', '0a0b0c'])!, 'hex') };
  }
}

function randomTree(random: Random, depth: number, budget: { comparisons: number }): FilterNode {
  const leaf = depth >= 4 || budget.comparisons <= 1 || random.chance(0.35);
  if (leaf) {
    if (budget.comparisons === 0 || random.chance(0.1)) return { kind: 'constant', value: random.chance(0.5) };
    budget.comparisons--;
    return {
      kind: 'comparison',
      property: random.pick(names),
      operator: random.pick(comparisonOperators),
      literal: randomLiteral(random),
    };
  }
  if (random.chance(0.2)) return { kind: 'not', operand: randomTree(random, depth + 1, budget) };
  const operands = Array.from({ length: 2 + random.int(2) }, () => randomTree(random, depth + 1, budget));
  return { kind: random.chance(0.5) ? 'and' : 'or', operands };
}

test('printed trees parse back to the same tree (round trip)', () => {
  const seed = runSeed();
  const random = seededRandom(seed);
  for (let i = 0; i < scaled(2000); i++) {
    const tree = randomTree(random, 0, { comparisons: filterComparisonsMax });
    const text = printNode(tree);
    assert.deepEqual(parseFilter(text), tree, `seed=${seed} filter=${text}`);
  }
});

test('printLiteral of every type reparses', () => {
  const random = seededRandom(1);
  for (let i = 0; i < scaled(200); i++) {
    const literal = randomLiteral(random);
    const tree = parseFilter(`x eq ${printLiteral(literal)}`);
    assert.deepEqual(tree, { kind: 'comparison', property: 'x', operator: 'eq', literal });
  }
});

const fragments = [
  'PartitionKey',
  'RowKey',
  'Timestamp',
  'a',
  ' ',
  ' ',
  ' ',
  'eq',
  'ne',
  'lt',
  'and',
  'or',
  'not',
  '(',
  ')',
  "'",
  "''",
  "'a'",
  '5',
  '-5',
  '5L',
  '1.5',
  '1e999',
  '2147483648',
  '-',
  '.',
  'datetime',
  "datetime'",
  "2020-01-01T00:00:00Z'",
  'guid',
  "guid'",
  'X',
  "X'",
  '0a',
  "0a'",
  'true',
  'false',
  'null',
  'startswith',
  ',',
  'add',
  'in',
  '\u0000',
  '😀',
  '\ud800',
  '\t',
  '/',
  '$',
  'TableName',
];

test('arbitrary text: a StorageError (400 or 501) or a working query, never anything else', () => {
  const seed = runSeed();
  const random = seededRandom(seed);
  const entity = { partitionKey: 'a', rowKey: 'b', timestamp: 0n, properties: new Map<string, EdmValue>() };
  for (let i = 0; i < scaled(5000); i++) {
    const text = Array.from({ length: 1 + random.int(24) }, () => random.pick(fragments)).join(
      random.chance(0.5) ? ' ' : '',
    );
    try {
      const query = compileEntityQuery(text);
      query.matches(entity);
      compileTableFilter(text)('table');
      assert.equal(printFilter(printFilter(text)), printFilter(text), `seed=${seed} filter=${text}`);
    } catch (error) {
      if (error instanceof assert.AssertionError) throw error;
      assert.ok(error instanceof StorageError, `seed=${seed} filter=${JSON.stringify(text)}: ${String(error)}`);
      assert.ok((['InvalidInput', 'NotImplemented'] as ErrorCode[]).includes(error.code), `seed=${seed} ${error.code}`);
    }
  }
});
