import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type EdmValue, parseDateTimeTicks } from '../../../src/domain/edm.js';
import {
  type EntityUrlContext,
  type MetadataLevel,
  encodeEntity,
  encodeEntityFeed,
  encodeTable,
  encodeTableFeed,
  entityPath,
  jsonContentType,
  negotiateMetadata,
} from '../../../src/table/wire/odata.js';
import { type Entity } from '../../../src/domain/entity.js';

function ticks(iso: string): bigint {
  const value = parseDateTimeTicks(iso);
  assert.ok(value !== undefined, iso);
  return value;
}

function entity(
  partitionKey: string,
  rowKey: string,
  timestamp: string,
  properties: Array<[string, EdmValue]> = [],
): Entity {
  return { partitionKey, rowKey, timestamp: ticks(timestamp), properties: new Map(properties) };
}

/** Joins a spec example written over several lines (whitespace between members only). */
const compact = (lines: string[]): string => lines.join('');

const fake: EntityUrlContext = {
  baseUrl: 'https://fakeaccountname.table.core.windows.net',
  account: 'fakeaccountname',
  table: 'tableClientTestnode',
};

describe('negotiateMetadata', () => {
  const cases: Array<[string | undefined, string | undefined, MetadataLevel]> = [
    [undefined, undefined, 'minimal'],
    [undefined, 'application/json;odata=nometadata', 'none'],
    [undefined, 'application/json;odata=minimalmetadata', 'minimal'],
    [undefined, 'application/json;odata=fullmetadata', 'full'],
    [undefined, 'Application/JSON ; OData = FullMetadata', 'full'],
    [undefined, 'application/json', 'minimal'],
    [undefined, '*/*', 'minimal'],
    [undefined, '*/*;odata=nometadata', 'none'],
    [undefined, 'application/xml', 'minimal'],
    [undefined, 'application/json;odata=verbose', 'minimal'],
    [undefined, 'application/json;odata=__proto__', 'minimal'],
    [undefined, 'application/xml, application/json;odata=fullmetadata', 'full'],
    [undefined, 'text/plain;odata=fullmetadata', 'minimal'],
    [undefined, '', 'minimal'],
    ['application/json;odata=fullmetadata', 'application/json;odata=nometadata', 'full'],
    ['application/json;odata=nometadata', undefined, 'none'],
    ['application/json', 'application/json;odata=fullmetadata', 'minimal'],
    ['json', 'application/json;odata=nometadata', 'minimal'],
    ['', 'application/json;odata=nometadata', 'none'],
  ];
  for (const [format, accept, expected] of cases) {
    test(`$format ${JSON.stringify(format)}, Accept ${JSON.stringify(accept)} → ${expected}`, () => {
      assert.equal(negotiateMetadata(format, accept), expected);
    });
  }
});

test('jsonContentType', () => {
  assert.equal(jsonContentType('minimal'), 'application/json; odata=minimalmetadata; streaming=true; charset=utf-8');
  assert.equal(jsonContentType('full'), 'application/json; odata=fullmetadata; streaming=true; charset=utf-8');
  assert.equal(jsonContentType('none'), 'application/json; odata=nometadata; streaming=true; charset=utf-8');
});

describe('entityPath (Azure REST: addressing-table-service-resources)', () => {
  test('doubles quotes, then percent-encodes like encodeURIComponent (recorded example)', () => {
    assert.equal(
      entityPath('SpecialChars', 'A\'aaa_bbbb2"', '"A\'aaa_bbbb2'),
      "SpecialChars(PartitionKey='A''aaa_bbbb2%22',RowKey='%22A''aaa_bbbb2')",
    );
    assert.equal(entityPath('t', 'p', 'r/ x'), "t(PartitionKey='p',RowKey='r%2F%20x')");
    assert.equal(entityPath('t', '', ''), "t(PartitionKey='',RowKey='')");
    assert.equal(entityPath('t', '😀', 'é'), "t(PartitionKey='%F0%9F%98%80',RowKey='%C3%A9')");
  });

  test('never throws, even on a lone surrogate', () => {
    assert.equal(entityPath('t', '\ud800', 'r'), "t(PartitionKey='%EF%BF%BD',RowKey='r')");
  });
});

