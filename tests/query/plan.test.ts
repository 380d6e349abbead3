import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clipRanges, compileEntityQuery, intersectRanges, printPlan } from '../../src/table/query/index.js';
import { type KeyBound, type KeyRange } from '../../src/domain/keys.js';

function plan(filter: string): string {
  return printPlan(compileEntityQuery(filter).plan);
}

function check(cases: ReadonlyArray<readonly [string, string]>): void {
  for (const [filter, printed] of cases) {
    test(filter, () => assert.equal(plan(filter), printed));
  }
}

describe('point', () => {
  check([
    ["PartitionKey eq 'p' and RowKey eq 'r'", "point ['p','r' .. 'p','r']"],
    ["RowKey eq 'r' and PartitionKey eq 'p'", "point ['p','r' .. 'p','r']"],
    ["PartitionKey eq 'somPartition' and RowKey eq '1'", "point ['somPartition','1' .. 'somPartition','1']"],
    ["PartitionKey eq 'p' and RowKey eq 'r' and Name eq 'x'", "point ['p','r' .. 'p','r']"],
    ["(PartitionKey eq 'p') and ((RowKey eq 'r'))", "point ['p','r' .. 'p','r']"],
    ["'p' eq PartitionKey and 'r' eq RowKey", "point ['p','r' .. 'p','r']"],
    ["PartitionKey eq 'p' and RowKey eq 'r' and RowKey ge 'a'", "point ['p','r' .. 'p','r']"],
    ["PartitionKey eq 'p' and RowKey le 'r' and RowKey ge 'r'", "point ['p','r' .. 'p','r']"],
    ["not (PartitionKey ne 'p' or RowKey ne 'r')", "point ['p','r' .. 'p','r']"],
    ["PartitionKey eq 'p''q' and RowKey eq ''", "point ['p''q','' .. 'p''q','']"],
    ["PartitionKey eq '' and RowKey eq ''", "point ['','' .. '','']"],
  ]);
});

describe('range', () => {
  check([
    ["PartitionKey eq 'p' and RowKey ge 'a' and RowKey lt 'b'", "range ['p','a' .. 'p','b')"],
    ["PartitionKey eq 'p' and RowKey gt 'a'", "range ('p','a' .. 'p']"],
    ["PartitionKey eq 'p' and RowKey le 'm'", "range ['p' .. 'p','m']"],
    [
      "PartitionKey eq 'p' and RowKey ge 'a' and RowKey ge 'c' and RowKey lt 'x' and RowKey le 'f'",
      "range ['p','c' .. 'p','f']",
    ],
    ["PartitionKey eq 'p' and RowKey ge 'c' and RowKey gt 'c'", "range ('p','c' .. 'p']"],
    ["PartitionKey eq 'p' and not (RowKey lt 'c')", "range ['p','c' .. 'p']"],
    ["PartitionKey ge 'a' and PartitionKey lt 'b'", "range ['a' .. 'b')"],
    ["PartitionKey ge 'a' and PartitionKey lt 'b' and Age gt 5", "range ['a' .. 'b')"],
    ["PartitionKey gt 'a'", "range ('a' .. +inf)"],
    ["PartitionKey le 'a'", "range (-inf .. 'a']"],
    ["PartitionKey ge ''", "range ['' .. +inf)"],
    ["not (PartitionKey lt 'Part2')", "range ['Part2' .. +inf)"],
    ["PartitionKey ge 'a' and PartitionKey le 'c' and RowKey ge 'r'", "range ['a','r' .. 'c']"],
    ["PartitionKey ge 'a' and PartitionKey le 'c' and RowKey le 'r'", "range ['a' .. 'c','r']"],
    ["PartitionKey gt 'a' and PartitionKey lt 'c' and RowKey eq 'r'", "range ('a' .. 'c')"],
    ["PartitionKey ge 'a' and RowKey eq 'r'", "range ['a','r' .. +inf)"],
    ["PartitionKey eq 'a' or PartitionKey gt 'a'", "range ['a' .. +inf)"],
    [
      "PartitionKey ge 'a' and PartitionKey le 'c' or PartitionKey ge 'b' and PartitionKey le 'd'",
      "range ['a' .. 'd']",
    ],
    [
      "PartitionKey lt 'b' and PartitionKey ge 'a' or PartitionKey ge 'b' and PartitionKey lt 'c'",
      "range ['a' .. 'c')",
    ],
  ]);
});

