import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../../src/errors.js';
import {
  binaryValueBytesMax,
  customPropertiesMax,
  entityBytesMax,
  keyLengthUtf16Max,
  propertyNameLengthUtf16Max,
  stringValueLengthUtf16Max,
} from '../../../src/limits.js';
import { type EdmValue, dateTimeTicksMax, dateTimeTicksMin, int64Max, int64Min } from '../../../src/domain/edm.js';
import { decodeEntityBody } from '../../../src/table/wire/entity-json.js';
import { encodeEntity } from '../../../src/table/wire/odata.js';
import { entitySizeBytes, type Entity, type Properties, validateKey } from '../../../src/domain/entity.js';
import { scaled } from '../../helpers/scale.js';

function assertStorageError(fn: () => unknown, code: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof StorageError, `expected a StorageError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

function body(members: Record<string, unknown>): string {
  return JSON.stringify({ PartitionKey: 'p', RowKey: 'r', ...members });
}

/** The one decoded property of a body holding `members`. */
function decodeOne(membersJson: string): EdmValue | undefined {
  const { properties } = decodeEntityBody(`{"PartitionKey":"p","RowKey":"r",${membersJson}}`);
  assert.ok(properties.size <= 1);
  return properties.get('x');
}

const ticksOf = (iso: string): bigint => BigInt(Date.parse(iso)) * 10_000n;

describe('decodeEntityBody: keys', () => {
  test('reads keys and leaves absent or null keys undefined', () => {
    assert.deepEqual(decodeEntityBody('{"PartitionKey":"a","RowKey":""}'), {
      partitionKey: 'a',
      rowKey: '',
      properties: new Map(),
    });
    assert.deepEqual(decodeEntityBody('{}'), { partitionKey: undefined, rowKey: undefined, properties: new Map() });
    const nulls = decodeEntityBody('{"PartitionKey":null,"RowKey":null}');
    assert.equal(nulls.partitionKey, undefined);
    assert.equal(nulls.rowKey, undefined);
  });

  test('accepts Edm.String annotations on keys (Python) and rejects other types', () => {
    const decoded = decodeEntityBody(
      '{"PartitionKey":"p","PartitionKey@odata.type":"Edm.String","RowKey":"r","RowKey@odata.type":"Edm.String"}',
    );
    assert.equal(decoded.partitionKey, 'p');
    assert.equal(decoded.rowKey, 'r');
    assertStorageError(
      () => decodeEntityBody('{"PartitionKey":"1","PartitionKey@odata.type":"Edm.Int32"}'),
      'InvalidInput',
    );
  });

  test('non-string keys are InvalidInput', () => {
    for (const value of ['1', 'true', '{}', '[]']) {
      assertStorageError(() => decodeEntityBody(`{"PartitionKey":${value},"RowKey":"r"}`), 'InvalidInput');
      assertStorageError(() => decodeEntityBody(`{"PartitionKey":"p","RowKey":${value}}`), 'InvalidInput');
    }
  });

  test(`key length: ${keyLengthUtf16Max} code units pass, one more fails`, () => {
    const longest = 'k'.repeat(keyLengthUtf16Max);
    assert.equal(decodeEntityBody(JSON.stringify({ PartitionKey: longest, RowKey: longest })).rowKey, longest);
    assertStorageError(
      () => decodeEntityBody(JSON.stringify({ PartitionKey: `${longest}k`, RowKey: 'r' })),
      'KeyValueTooLarge',
    );
    assertStorageError(
      () => decodeEntityBody(JSON.stringify({ PartitionKey: 'p', RowKey: `${longest}k` })),
      'KeyValueTooLarge',
    );
  });

  test('forbidden key characters → OutOfRangeInput; quotes, C1 neighbours and astral characters are fine', () => {
    for (const bad of [
      '/',
      '\\',
      '#',
      '?',
      '\u0000',
      '\t',
      '\n',
      '\r',
      '\u001f',
      '\u007f',
      '\u0085',
      '\u009f',
      '\ud800',
      'a\udc00',
    ]) {
      assertStorageError(() => validateKey(`a${bad}b`, 'PartitionKey'), 'OutOfRangeInput');
      assertStorageError(() => decodeEntityBody(JSON.stringify({ PartitionKey: 'p', RowKey: bad })), 'OutOfRangeInput');
    }
    for (const good of ['A\'b"c', '\u0020', '\u007e', '\u00a0', '😀', 'é', '', '%2F', '(x)', 'a=b,c']) {
      assert.doesNotThrow(() => validateKey(good, 'RowKey'));
    }
  });
});

describe('decodeEntityBody: type inference and annotations', () => {
  test('unannotated values take their type from the JSON form', () => {
    const { properties } = decodeEntityBody(
      body({ s: 'text', i: 42, neg: -7, d: 3.25, t: true, f: false }).replace(
        '}',
        ',"whole":2.0,"exp":1e3,"negZero":-0}',
      ),
    );
    assert.deepEqual(
      [...properties],
      [
        ['s', { type: 'Edm.String', value: 'text' }],
        ['i', { type: 'Edm.Int32', value: 42 }],
        ['neg', { type: 'Edm.Int32', value: -7 }],
        ['d', { type: 'Edm.Double', value: 3.25 }],
        ['t', { type: 'Edm.Boolean', value: true }],
        ['f', { type: 'Edm.Boolean', value: false }],
        ['whole', { type: 'Edm.Double', value: 2 }],
        ['exp', { type: 'Edm.Double', value: 1000 }],
        ['negZero', { type: 'Edm.Int32', value: 0 }],
      ],
    );
  });

  test('Int32 range, unannotated: the edges pass, one step past fails', () => {
    assert.deepEqual(decodeOne('"x":2147483647'), { type: 'Edm.Int32', value: 2147483647 });
    assert.deepEqual(decodeOne('"x":-2147483648'), { type: 'Edm.Int32', value: -2147483648 });
    assertStorageError(() => decodeOne('"x":2147483648'), 'InvalidInput');
    assertStorageError(() => decodeOne('"x":-2147483649'), 'InvalidInput');
    assertStorageError(() => decodeOne('"x":3000000000'), 'InvalidInput');
  });

  test('annotated values in natural and string form (docs/protocol-notes.md#annotated-values-as-strings)', () => {
    const cases: Array<[string, EdmValue]> = [
      ['"x":"5","x@odata.type":"Edm.Int32"', { type: 'Edm.Int32', value: 5 }],
      ['"x@odata.type":"Edm.Int32","x":-5', { type: 'Edm.Int32', value: -5 }],
      ['"x":"true","x@odata.type":"Edm.Boolean"', { type: 'Edm.Boolean', value: true }],
      ['"x":false,"x@odata.type":"Edm.Boolean"', { type: 'Edm.Boolean', value: false }],
      ['"x":"NaN","x@odata.type":"Edm.Double"', { type: 'Edm.Double', value: NaN }],
      ['"x":"Infinity","x@odata.type":"Edm.Double"', { type: 'Edm.Double', value: Infinity }],
      ['"x":"-Infinity","x@odata.type":"Edm.Double"', { type: 'Edm.Double', value: -Infinity }],
      ['"x":"1.23456789012346e+24","x@odata.type":"Edm.Double"', { type: 'Edm.Double', value: 1.23456789012346e24 }],
      ['"x":1.0,"x@odata.type":"Edm.Double"', { type: 'Edm.Double', value: 1 }],
      ['"x":7,"x@odata.type":"Edm.Double"', { type: 'Edm.Double', value: 7 }],
      ['"x":-0.0,"x@odata.type":"Edm.Double"', { type: 'Edm.Double', value: -0 }],
      ['"x":"1099511627776","x@odata.type":"Edm.Int64"', { type: 'Edm.Int64', value: 1099511627776n }],
      ['"x":9007199254740993,"x@odata.type":"Edm.Int64"', { type: 'Edm.Int64', value: 9007199254740993n }],
      ['"x":"9223372036854775807","x@odata.type":"Edm.Int64"', { type: 'Edm.Int64', value: int64Max }],
      ['"x":"-9223372036854775808","x@odata.type":"Edm.Int64"', { type: 'Edm.Int64', value: int64Min }],
      ['"x":"text","x@odata.type":"Edm.String"', { type: 'Edm.String', value: 'text' }],
      [
        '"x":"2020-01-02T03:04:05.678Z","x@odata.type":"Edm.DateTime"',
        { type: 'Edm.DateTime', value: ticksOf('2020-01-02T03:04:05.678Z') },
      ],
      [
        '"x":"2020-01-02T03:04:05.678901Z","x@odata.type":"Edm.DateTime"',
        { type: 'Edm.DateTime', value: ticksOf('2020-01-02T03:04:05.678Z') + 9010n },
      ],
      [
        '"x":"2013-08-02T17:37:43.9004348Z","x@odata.type":"Edm.DateTime"',
        { type: 'Edm.DateTime', value: ticksOf('2013-08-02T17:37:43.900Z') + 4348n },
      ],
      [
        '"x":"2008-07-10T00:00:00","x@odata.type":"Edm.DateTime"',
        { type: 'Edm.DateTime', value: ticksOf('2008-07-10T00:00:00Z') },
      ],
      ['"x":"1601-01-01T00:00:00Z","x@odata.type":"Edm.DateTime"', { type: 'Edm.DateTime', value: dateTimeTicksMin }],
      [
        '"x":"9999-12-31T23:59:59.9999999Z","x@odata.type":"Edm.DateTime"',
        { type: 'Edm.DateTime', value: dateTimeTicksMax },
      ],
      [
        '"x":"C9DA6455-213D-42C9-9A79-3E9149A57833","x@odata.type":"Edm.Guid"',
        { type: 'Edm.Guid', value: 'c9da6455-213d-42c9-9a79-3e9149a57833' },
      ],
      ['"x":"QmFy","x@odata.type":"Edm.Binary"', { type: 'Edm.Binary', value: Buffer.from('Bar') }],
      ['"x":"AQI=","x@odata.type":"Edm.Binary"', { type: 'Edm.Binary', value: Buffer.from([1, 2]) }],
      ['"x":"","x@odata.type":"Edm.Binary"', { type: 'Edm.Binary', value: Buffer.alloc(0) }],
    ];
    for (const [members, expected] of cases) assert.deepEqual(decodeOne(members), expected, members);
  });

  test('values that do not fit their annotation → InvalidInput', () => {
    const cases = [
      '"x":"5.0","x@odata.type":"Edm.Int32"',
      '"x":5.5,"x@odata.type":"Edm.Int32"',
      '"x":"2147483648","x@odata.type":"Edm.Int32"',
      '"x":true,"x@odata.type":"Edm.Int32"',
      '"x":"9223372036854775808","x@odata.type":"Edm.Int64"',
      '"x":"-9223372036854775809","x@odata.type":"Edm.Int64"',
      '"x":"12a","x@odata.type":"Edm.Int64"',
      '"x":1e3,"x@odata.type":"Edm.Int64"',
      '"x":"yes","x@odata.type":"Edm.Boolean"',
      '"x":1,"x@odata.type":"Edm.Boolean"',
      '"x":"abc","x@odata.type":"Edm.Double"',
      '"x":1e400,"x@odata.type":"Edm.Double"',
      '"x":5,"x@odata.type":"Edm.String"',
      '"x":"2020-13-01T00:00:00Z","x@odata.type":"Edm.DateTime"',
      '"x":"2021-02-29T00:00:00Z","x@odata.type":"Edm.DateTime"',
      '"x":"1600-12-31T23:59:59.9999999Z","x@odata.type":"Edm.DateTime"',
      '"x":"10000-01-01T00:00:00Z","x@odata.type":"Edm.DateTime"',
      '"x":1577836800000,"x@odata.type":"Edm.DateTime"',
      '"x":"not-a-guid","x@odata.type":"Edm.Guid"',
      '"x":"c9da6455213d42c99a793e9149a57833","x@odata.type":"Edm.Guid"',
      '"x":"QmFy!","x@odata.type":"Edm.Binary"',
      '"x":"QmF","x@odata.type":"Edm.Binary"',
    ];
    for (const members of cases) assertStorageError(() => decodeOne(members), 'InvalidInput');
    assertStorageError(() => decodeOne('"x":1e400'), 'InvalidInput');
  });

  test('unknown types, non-string annotations and annotations without a value → InvalidInput', () => {
    assertStorageError(() => decodeOne('"x":"1.5","x@odata.type":"Edm.Decimal"'), 'InvalidInput');
    assertStorageError(() => decodeOne('"x":1.5,"x@odata.type":"Edm.Single"'), 'InvalidInput');
    assertStorageError(() => decodeOne('"x":1,"x@odata.type":5'), 'InvalidInput');
    assertStorageError(() => decodeOne('"x":1,"x@odata.type":null'), 'InvalidInput');
    assertStorageError(() => decodeOne('"x@odata.type":"Edm.Int64"'), 'InvalidInput');
  });

  test('object and array values → InvalidInput; a body that is not an object → InvalidInput', () => {
    assertStorageError(() => decodeOne('"x":{"a":1}'), 'InvalidInput');
    assertStorageError(() => decodeOne('"x":[1]'), 'InvalidInput');
    for (const text of ['[]', '"x"', '1', 'null', '', '{"PartitionKey":"p",', '{"a":1}x']) {
      assertStorageError(() => decodeEntityBody(text), 'InvalidInput');
    }
  });

  test('null values are not stored, even when annotated', () => {
    assert.equal(decodeOne('"x":null'), undefined);
    assert.equal(decodeOne('"x":null,"x@odata.type":"Edm.Int64"'), undefined);
  });

  test('odata.* members and Timestamp are ignored (docs/protocol-notes.md#control-members-in-request-bodies)', () => {
    const decoded = decodeEntityBody(
      '{"odata.metadata":"m","odata.type":"a.t","odata.id":"i","odata.etag":"W/\\"x\\"","odata.editLink":"e",' +
        '"PartitionKey":"p","RowKey":"r","Timestamp@odata.type":"Edm.DateTime","Timestamp":"whatever","x":1}',
    );
    assert.deepEqual([...decoded.properties], [['x', { type: 'Edm.Int32', value: 1 }]]);
  });
});

describe('decodeEntityBody: duplicates', () => {
  test('the same member twice → DuplicatePropertiesSpecified', () => {
    for (const members of [
      '"a":1,"a":2',
      '"a":null,"a":1',
      '"a":null,"a":null',
      '"a":"1","a@odata.type":"Edm.Int64","a@odata.type":"Edm.Int64"',
    ]) {
      assertStorageError(
        () => decodeEntityBody(`{"PartitionKey":"p","RowKey":"r",${members}}`),
        'DuplicatePropertiesSpecified',
      );
    }
    assertStorageError(
      () => decodeEntityBody('{"PartitionKey":"p","PartitionKey":"q","RowKey":"r"}'),
      'DuplicatePropertiesSpecified',
    );
    assertStorageError(() => decodeEntityBody('{"a":1,"a":2}'), 'DuplicatePropertiesSpecified');
  });

  test('names differing only in case are different properties', () => {
    const { properties } = decodeEntityBody(body({ Name: 'a', name: 'b', NAME: 'c' }));
    assert.deepEqual([...properties.keys()], ['Name', 'name', 'NAME']);
  });
});

describe('decodeEntityBody: property names', () => {
  test(`name length: ${propertyNameLengthUtf16Max} passes, one more → PropertyNameTooLong`, () => {
    const longest = 'n'.repeat(propertyNameLengthUtf16Max);
    assert.ok(decodeEntityBody(body({ [longest]: 1 })).properties.has(longest));
    assertStorageError(() => decodeEntityBody(body({ [`${longest}n`]: 1 })), 'PropertyNameTooLong');
  });

  test('C#-identifier-like names pass, others → PropertyNameInvalid', () => {
    for (const good of ['a', '_', '_x1', 'camelCase', 'été', '名前', 'Ωmega2', 'x٣', 'नमस्ते']) {
      assert.ok(decodeEntityBody(body({ [good]: 1 })).properties.has(good), good);
    }
    for (const bad of ['', '1a', 'a-b', 'a b', 'a.b', 'a@b', '@odata', 'a$', '😀', 'a\u0000', 'a\ud800', '\u200bx']) {
      assertStorageError(() => decodeEntityBody(body({ [bad]: 1 })), 'PropertyNameInvalid');
    }
    // Only the `odata.` prefix marks a control member; a plain `odata` is an ordinary name.
    assert.ok(decodeEntityBody(body({ odata: 1 })).properties.has('odata'));
  });
});

describe('decodeEntityBody: limits', () => {
  const manyProperties = (count: number, extra: Record<string, unknown> = {}): string => {
    const members: Record<string, unknown> = { ...extra };
    for (let i = 0; i < count; i++) members[`p${i}`] = i;
    return body(members);
  };

  test(`${customPropertiesMax} custom properties pass, one more → TooManyProperties`, () => {
    assert.equal(decodeEntityBody(manyProperties(customPropertiesMax)).properties.size, customPropertiesMax);
    assertStorageError(() => decodeEntityBody(manyProperties(customPropertiesMax + 1)), 'TooManyProperties');
  });

  test('null properties, ignored members and keys do not count', () => {
    const extra = { n1: null, n2: null, 'odata.etag': 'x', Timestamp: 'y' };
    assert.equal(decodeEntityBody(manyProperties(customPropertiesMax, extra)).properties.size, customPropertiesMax);
  });

  test(`strings: ${stringValueLengthUtf16Max} code units pass, one more → PropertyValueTooLarge`, () => {
    const longest = 'é'.repeat(stringValueLengthUtf16Max - 2) + '😀';
    assert.equal(longest.length, stringValueLengthUtf16Max);
    assert.deepEqual(decodeEntityBody(body({ x: longest })).properties.get('x'), {
      type: 'Edm.String',
      value: longest,
    });
    assertStorageError(() => decodeEntityBody(body({ x: `${longest}a` })), 'PropertyValueTooLarge');
  });

  test(`binaries: ${binaryValueBytesMax} bytes pass, one more → PropertyValueTooLarge`, () => {
    const binary = (length: number): string =>
      body({ x: Buffer.alloc(length, 7).toString('base64'), 'x@odata.type': 'Edm.Binary' });
    const decoded = decodeEntityBody(binary(binaryValueBytesMax)).properties.get('x');
    assert.equal(decoded?.type === 'Edm.Binary' && decoded.value.length, binaryValueBytesMax);
    assertStorageError(() => decodeEntityBody(binary(binaryValueBytesMax + 1)), 'PropertyValueTooLarge');
  });

  test(`entity size: exactly ${entityBytesMax} bytes passes, one more → EntityTooLarge`, () => {
    // 15 maximal strings under 2-character names, then one string `b` filling the rest exactly.
    const members: Record<string, unknown> = {};
    for (let i = 10; i < 25; i++) members[`a${i}`] = 's'.repeat(stringValueLengthUtf16Max);
    const fixed = 4 + 2 * 2 + 15 * (8 + 2 * 3 + 2 * stringValueLengthUtf16Max + 4); // keys 'p' and 'r': 2 × 2
    const fillLength = (entityBytesMax - fixed - (8 + 2 + 4)) / 2;
    assert.ok(Number.isInteger(fillLength) && fillLength <= stringValueLengthUtf16Max);
    const exact = { ...members, b: 's'.repeat(fillLength) };
    const decoded = decodeEntityBody(body(exact));
    assert.equal(entitySizeBytes('p', 'r', decoded.properties), entityBytesMax);
    // Strings add even byte counts; a Boolean `c` (8 + 2 + 1 = 11 bytes) against 5 fewer characters adds 1.
    const over = { ...members, b: 's'.repeat(fillLength - 5), c: true };
    assertStorageError(() => decodeEntityBody(body(over)), 'EntityTooLarge');
  });

  test('entitySizeBytes follows the accounting of Azure REST: understanding-the-table-service-data-model', () => {
    const properties: Properties = new Map<string, EdmValue>([
      ['s', { type: 'Edm.String', value: 'abc' }], // 8 + 2 + 10
      ['b', { type: 'Edm.Binary', value: Buffer.alloc(5) }], // 8 + 2 + 9
      ['g', { type: 'Edm.Guid', value: '00000000-0000-0000-0000-000000000000' }], // 8 + 2 + 16
      ['dt', { type: 'Edm.DateTime', value: 0n }], // 8 + 4 + 8
      ['d', { type: 'Edm.Double', value: 1.5 }], // 8 + 2 + 8
      ['i', { type: 'Edm.Int32', value: 1 }], // 8 + 2 + 4
      ['l', { type: 'Edm.Int64', value: 1n }], // 8 + 2 + 8
      ['t', { type: 'Edm.Boolean', value: true }], // 8 + 2 + 1
    ]);
    assert.equal(entitySizeBytes('pk', 'rowk', properties), 4 + 12 + 20 + 19 + 26 + 20 + 18 + 14 + 18 + 11);
  });
});

describe('round trip: decode(encode(entity)) is the entity', () => {
  const ctx = { baseUrl: 'http://127.0.0.1:10002/devstoreaccount1', account: 'devstoreaccount1', table: 't' };
  const values: Array<[string, EdmValue]> = [
    ['str', { type: 'Edm.String', value: 'plain' }],
    ['strEmpty', { type: 'Edm.String', value: '' }],
    ['strAstral', { type: 'Edm.String', value: '😀𝄞 and \u2028\u2029 "quoted" \\ \n' }],
    ['strLoneSurrogate', { type: 'Edm.String', value: 'a\ud800b\udfff' }],
    ['strLooksTyped', { type: 'Edm.String', value: '12345' }],
    ['i32Max', { type: 'Edm.Int32', value: 2147483647 }],
    ['i32Min', { type: 'Edm.Int32', value: -2147483648 }],
    ['i32Zero', { type: 'Edm.Int32', value: 0 }],
    ['i64Max', { type: 'Edm.Int64', value: int64Max }],
    ['i64Min', { type: 'Edm.Int64', value: int64Min }],
    ['i64Small', { type: 'Edm.Int64', value: 5n }],
    ['dblFraction', { type: 'Edm.Double', value: 0.1 }],
    ['dblWhole', { type: 'Edm.Double', value: 2 }],
    ['dblZero', { type: 'Edm.Double', value: 0 }],
    ['dblNegZero', { type: 'Edm.Double', value: -0 }],
    ['dblNaN', { type: 'Edm.Double', value: NaN }],
    ['dblInf', { type: 'Edm.Double', value: Infinity }],
    ['dblNegInf', { type: 'Edm.Double', value: -Infinity }],
    ['dblBig', { type: 'Edm.Double', value: 1.5e24 }],
    ['dblHuge', { type: 'Edm.Double', value: Number.MAX_VALUE }],
    ['dblTiny', { type: 'Edm.Double', value: 5e-324 }],
    ['dbl1e20', { type: 'Edm.Double', value: 1e20 }],
    ['boolTrue', { type: 'Edm.Boolean', value: true }],
    ['boolFalse', { type: 'Edm.Boolean', value: false }],
    ['dtMin', { type: 'Edm.DateTime', value: dateTimeTicksMin }],
    ['dtMax', { type: 'Edm.DateTime', value: dateTimeTicksMax }],
    ['dtEpoch', { type: 'Edm.DateTime', value: 0n }],
    ['dt100ns', { type: 'Edm.DateTime', value: ticksOf('2022-02-01T20:52:39.317Z') + 1n }],
    ['dtBefore1970', { type: 'Edm.DateTime', value: ticksOf('1969-12-31T23:59:59.999Z') + 9999n }],
    ['guid', { type: 'Edm.Guid', value: 'c9da6455-213d-42c9-9a79-3e9149a57833' }],
    ['binEmpty', { type: 'Edm.Binary', value: Buffer.alloc(0) }],
    ['binAll', { type: 'Edm.Binary', value: Buffer.from(Array.from({ length: 256 }, (_, i) => i)) }],
  ];
  const entity: Entity = {
    partitionKey: 'p\'😀"',
    rowKey: '',
    timestamp: ticksOf('2022-02-01T20:52:39.317Z') + 186n,
    properties: new Map(values),
  };

  for (const level of ['minimal', 'full'] as const) {
    test(`every type and edge at ${level} metadata`, () => {
      for (const single of [false, true]) {
        const decoded = decodeEntityBody(encodeEntity(entity, level, ctx, { single }));
        assert.equal(decoded.partitionKey, entity.partitionKey);
        assert.equal(decoded.rowKey, entity.rowKey);
        assert.deepEqual(decoded.properties, entity.properties);
      }
    });
  }

  test('random entities (seeded)', () => {
    const seed = 7;
    let state = seed;
    const next = (): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const randomValue = (): EdmValue => {
      const n = next();
      switch (Math.floor(next() * 8)) {
        case 0:
          return {
            type: 'Edm.String',
            value: String.fromCharCode(...Array.from({ length: n * 20 }, () => Math.floor(next() * 0x10000))),
          };
        case 1:
          return { type: 'Edm.Int32', value: Math.floor(n * 2 ** 32) - 2 ** 31 };
        case 2:
          return {
            type: 'Edm.Int64',
            value: BigInt(Math.floor(n * 2 ** 52)) * BigInt(Math.floor(next() * 4096)) - 2n ** 63n,
          };
        case 3:
          return { type: 'Edm.Double', value: (n - 0.5) * 10 ** Math.floor(next() * 600 - 300) };
        case 4:
          return { type: 'Edm.Boolean', value: n < 0.5 };
        case 5:
          return { type: 'Edm.DateTime', value: dateTimeTicksMin + BigInt(Math.floor(n * 2 ** 53)) * 256n };
        case 6:
          return { type: 'Edm.Guid', value: '0123abcd-0000-4000-8000-00000000000' + Math.floor(n * 10) };
        default:
          return {
            type: 'Edm.Binary',
            value: Buffer.from(Array.from({ length: n * 30 }, () => Math.floor(next() * 256))),
          };
      }
    };
    for (let i = 0; i < scaled(300); i++) {
      const properties: Properties = new Map();
      for (let j = 0; j < 10; j++) properties.set(`p${j}`, randomValue());
      const randomEntity: Entity = { partitionKey: `pk${i}`, rowKey: `rk${i}`, timestamp: 0n, properties };
      const text = encodeEntity(randomEntity, 'minimal', ctx);
      assert.deepEqual(decodeEntityBody(text).properties, properties, `seed ${seed}, case ${i}: ${text}`);
    }
  });
});