describe('encodeEntity: recorded responses, byte for byte', () => {
  const int64Entity = entity('P4_node', 'R4', '2022-02-01T20:52:39.3170186Z', [
    ['testField', { type: 'Edm.Int64', value: 12345543221n }],
  ]);

  test('Azure REST: query-entities minimal point read (Int64)', () => {
    assert.equal(
      encodeEntity(int64Entity, 'minimal', fake, { single: true }),
      compact([
        '{"odata.metadata":"https://fakeaccountname.table.core.windows.net/$metadata#tableClientTestnode/@Element",',
        '"odata.etag":"W/\\"datetime\'2022-02-01T20%3A52%3A39.3170186Z\'\\"",',
        '"PartitionKey":"P4_node","RowKey":"R4","Timestamp":"2022-02-01T20:52:39.3170186Z",',
        '"testField@odata.type":"Edm.Int64","testField":"12345543221"}',
      ]),
    );
  });

  test('Azure REST: query-entities nometadata point read', () => {
    assert.equal(
      encodeEntity(int64Entity, 'none', fake, { single: true }),
      '{"PartitionKey":"P4_node","RowKey":"R4","Timestamp":"2022-02-01T20:52:39.3170186Z","testField":"12345543221"}',
    );
  });

  test('Azure REST: query-entities minimal point read with $select=baz,PartitionKey,RowKey', () => {
    const selected = entity('P2_node', 'R1', '2022-02-01T20:52:38.6563898Z', [
      ['foo', { type: 'Edm.String', value: 'not selected' }],
      ['baz', { type: 'Edm.Boolean', value: true }],
    ]);
    assert.equal(
      encodeEntity(selected, 'minimal', fake, { single: true, select: ['baz', 'PartitionKey', 'RowKey'] }),
      compact([
        '{"odata.metadata":"https://fakeaccountname.table.core.windows.net/$metadata#tableClientTestnode/@Element&$select=baz,PartitionKey,RowKey",',
        '"odata.etag":"W/\\"datetime\'2022-02-01T20%3A52%3A38.6563898Z\'\\"",',
        '"PartitionKey":"P2_node","RowKey":"R1","baz":true}',
      ]),
    );
  });

  test('Azure REST: query-entities minimal query (DateTime with 3 fractional digits)', () => {
    const dated = entity('p1', 'r1', '2022-08-30T21:15:33.9474727Z', [
      ['date', { type: 'Edm.DateTime', value: ticks('2019-07-10T18:59:59.999Z') }],
    ]);
    const text = encodeEntityFeed('minimal', fake, [encodeEntity(dated, 'minimal', fake)]);
    assert.equal(
      text,
      compact([
        '{"odata.metadata":"https://fakeaccountname.table.core.windows.net/$metadata#tableClientTestnode",',
        '"value":[{"odata.etag":"W/\\"datetime\'2022-08-30T21%3A15%3A33.9474727Z\'\\"",',
        '"PartitionKey":"p1","RowKey":"r1","Timestamp":"2022-08-30T21:15:33.9474727Z",',
        '"date@odata.type":"Edm.DateTime","date":"2019-07-10T18:59:59.999Z"}]}',
      ]),
    );
  });

  test('Azure REST: query-entities full query (.NET recording)', () => {
    const ctx = {
      baseUrl: 'https://chrissprim.table.core.windows.net',
      account: 'chrissprim',
      table: 'testtable733016501',
    };
    const stored = entity('somPartition', '1', '2020-04-30T22:03:14.9591322Z', [
      ['SomeStringProperty', { type: 'Edm.String', value: 'This is the original' }],
    ]);
    assert.equal(
      encodeEntityFeed('full', ctx, [encodeEntity(stored, 'full', ctx)]),
      compact([
        '{"odata.metadata":"https://chrissprim.table.core.windows.net/$metadata#testtable733016501",',
        '"value":[{"odata.type":"chrissprim.testtable733016501",',
        '"odata.id":"https://chrissprim.table.core.windows.net/testtable733016501(PartitionKey=\'somPartition\',RowKey=\'1\')",',
        '"odata.etag":"W/\\"datetime\'2020-04-30T22%3A03%3A14.9591322Z\'\\"",',
        '"odata.editLink":"testtable733016501(PartitionKey=\'somPartition\',RowKey=\'1\')",',
        '"PartitionKey":"somPartition","RowKey":"1",',
        '"Timestamp@odata.type":"Edm.DateTime","Timestamp":"2020-04-30T22:03:14.9591322Z",',
        '"SomeStringProperty":"This is the original"}]}',
      ]),
    );
  });

  const customer = entity('mypartitionkey', 'myrowkey', '2013-08-22T01:12:06.2608595Z', [
    ['Address', { type: 'Edm.String', value: 'Mountain View' }],
    ['Age', { type: 'Edm.Int32', value: 23 }],
    ['AmountDue', { type: 'Edm.Double', value: 200.23 }],
    ['CustomerCode', { type: 'Edm.Guid', value: 'c9da6455-213d-42c9-9a79-3e9149a57833' }],
    ['CustomerSince', { type: 'Edm.DateTime', value: ticks('2008-07-10T00:00:00Z') }],
    ['IsActive', { type: 'Edm.Boolean', value: true }],
    ['NumberOfOrders', { type: 'Edm.Int64', value: 255n }],
  ]);
  const customers = { baseUrl: 'https://myaccount.table.core.windows.net', account: 'myaccount', table: 'Customers' };

  test('Azure REST: insert-entity minimal insert echo', () => {
    assert.equal(
      encodeEntity(customer, 'minimal', customers, { single: true }),
      compact([
        '{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Customers/@Element",',
        '"odata.etag":"W/\\"datetime\'2013-08-22T01%3A12%3A06.2608595Z\'\\"",',
        '"PartitionKey":"mypartitionkey","RowKey":"myrowkey",',
        '"Timestamp":"2013-08-22T01:12:06.2608595Z",',
        '"Address":"Mountain View","Age":23,"AmountDue":200.23,',
        '"CustomerCode@odata.type":"Edm.Guid","CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833",',
        '"CustomerSince@odata.type":"Edm.DateTime","CustomerSince":"2008-07-10T00:00:00Z",',
        '"IsActive":true,',
        '"NumberOfOrders@odata.type":"Edm.Int64","NumberOfOrders":"255"}',
      ]),
    );
  });

  test('Azure REST: insert-entity full insert echo (the documented members; Int32 stays unannotated)', () => {
    const text = encodeEntity(customer, 'full', customers, { single: true });
    const prefix = compact([
      '{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Customers/@Element",',
      '"odata.type":"myaccount.Customers",',
      '"odata.id":"https://myaccount.table.core.windows.net/Customers(PartitionKey=\'mypartitionkey\',RowKey=\'myrowkey\')",',
      '"odata.etag":"W/\\"datetime\'2013-08-22T01%3A12%3A06.2608595Z\'\\"",',
      '"odata.editLink":"Customers(PartitionKey=\'mypartitionkey\',RowKey=\'myrowkey\')",',
      '"PartitionKey":"mypartitionkey","RowKey":"myrowkey",',
      '"Timestamp@odata.type":"Edm.DateTime","Timestamp":"2013-08-22T01:12:06.2608595Z",',
      '"Address":"Mountain View","Age":23,',
    ]);
    assert.ok(text.startsWith(prefix), text);
  });

  test('Azure REST: insert-entity nometadata insert echo', () => {
    assert.equal(
      encodeEntity(customer, 'none', customers, { single: true }),
      compact([
        '{"PartitionKey":"mypartitionkey","RowKey":"myrowkey","Timestamp":"2013-08-22T01:12:06.2608595Z",',
        '"Address":"Mountain View","Age":23,"AmountDue":200.23,',
        '"CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833","CustomerSince":"2008-07-10T00:00:00Z",',
        '"IsActive":true,"NumberOfOrders":"255"}',
      ]),
    );
  });

  test('Azure REST: query-entities nometadata query', () => {
    const stored = entity('Customer', 'Name', '2013-08-22T00:20:16.3134645Z', [
      ['CustomerSince', { type: 'Edm.DateTime', value: ticks('2008-10-01T15:25:05.2852025Z') }],
    ]);
    assert.equal(
      encodeEntityFeed('none', customers, [encodeEntity(stored, 'none', customers)]),
      compact([
        '{"value":[{"PartitionKey":"Customer","RowKey":"Name","Timestamp":"2013-08-22T00:20:16.3134645Z",',
        '"CustomerSince":"2008-10-01T15:25:05.2852025Z"}]}',
      ]),
    );
  });
});

