import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDateTimeTicks } from '../../src/domain/edm.js';
import type { EdmValue } from '../../src/domain/edm.js';
import { compileEntityQuery } from '../../src/table/query/index.js';
import { type Entity } from '../../src/domain/entity.js';

function ticks(text: string): bigint {
  const value = parseDateTimeTicks(text);
  assert.ok(value !== undefined, text);
  return value;
}

function entity(properties: Record<string, EdmValue>, keys: Partial<Entity> = {}): Entity {
  return {
    partitionKey: keys.partitionKey ?? 'P1',
    rowKey: keys.rowKey ?? "r'1",
    timestamp: keys.timestamp ?? ticks('2022-02-01T20:52:39.3170186Z'),
    properties: new Map(Object.entries(properties)),
  };
}

const subject = entity({
  s: { type: 'Edm.String', value: 'abc' },
  empty: { type: 'Edm.String', value: '' },
  ten: { type: 'Edm.String', value: '10' },
  emoji: { type: 'Edm.String', value: '😀' },
  i32: { type: 'Edm.Int32', value: 30 },
  i64: { type: 'Edm.Int64', value: 9007199254740993n },
  neg64: { type: 'Edm.Int64', value: -5n },
  max64: { type: 'Edm.Int64', value: 9223372036854775807n },
  dbl: { type: 'Edm.Double', value: 2.5 },
  whole: { type: 'Edm.Double', value: 2 },
  negzero: { type: 'Edm.Double', value: -0 },
  nan: { type: 'Edm.Double', value: NaN },
  inf: { type: 'Edm.Double', value: Infinity },
  ninf: { type: 'Edm.Double', value: -Infinity },
  flag: { type: 'Edm.Boolean', value: true },
  off: { type: 'Edm.Boolean', value: false },
  dt: { type: 'Edm.DateTime', value: ticks('2020-01-02T03:04:05.6789012Z') },
  g: { type: 'Edm.Guid', value: 'abcdef01-2345-6789-abcd-ef0123456789' },
  bin: { type: 'Edm.Binary', value: Buffer.from([1, 2, 3]) },
  emptyBin: { type: 'Edm.Binary', value: Buffer.alloc(0) },
});

function check(cases: ReadonlyArray<readonly [string, boolean]>): void {
  for (const [filter, expected] of cases) {
    test(`${filter} → ${expected}`, () => assert.equal(compileEntityQuery(filter).matches(subject), expected));
  }
}

describe('Edm.String: ordinal, case-sensitive, by UTF-16 code units', () => {
  check([
    ["s eq 'abc'", true],
    ["s eq 'ABC'", false],
    ["s ne 'ABC'", true],
    ["s ne 'abc'", false],
    ["s gt 'abb'", true],
    ["s gt 'abc'", false],
    ["s ge 'abc'", true],
    ["s lt 'abd'", true],
    ["s lt 'abcd'", true],
    ["s le 'ab'", false],
    ["s gt 'ABC'", true],
    ["'abd' gt s", true],
    ["empty eq ''", true],
    ["empty lt 'a'", true],
    ["empty ge ''", true],
    ["ten lt '2'", true],
    ["ten lt '9'", true],
    ["emoji lt '\uffff'", true],
    ["emoji gt '\ud7ff'", true],
  ]);
});

describe('Int32 / Int64 / Double: exact numeric comparison across the three types', () => {
  check([
    ['i32 eq 30', true],
    ['i32 eq 30L', true],
    ['i32 eq 30.0', true],
    ['i32 ne 31', true],
    ['i32 lt 30.5', true],
    ['i32 gt 29.999', true],
    ['i32 ge 30L', true],
    ['i32 gt 30L', false],
    ['i32 le -1', false],
    ['i64 eq 9007199254740993L', true],
    ['i64 eq 9007199254740992L', false],
    ['i64 gt 9007199254740992L', true],
    ['i64 eq 9007199254740992.0', false],
    ['i64 gt 9007199254740992.0', true],
    ['i64 lt 9007199254740994.0', true],
    ['i64 gt 2147483647', true],
    ['i64 lt 1e300', true],
    ['neg64 lt 0', true],
    ['neg64 eq -5', true],
    ['neg64 eq -5.0', true],
    ['neg64 gt -5.5', true],
    ['neg64 lt -4.5', true],
    ['neg64 ge -5.0', true],
    ['neg64 gt -5', false],
    ['max64 eq 9223372036854775807L', true],
    ['max64 eq 9223372036854775806L', false],
    ['max64 gt 9223372036854775806L', true],
    ['max64 eq 9223372036854775808.0', false],
    ['max64 lt 9223372036854775808.0', true],
    ['max64 lt 9.3e18', true],
    ['dbl eq 2.5', true],
    ['dbl eq 2.5d', true],
    ['dbl gt 2', true],
    ['dbl lt 3L', true],
    ['dbl gt 2L', true],
    ['dbl ne 2.5', false],
    ['whole eq 2', true],
    ['whole eq 2L', true],
    ['whole eq 2.0', true],
    ['negzero eq 0', true],
    ['negzero eq 0.0', true],
    ['negzero eq 0L', true],
    ['negzero lt 0', false],
  ]);
});