describe('partition-scan', () => {
  check([
    ["PartitionKey eq 'p'", "partition-scan ['p' .. 'p']"],
    ["PartitionKey eq 'listEntitiesTest'", "partition-scan ['listEntitiesTest' .. 'listEntitiesTest']"],
    ["PartitionKey eq 'p''x' and n gt 5", "partition-scan ['p''x' .. 'p''x']"],
    ["PartitionKey eq 'p' and Name eq 'x'", "partition-scan ['p' .. 'p']"],
    ["PartitionKey eq 'p' and (Age gt 5 or Name eq 'x')", "partition-scan ['p' .. 'p']"],
    ["PartitionKey eq 'p' and not (Age gt 5)", "partition-scan ['p' .. 'p']"],
    ["PartitionKey eq 'p' and Timestamp ge datetime'2020-01-01T00:00:00Z'", "partition-scan ['p' .. 'p']"],
    ["PartitionKey ge 'p' and PartitionKey le 'p'", "partition-scan ['p' .. 'p']"],
    ["PartitionKey eq 'p' and (RowKey eq 'a' or Age gt 5)", "partition-scan ['p' .. 'p']"],
    ["PartitionKey eq 'p' or PartitionKey eq 'p'", "partition-scan ['p' .. 'p']"],
    ["PartitionKey eq 5 or PartitionKey eq 'a'", "partition-scan ['a' .. 'a']"],
    ["PartitionKey eq 'p' and (RowKey lt 'c' or RowKey gt 'a')", "partition-scan ['p' .. 'p']"],
    [
      "(PartitionKey eq 'p' and RowKey lt 'm') or (PartitionKey eq 'p' and RowKey ge 'm')",
      "partition-scan ['p' .. 'p']",
    ],
    ["PartitionKey eq 'p' and RowKey ne 5", 'multi-range (no ranges)'],
    ["PartitionKey eq 'p' and not (RowKey eq 5)", "partition-scan ['p' .. 'p']"],
  ]);
});

describe('multi-range: merged, disjoint, ascending', () => {
  check([
    ["PartitionKey eq 'a' or PartitionKey eq 'b'", "multi-range ['a' .. 'a'] ['b' .. 'b']"],
    ["PartitionKey eq 'b' or PartitionKey eq 'a'", "multi-range ['a' .. 'a'] ['b' .. 'b']"],
    ["PartitionKey eq 'b' or PartitionKey eq 'a' or PartitionKey eq 'b'", "multi-range ['a' .. 'a'] ['b' .. 'b']"],
    [
      "(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'b' and RowKey eq '2')",
      "multi-range ['a','1' .. 'a','1'] ['b','2' .. 'b','2']",
    ],
    [
      "PartitionKey eq 'p' and (RowKey eq 'b' or RowKey eq 'a')",
      "multi-range ['p','a' .. 'p','a'] ['p','b' .. 'p','b']",
    ],
    ["PartitionKey lt 'b' or PartitionKey gt 'x'", "multi-range (-inf .. 'b') ('x' .. +inf)"],
    ["PartitionKey ne 'a'", "multi-range (-inf .. 'a') ('a' .. +inf)"],
    ["not (PartitionKey eq 'a')", "multi-range (-inf .. 'a') ('a' .. +inf)"],
    ["not (PartitionKey eq 'a' or Age gt 5)", "multi-range (-inf .. 'a') ('a' .. +inf)"],
    ["PartitionKey eq 'p' and RowKey ne 'r'", "multi-range ['p' .. 'p','r') ('p','r' .. 'p']"],
    ["PartitionKey eq 'a' or (PartitionKey eq 'b' and RowKey ge 'm')", "multi-range ['a' .. 'a'] ['b','m' .. 'b']"],
    [
      "PartitionKey eq 'a' or PartitionKey eq 'a ' or PartitionKey eq 'a\u0000'",
      "multi-range ['a' .. 'a'] ['a\u0000' .. 'a\u0000'] ['a ' .. 'a ']",
    ],
    ["PartitionKey eq '\uffff' or PartitionKey eq '😀'", "multi-range ['😀' .. '😀'] ['\uffff' .. '\uffff']"],
    [
      "(PartitionKey eq 'x' or PartitionKey eq 'a') and (RowKey eq '2' or RowKey eq '1')",
      "multi-range ['a','1' .. 'a','1'] ['a','2' .. 'a','2'] ['x','1' .. 'x','1'] ['x','2' .. 'x','2']",
    ],
  ]);
});