describe('encodeEntity: values', () => {
  const ctx = { baseUrl: 'http://127.0.0.1:10002/devstoreaccount1', account: 'devstoreaccount1', table: 't' };
  const encodeOne = (value: EdmValue, level: MetadataLevel = 'minimal'): string => {
    const text = encodeEntity(entity('p', 'r', '2020-01-01T00:00:00Z', [['x', value]]), level, ctx);
    const start = text.indexOf('"Timestamp":"2020-01-01T00:00:00Z",') + '"Timestamp":"2020-01-01T00:00:00Z",'.length;
    return text.slice(start, -1);
  };

  test('doubles: every finite value an unannotated JSON number with a point or exponent; NaN and ±Infinity annotated strings (Azure REST: payload-format-for-table-service-operations)', () => {
    assert.equal(encodeOne({ type: 'Edm.Double', value: 3.14 }), '"x":3.14');
    assert.equal(encodeOne({ type: 'Edm.Double', value: 1.23456789012346e24 }), '"x":1.23456789012346e+24');
    assert.equal(encodeOne({ type: 'Edm.Double', value: 123 }), '"x":123.0');
    assert.equal(encodeOne({ type: 'Edm.Double', value: -0 }), '"x":-0.0');
    assert.equal(encodeOne({ type: 'Edm.Double', value: NaN }), '"x@odata.type":"Edm.Double","x":"NaN"');
    assert.equal(encodeOne({ type: 'Edm.Double', value: Infinity }), '"x@odata.type":"Edm.Double","x":"Infinity"');
    assert.equal(encodeOne({ type: 'Edm.Double', value: -Infinity }), '"x@odata.type":"Edm.Double","x":"-Infinity"');
    assert.equal(encodeOne({ type: 'Edm.Double', value: 123 }, 'none'), '"x":123.0');
    assert.equal(encodeOne({ type: 'Edm.Double', value: NaN }, 'none'), '"x":"NaN"');
  });

  test('other types at each level', () => {
    const date = { type: 'Edm.DateTime', value: ticks('2020-09-17T00:00:00.99999Z') } as const;
    const cases: Array<[EdmValue, string, string]> = [
      [{ type: 'Edm.String', value: 'a"\\\n😀\ud800' }, '"x":"a\\"\\\\\\n😀\\ud800"', '"x":"a\\"\\\\\\n😀\\ud800"'],
      [{ type: 'Edm.Int32', value: -5 }, '"x":-5', '"x":-5'],
      [{ type: 'Edm.Boolean', value: false }, '"x":false', '"x":false'],
      [
        { type: 'Edm.Int64', value: -(2n ** 63n) },
        '"x@odata.type":"Edm.Int64","x":"-9223372036854775808"',
        '"x":"-9223372036854775808"',
      ],
      [date, '"x@odata.type":"Edm.DateTime","x":"2020-09-17T00:00:00.99999Z"', '"x":"2020-09-17T00:00:00.99999Z"'],
      [
        { type: 'Edm.Guid', value: 'c9da6455-213d-42c9-9a79-3e9149a57833' },
        '"x@odata.type":"Edm.Guid","x":"c9da6455-213d-42c9-9a79-3e9149a57833"',
        '"x":"c9da6455-213d-42c9-9a79-3e9149a57833"',
      ],
      [{ type: 'Edm.Binary', value: Buffer.from([1, 2]) }, '"x@odata.type":"Edm.Binary","x":"AQI="', '"x":"AQI="'],
      [{ type: 'Edm.Binary', value: Buffer.alloc(0) }, '"x@odata.type":"Edm.Binary","x":""', '"x":""'],
    ];
    for (const [value, minimal, none] of cases) {
      assert.equal(encodeOne(value), minimal);
      assert.equal(encodeOne(value, 'full'), minimal, 'full metadata annotates like minimal');
      assert.equal(encodeOne(value, 'none'), none);
    }
  });

  test('output is valid JSON at every level', () => {
    const stored = entity('p', 'r', '2020-01-01T00:00:00Z', [['s', { type: 'Edm.String', value: '\u2028\ud800' }]]);
    for (const level of ['none', 'minimal', 'full'] as const) {
      for (const single of [false, true]) {
        assert.doesNotThrow(() => JSON.parse(encodeEntity(stored, level, ctx, { single })));
      }
    }
  });
});