describe('Double NaN and infinities', () => {
  check([
    ['nan eq 1.0', false],
    ['nan ne 1.0', true],
    ['nan lt 1.0', false],
    ['nan gt 1.0', false],
    ['nan le 1', false],
    ['nan ge 1L', false],
    ['nan ne 1L', true],
    ['nan eq 0', false],
    ['not (nan eq 1.0)', true],
    ['not (nan lt 1.0)', true],
    ['inf gt 1.7976931348623157e308', true],
    ['inf gt 9223372036854775807L', true],
    ['inf eq 1e308', false],
    ['inf ge 2147483647', true],
    ['ninf lt -1e308', true],
    ['ninf lt -9223372036854775808L', true],
    ['ninf ne 0', true],
    ['ninf gt -2147483648', false],
  ]);
});

describe('Edm.Boolean: false < true', () => {
  check([
    ['flag eq true', true],
    ['flag ne false', true],
    ['flag eq false', false],
    ['flag', true],
    ['off', false],
    ['not off', true],
    ['off eq false', true],
    ['off lt true', true],
    ['flag gt false', true],
    ['flag le false', false],
    ['true eq flag', true],
  ]);
});

describe('Edm.DateTime: by instant, to the 100 ns tick', () => {
  check([
    ["dt eq datetime'2020-01-02T03:04:05.6789012Z'", true],
    ["dt eq datetime'2020-01-02T03:04:05.678901Z'", false],
    ["dt gt datetime'2020-01-02T03:04:05.678901Z'", true],
    ["dt lt datetime'2020-01-02T03:04:05.6789013Z'", true],
    ["dt le datetime'2020-01-02T03:04:05.6789011Z'", false],
    ["dt eq datetime'2020-01-02T05:04:05.6789012+02:00'", true],
    ["dt eq datetime'2020-01-02T03:04:05.67890129Z'", true],
    ["dt gt datetime'1601-01-01T00:00:00Z'", true],
    ["dt lt datetime'9999-12-31T23:59:59.9999999Z'", true],
    ["Timestamp eq datetime'2022-02-01T20:52:39.3170186Z'", true],
    ["Timestamp ge datetime'2022-02-01T20:52:39.317Z'", true],
    ["Timestamp lt datetime'2022-02-01T20:52:39.3170186Z'", false],
  ]);

  test('the recorded example: only the entity strictly before 19:00:00.000 matches', () => {
    const dates = ['2019-07-10T18:59:59.999Z', '2019-07-10T19:00:00.000Z', '2019-07-10T19:00:00.001Z'];
    const rows = dates.map((date, i) =>
      entity({ date: { type: 'Edm.DateTime', value: ticks(date) } }, { rowKey: String(i) }),
    );
    const { matches } = compileEntityQuery("date lt datetime'2019-07-10T19:00:00.000Z'");
    assert.deepEqual(
      rows.filter(matches).map((row) => row.rowKey),
      ['0'],
    );
  });
});

describe('Edm.Guid: the 128-bit value, literal case ignored; order by lower-case text (unverified)', () => {
  check([
    ["g eq guid'abcdef01-2345-6789-abcd-ef0123456789'", true],
    ["g eq guid'ABCDEF01-2345-6789-ABCD-EF0123456789'", true],
    ["g ne guid'abcdef01-2345-6789-abcd-ef0123456780'", true],
    ["g gt guid'00000000-0000-0000-0000-000000000000'", true],
    ["g lt guid'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'", true],
    ["g lt guid'abcdef01-2345-6789-abcd-ef0123456789'", false],
  ]);
});

describe('Edm.Binary: byte-wise, a prefix first (unverified)', () => {
  check([
    ["bin eq X'010203'", true],
    ["bin eq binary'010203'", true],
    ["bin ne X'0102'", true],
    ["bin gt X'0102'", true],
    ["bin lt X'01020300'", true],
    ["bin lt X'0104'", true],
    ["bin lt X'02'", true],
    ["bin gt X''", true],
    ["bin gt X'FF'", false],
    ["bin ge X'010203'", true],
    ["emptyBin eq X''", true],
    ["emptyBin lt X'00'", true],
  ]);
});