describe('table-scan: nothing bounds the keys', () => {
  check([
    ["RowKey eq 'r'", 'table-scan (-inf .. +inf)'],
    ["Timestamp ge datetime'2020-01-01T00:00:00Z'", 'table-scan (-inf .. +inf)'],
    ['Age gt 5', 'table-scan (-inf .. +inf)'],
    ['true', 'table-scan (-inf .. +inf)'],
    ['Flag', 'table-scan (-inf .. +inf)'],
    ['not Flag', 'table-scan (-inf .. +inf)'],
    ["PartitionKey eq 'a' or Age gt 5", 'table-scan (-inf .. +inf)'],
    ["PartitionKey eq 'a' or true", 'table-scan (-inf .. +inf)'],
    ["PartitionKey eq 'a' or RowKey eq 'b'", 'table-scan (-inf .. +inf)'],
    ["not (PartitionKey eq 'a' and RowKey eq 'b')", 'table-scan (-inf .. +inf)'],
    ["PartitionKey lt 'b' or PartitionKey ge 'b'", 'table-scan (-inf .. +inf)'],
    ["partitionkey eq 'a'", 'table-scan (-inf .. +inf)'],
    ['not (PartitionKey ne 5)', 'table-scan (-inf .. +inf)'],
  ]);

  test('no filter: one open range', () => {
    assert.deepEqual(compileEntityQuery(undefined).plan, { queryClass: 'table-scan', ranges: [{}] });
  });
});

describe('contradictions: zero ranges, class multi-range (a union of no ranges)', () => {
  check([
    ["PartitionKey eq 'a' and PartitionKey eq 'b'", 'multi-range (no ranges)'],
    ["PartitionKey eq 'a' and PartitionKey ne 'a'", 'multi-range (no ranges)'],
    ["PartitionKey eq 'a' and not (PartitionKey eq 'a')", 'multi-range (no ranges)'],
    ["PartitionKey gt 'b' and PartitionKey lt 'a'", 'multi-range (no ranges)'],
    ["PartitionKey gt 'a' and PartitionKey lt 'a'", 'multi-range (no ranges)'],
    ["PartitionKey gt 'a' and PartitionKey le 'a'", 'multi-range (no ranges)'],
    ["PartitionKey ge 'a' and PartitionKey lt 'a'", 'multi-range (no ranges)'],
    ["PartitionKey lt ''", 'multi-range (no ranges)'],
    ["RowKey lt ''", 'multi-range (no ranges)'],
    ["not (RowKey ge '')", 'multi-range (no ranges)'],
    ["PartitionKey eq 'p' and RowKey eq 'a' and RowKey eq 'b'", 'multi-range (no ranges)'],
    ['false', 'multi-range (no ranges)'],
    ['not true', 'multi-range (no ranges)'],
    ['Age gt 5 and false', 'multi-range (no ranges)'],
    ['PartitionKey eq 5', 'multi-range (no ranges)'],
    ["RowKey eq datetime'2020-01-01T00:00:00Z'", 'multi-range (no ranges)'],
    ['PartitionKey', 'multi-range (no ranges)'],
    ["(PartitionKey eq 'a' or PartitionKey eq 'b') and PartitionKey eq 'c'", 'multi-range (no ranges)'],
  ]);
});

describe('the box cap coarsens to a hull, still bounding the keys', () => {
  const group = (key: string, op: string, values: string[]): string =>
    `(${values.map((value) => `${key} ${op} '${value}'`).join(' or ')})`;

  test('five groups of three ors (243 boxes) stay a superset and still bound the partition keys', () => {
    const filter = [
      group('PartitionKey', 'ge', ['a', 'b', 'c']),
      group('RowKey', 'ge', ['1', '2', '3']),
      group('PartitionKey', 'le', ['x', 'y', 'z']),
      group('RowKey', 'le', ['7', '8', '9']),
      group('PartitionKey', 'ne', ['m', 'n', 'o']),
    ].join(' and ');
    assert.equal(plan(filter), "range ['a','1' .. 'z','9']");
  });
});