describe('encodeEntity: $select (Azure REST: querying-tables-and-entities)', () => {
  const ctx = { baseUrl: 'http://127.0.0.1:10002/devstoreaccount1', account: 'devstoreaccount1', table: 't' };
  const stored = entity('p', 'r', '2020-01-01T00:00:00.5Z', [
    ['a', { type: 'Edm.Int64', value: 1n }],
    ['b', { type: 'Edm.String', value: 'B' }],
  ]);

  test('exactly the listed properties in list order; missing ones as null; odata.etag kept', () => {
    assert.equal(
      encodeEntity(stored, 'minimal', ctx, { select: ['b', 'missing', 'a', 'b'] }),
      '{"odata.etag":"W/\\"datetime\'2020-01-01T00%3A00%3A00.5Z\'\\"","b":"B","missing":null,"a@odata.type":"Edm.Int64","a":"1"}',
    );
  });

  test('system properties only when selected, always in their fixed place', () => {
    assert.equal(
      encodeEntity(stored, 'none', ctx, { select: ['a', 'Timestamp', 'RowKey'] }),
      '{"RowKey":"r","Timestamp":"2020-01-01T00:00:00.5Z","a":"1"}',
    );
    assert.equal(
      encodeEntity(stored, 'full', ctx, { select: ['Timestamp'] }),
      compact([
        '{"odata.type":"devstoreaccount1.t",',
        '"odata.id":"http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey=\'p\',RowKey=\'r\')",',
        '"odata.etag":"W/\\"datetime\'2020-01-01T00%3A00%3A00.5Z\'\\"",',
        '"odata.editLink":"t(PartitionKey=\'p\',RowKey=\'r\')",',
        '"Timestamp@odata.type":"Edm.DateTime","Timestamp":"2020-01-01T00:00:00.5Z"}',
      ]),
    );
  });
});