describe('keys: strings, case-sensitive', () => {
  check([
    ["PartitionKey eq 'P1'", true],
    ["PartitionKey eq 'p1'", false],
    ["PartitionKey ne 'p1'", true],
    ["RowKey eq 'r''1'", true],
    ["RowKey gt 'r'", true],
    ["PartitionKey eq 'P1' and RowKey eq 'r''1'", true],
    ["'P0' lt PartitionKey", true],
  ]);
});

describe('different EDM types never match, for every operator (recommendation)', () => {
  check([
    ['s eq 5', false],
    ['s ne 5', false],
    ['s eq true', false],
    ["i32 eq '30'", false],
    ["i32 ne '30'", false],
    ["i32 gt '0'", false],
    ['flag eq 1', false],
    ["flag ne 'true'", false],
    ["dt eq '2020-01-02T03:04:05.6789012Z'", false],
    ["dt ne 'x'", false],
    ['dt gt 0L', false],
    ["g eq 'abcdef01-2345-6789-abcd-ef0123456789'", false],
    ["g ne 'abcdef01-2345-6789-abcd-ef0123456789'", false],
    ["bin eq 'AQID'", false],
    ["bin ne X'01' and bin eq 'AQID'", false],
    ["s eq X'616263'", false],
    ["s eq guid'abcdef01-2345-6789-abcd-ef0123456789'", false],
    ["i32 eq datetime'2020-01-01T00:00:00Z'", false],
    ['PartitionKey eq 1', false],
    ['PartitionKey ne 1', false],
    ['RowKey lt 5L', false],
    ["Timestamp gt '2020-01-01'", false],
    ['Timestamp gt 0', false],
    ['PartitionKey', false],
    ['not (PartitionKey eq 1)', true],
    ["not (i32 eq '30')", true],
  ]);
});

describe('missing properties never match, not even ne; not inverts (two-valued, unverified)', () => {
  check([
    ['missing eq 1', false],
    ['missing ne 1', false],
    ["missing lt 'a'", false],
    ["missing ge ''", false],
    ['missing', false],
    ['not missing', true],
    ['not (missing eq 1)', true],
    ['not (missing ne 1)', true],
    ['S eq 1', false],
    ["S eq 'abc'", false],
    ["TableName eq 'x'", false],
  ]);
});

describe('logic: and, or, not, constants', () => {
  check([
    ['true', true],
    ['false', false],
    ['not false', true],
    ['true and false', false],
    ['false or true', true],
    ['not (true and false)', true],
    ["s eq 'abc' and i32 eq 30", true],
    ["s eq 'abc' and i32 eq 31", false],
    ["s eq 'x' or i32 eq 30", true],
    ["s eq 'x' or i32 eq 31", false],
    ["not (s eq 'x' or i32 eq 31)", true],
    ["(s eq 'abc' or missing eq 1) and not flag", false],
    ["s eq 'abc' and i32 eq 30 and flag and dbl gt 2 and not off", true],
    ['not not flag', true],
    ["s eq 'x' or s eq 'y' or s eq 'abc'", true],
    ["false or (true and not (s ne 'abc'))", true],
  ]);
});

test('Int64 compares as 64-bit integers, not as strings or doubles (Azurite#2385, #755)', () => {
  const rows = [9n, 10n, 11n, 12n, 100n, 9007199254740993n].map((value) =>
    entity({ PlayIndex: { type: 'Edm.Int64', value } }, { rowKey: String(value) }),
  );
  const select = (filter: string): string[] => rows.filter(compileEntityQuery(filter).matches).map((row) => row.rowKey);
  assert.deepEqual(select('PlayIndex ge 9L and PlayIndex lt 11L'), ['9', '10']);
  assert.deepEqual(select('PlayIndex ge 12 and PlayIndex lt 13'), ['12']);
  assert.deepEqual(select('PlayIndex gt 11 and PlayIndex le 100.0'), ['12', '100']);
  assert.deepEqual(select('PlayIndex gt 9007199254740992L'), ['9007199254740993']);
});

test('one compiled predicate serves many entities', () => {
  const { matches } = compileEntityQuery("PartitionKey eq 'a' and n ge 2");
  const rows = [1, 2, 3].flatMap((n) =>
    ['a', 'b'].map((partitionKey) => entity({ n: { type: 'Edm.Int32', value: n } }, { partitionKey, rowKey: `${n}` })),
  );
  assert.deepEqual(
    rows.filter(matches).map((row) => `${row.partitionKey}/${row.rowKey}`),
    ['a/2', 'a/3'],
  );
});