describe('clipRanges: resume at the first key not yet returned', () => {
  const point = (pk: string, rk: string): KeyRange => ({
    lower: { partitionKey: pk, rowKey: rk, inclusive: true },
    upper: { partitionKey: pk, rowKey: rk, inclusive: true },
  });
  const partition = (pk: string): KeyRange => ({
    lower: { partitionKey: pk, inclusive: true },
    upper: { partitionKey: pk, inclusive: true },
  });
  const resume = (partitionKey: string, rowKey?: string): KeyBound =>
    rowKey === undefined ? { partitionKey, inclusive: true } : { partitionKey, rowKey, inclusive: true };

  test('an open range starts at the resume point', () => {
    assert.deepEqual(clipRanges([{}], resume('p', 'r')), [{ lower: resume('p', 'r') }]);
    assert.deepEqual(clipRanges([{}], resume('p')), [{ lower: resume('p') }]);
  });

  test('ranges wholly before the resume point are dropped, later ones kept unchanged', () => {
    const ranges = [partition('a'), partition('b'), partition('c')];
    assert.deepEqual(clipRanges(ranges, resume('b', 'm')), [
      { lower: resume('b', 'm'), upper: { partitionKey: 'b', inclusive: true } },
      partition('c'),
    ]);
    assert.deepEqual(clipRanges(ranges, resume('bb')), [partition('c')]);
    assert.deepEqual(clipRanges(ranges, resume('d')), []);
    assert.deepEqual(clipRanges(ranges, resume('')), ranges);
    assert.deepEqual(clipRanges(ranges, resume('a')), ranges);
  });

  test('a resume point exactly at a point range keeps it (inclusive); one past drops it', () => {
    assert.deepEqual(clipRanges([point('p', 'r')], resume('p', 'r')), [point('p', 'r')]);
    assert.deepEqual(clipRanges([point('p', 'r')], resume('p', 'r\u0000')), []);
    assert.deepEqual(clipRanges([point('p', 'r')], resume('p', 'q')), [point('p', 'r')]);
    assert.deepEqual(clipRanges([point('p', 'r')], resume('p')), [point('p', 'r')]);
  });

  test('exclusive upper ends', () => {
    const range: KeyRange = { lower: resume('a'), upper: { partitionKey: 'b', inclusive: false } };
    assert.deepEqual(clipRanges([range], resume('b')), []);
    assert.deepEqual(clipRanges([range], resume('az', 'x')), [{ lower: resume('az', 'x'), upper: range.upper }]);
    const rowRange: KeyRange = { lower: resume('p', 'a'), upper: { partitionKey: 'p', rowKey: 'm', inclusive: false } };
    assert.deepEqual(clipRanges([rowRange], resume('p', 'm')), []);
    assert.deepEqual(clipRanges([rowRange], resume('p', 'l')), [{ lower: resume('p', 'l'), upper: rowRange.upper }]);
  });

  test('an exclusive lower bound later than the resume point stays', () => {
    const range: KeyRange = { lower: { partitionKey: 'p', rowKey: 'r', inclusive: false } };
    assert.deepEqual(clipRanges([range], resume('p', 'r')), [range]);
    assert.deepEqual(clipRanges([range], resume('p', 'r\u0000')), [{ lower: resume('p', 'r\u0000') }]);
  });
});

describe('intersectRanges: narrow to one limiting range (a SAS key range)', () => {
  const ranges = compileEntityQuery("PartitionKey eq 'a' or PartitionKey eq 'c' or PartitionKey gt 'x'").plan.ranges;

  test('an open limit keeps everything', () => {
    assert.deepEqual(intersectRanges(ranges, {}), ranges);
  });

  test('both ends cut, empty ranges dropped, order kept', () => {
    const limit: KeyRange = {
      lower: { partitionKey: 'a', rowKey: 'm', inclusive: true },
      upper: { partitionKey: 'c', rowKey: 'k', inclusive: false },
    };
    assert.deepEqual(intersectRanges(ranges, limit), [
      { lower: limit.lower, upper: { partitionKey: 'a', inclusive: true } },
      { lower: { partitionKey: 'c', inclusive: true }, upper: limit.upper },
    ]);
  });

  test('a limit between the ranges leaves nothing', () => {
    const limit: KeyRange = {
      lower: { partitionKey: 'd', inclusive: true },
      upper: { partitionKey: 'x', inclusive: true },
    };
    assert.deepEqual(intersectRanges(ranges, limit), []);
  });
});