describe('tables (Azure REST: query-tables, create-table)', () => {
  const base = 'https://myaccount.table.core.windows.net';

  test('Query Tables feed at each level', () => {
    assert.equal(
      encodeTableFeed(['ListTableTestnode1'], 'minimal', base, 'myaccount'),
      '{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Tables","value":[{"TableName":"ListTableTestnode1"}]}',
    );
    assert.equal(
      encodeTableFeed(['mytable'], 'full', base, 'myaccount'),
      compact([
        '{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Tables",',
        '"value":[{"odata.type":"myaccount.Tables",',
        '"odata.id":"https://myaccount.table.core.windows.net/Tables(\'mytable\')",',
        '"odata.editLink":"Tables(\'mytable\')",',
        '"TableName":"mytable"}]}',
      ]),
    );
    assert.equal(encodeTableFeed(['mytable'], 'none', base, 'myaccount'), '{"value":[{"TableName":"mytable"}]}');
    assert.equal(
      encodeTableFeed([], 'minimal', base, 'myaccount'),
      '{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Tables","value":[]}',
    );
    assert.equal(
      encodeTableFeed(['a1b', 'B2c'], 'none', base, 'myaccount'),
      '{"value":[{"TableName":"a1b"},{"TableName":"B2c"}]}',
    );
  });

  test('Create Table response at each level', () => {
    assert.equal(
      encodeTable('SpecialChars', 'minimal', 'https://fakeaccountname.table.core.windows.net', 'fakeaccountname', true),
      '{"odata.metadata":"https://fakeaccountname.table.core.windows.net/$metadata#Tables/@Element","TableName":"SpecialChars"}',
    );
    assert.equal(
      encodeTable('testtable733016501', 'full', 'https://chrissprim.table.core.windows.net', 'chrissprim', true),
      compact([
        '{"odata.metadata":"https://chrissprim.table.core.windows.net/$metadata#Tables/@Element",',
        '"odata.type":"chrissprim.Tables",',
        '"odata.id":"https://chrissprim.table.core.windows.net/Tables(\'testtable733016501\')",',
        '"odata.editLink":"Tables(\'testtable733016501\')",',
        '"TableName":"testtable733016501"}',
      ]),
    );
    assert.equal(encodeTable('mytable', 'none', base, 'myaccount', true), '{"TableName":"mytable"}');
  });
});
