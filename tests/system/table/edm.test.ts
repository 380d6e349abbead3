// EDM values round-trip exactly (Azure REST: payload-format-for-table-service-operations, docs/protocol-notes.md),
// through the SDK and raw JSON,
// including bodies that arrive in pieces split inside multi-byte UTF-8 characters.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { describeResponse, devPath, entityPath, errorCode, send, type RawRequest } from '../../helpers/http.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import type { TableClient } from '@azure/data-tables';

const guid = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('EDM round trips', () => {
  let server: RunningServer;
  let client: TableClient;
  before(async () => {
    server = await startServer({ inMemory: true });
    client = tableClient(server, uniqueTableName('edm'));
    await client.createTable();
  });
  after(async () => {
    await server?.stop();
  });

  const insertRaw = (body: string | object, extra: Partial<RawRequest> = {}) =>
    send(server.port, {
      method: 'POST',
      path: devPath(client.tableName),
      body,
      headers: { Prefer: 'return-no-content' },
      ...extra,
    });
  const readRaw = (rk: string) => send(server.port, { method: 'GET', path: entityPath(client.tableName, 'p', rk) });

  describe('through the SDK', () => {
    const sent = {
      partitionKey: 'p',
      rowKey: 'sdk',
      i64max: { value: '9223372036854775807', type: 'Int64' as const },
      i64min: { value: '-9223372036854775808', type: 'Int64' as const },
      bigint: 1099511627776n,
      i32max: 2147483647,
      i32min: -2147483648,
      zero: 0,
      pi: 3.14,
      sci: 1.5e24,
      tiny: -1.25e-10,
      whole: 2,
      nan: { value: 'NaN', type: 'Double' as const },
      inf: { value: 'Infinity', type: 'Double' as const },
      ninf: { value: '-Infinity', type: 'Double' as const },
      date: new Date('2020-01-02T03:04:05.678Z'),
      id: { value: guid, type: 'Guid' as const },
      bytes: new Uint8Array([0, 1, 2, 127, 128, 253, 254, 255]),
      yes: true,
      no: false,
      emoji: 'a\u{1F600}b\u{1D11E}c \u00e9\u20ac',
    };
    before(async () => {
      await client.createEntity(sent);
    });

    test('typed view (disableTypeConversion) shows the stored EDM types', async () => {
      const got = await client.getEntity('p', 'sdk', { disableTypeConversion: true });
      const typed = got as unknown as Record<string, { value: unknown; type: string }>;
      assert.deepEqual(typed.i64max, { value: '9223372036854775807', type: 'Int64' });
      assert.deepEqual(typed.i64min, { value: '-9223372036854775808', type: 'Int64' });
      assert.deepEqual(typed.bigint, { value: '1099511627776', type: 'Int64' });
      assert.deepEqual(typed.date, { value: '2020-01-02T03:04:05.678Z', type: 'DateTime' });
      assert.deepEqual(typed.id, { value: guid, type: 'Guid' });
      assert.deepEqual(typed.bytes, { value: Buffer.from(sent.bytes).toString('base64'), type: 'Binary' });
      assert.deepEqual(typed.nan, { value: 'NaN', type: 'Double' });
      assert.deepEqual(typed.inf, { value: 'Infinity', type: 'Double' });
      assert.deepEqual(typed.ninf, { value: '-Infinity', type: 'Double' });
      assert.equal(typed.pi?.type, 'Double');
      assert.equal(typed.whole?.type, 'Int32', 'JS whole numbers are stored as Int32');
    });

    test('converted view equals what was sent', async () => {
      const got = (await client.getEntity('p', 'sdk')) as Record<string, unknown>;
      assert.equal(got.i64max, 9223372036854775807n);
      assert.equal(got.i64min, -9223372036854775808n);
      assert.equal(got.bigint, 1099511627776n);
      for (const name of ['i32max', 'i32min', 'zero', 'pi', 'sci', 'tiny', 'whole', 'yes', 'no', 'emoji'] as const) {
        assert.equal(got[name], sent[name], name);
      }
      assert.ok(got.date instanceof Date);
      assert.equal((got.date as Date).toISOString(), sent.date.toISOString());
      assert.deepEqual(new Uint8Array(got.bytes as Uint8Array), sent.bytes);
    });

    test('listEntities returns the same values as getEntity', async () => {
      const listed = [];
      for await (const e of client.listEntities({ queryOptions: { filter: `RowKey eq 'sdk'` } })) listed.push(e);
      assert.equal(listed.length, 1);
      const got = await client.getEntity('p', 'sdk');
      const comparable = (e: object) => ({ ...e, etag: undefined, 'odata.metadata': undefined });
      assert.deepEqual(comparable(listed[0]!), comparable(got));
    });
  });

  describe('through raw JSON', () => {
    const body =
      '{"PartitionKey":"p","RowKey":"raw",' +
      '"d":2.0,"i":2,"dInt@odata.type":"Edm.Double","dInt":1.0,' +
      '"big":"9223372036854775807","big@odata.type":"Edm.Int64",' +
      '"small":"-9223372036854775808","small@odata.type":"Edm.Int64",' +
      '"dt7":"2020-01-02T03:04:05.1234567Z","dt7@odata.type":"Edm.DateTime",' +
      '"dt6":"2020-01-02T03:04:05.123456Z","dt6@odata.type":"Edm.DateTime",' +
      '"dt3":"2020-01-02T03:04:05.678Z","dt3@odata.type":"Edm.DateTime",' +
      '"dtTrail":"2020-01-02T03:04:05.1000000Z","dtTrail@odata.type":"Edm.DateTime",' +
      '"dtWhole":"2020-01-02T03:04:05Z","dtWhole@odata.type":"Edm.DateTime",' +
      '"nan":"NaN","nan@odata.type":"Edm.Double",' +
      '"inf":"Infinity","inf@odata.type":"Edm.Double",' +
      '"ninf":"-Infinity","ninf@odata.type":"Edm.Double",' +
      '"sciStr":"1.5e+24","sciStr@odata.type":"Edm.Double",' +
      '"sci":1.5e+24,"max":1.7976931348623157e308,"denorm":5e-324,' +
      '"i32s":"5","i32s@odata.type":"Edm.Int32",' +
      '"bs":"true","bs@odata.type":"Edm.Boolean",' +
      '"i32max":2147483647,"i32min":-2147483648,' +
      `"g":"${guid}","g@odata.type":"Edm.Guid",` +
      '"bin":"AAEC/f7/","bin@odata.type":"Edm.Binary",' +
      '"emoji":"\u{1F600}x\\ud83d\\ude00"}';
    let text = '';
    let entity: Record<string, unknown> = {};
    before(async () => {
      const res = await insertRaw(body);
      assert.equal(res.status, 204, describeResponse(res));
      const got = await readRaw('raw');
      assert.equal(got.status, 200, describeResponse(got));
      text = got.text;
      entity = got.json();
    });

    test('"d":2.0 stays a Double: printed 2.0, unannotated, as the service does (Azure REST: payload-format-for-table-service-operations)', () => {
      assert.match(text, /"d":2\.0[,}]/);
      assert.equal(entity['d@odata.type'], undefined);
      assert.match(text, /"dInt":1\.0[,}]/);
      assert.equal(entity['dInt@odata.type'], undefined);
      assert.doesNotMatch(text, /"Edm\.Double","[^"]+":[-\d]/, 'no annotated Double is a JSON number');
    });

    test('"i":2 stays an Int32: printed 2, never annotated', () => {
      assert.match(text, /"i":2[,}]/);
      assert.equal(entity['i@odata.type'], undefined);
      assert.equal(entity['i32s'], 5);
      assert.equal(entity['i32s@odata.type'], undefined);
      assert.equal(entity.i32max, 2147483647);
      assert.equal(entity.i32min, -2147483648);
    });

    test('Int64 extremes come back as exact strings with Edm.Int64', () => {
      assert.equal(entity.big, '9223372036854775807');
      assert.equal(entity.small, '-9223372036854775808');
      assert.equal(entity['big@odata.type'], 'Edm.Int64');
    });

    test('DateTime keeps 100 ns, drops trailing zeros, always ends in Z', () => {
      assert.equal(entity.dt7, '2020-01-02T03:04:05.1234567Z');
      assert.equal(entity.dt6, '2020-01-02T03:04:05.123456Z');
      assert.equal(entity.dt3, '2020-01-02T03:04:05.678Z');
      assert.equal(entity.dtTrail, '2020-01-02T03:04:05.1Z');
      assert.equal(entity.dtWhole, '2020-01-02T03:04:05Z');
      assert.equal(entity['dt7@odata.type'], 'Edm.DateTime');
    });

    test('Timestamp has at most 7 fractional digits, no trailing zeros, and a Z', () => {
      assert.match(String(entity.Timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{0,6}[1-9])?Z$/);
    });

    test('NaN and ±Infinity come back as strings annotated Edm.Double', () => {
      assert.deepEqual(
        [
          entity.nan,
          entity.inf,
          entity.ninf,
          entity['nan@odata.type'],
          entity['inf@odata.type'],
          entity['ninf@odata.type'],
        ],
        ['NaN', 'Infinity', '-Infinity', 'Edm.Double', 'Edm.Double', 'Edm.Double'],
      );
    });

    test('finite Doubles keep their value (string-encoded and extreme ones too)', () => {
      assert.equal(entity.sciStr, 1.5e24);
      assert.equal(entity.sci, 1.5e24);
      assert.equal(entity.max, 1.7976931348623157e308);
      assert.equal(entity.denorm, 5e-324);
    });

    test('Boolean, Guid, Binary and non-BMP strings', () => {
      assert.equal(entity.bs, true);
      assert.equal(entity.g, guid);
      assert.equal(entity['g@odata.type'], 'Edm.Guid');
      assert.equal(entity.bin, 'AAEC/f7/');
      assert.equal(entity['bin@odata.type'], 'Edm.Binary');
      assert.equal(entity.emoji, '\u{1F600}x\u{1F600}');
    });

    test('values that do not convert to their declared type → 400 InvalidInput', async () => {
      const bad: Array<[string, string]> = [
        ['"v":"12a","v@odata.type":"Edm.Int64"', 'Int64 text'],
        ['"v":"9223372036854775808","v@odata.type":"Edm.Int64"', 'Int64 overflow'],
        ['"v":"2147483648","v@odata.type":"Edm.Int32"', 'Int32 overflow'],
        ['"v":"not-a-guid","v@odata.type":"Edm.Guid"', 'Guid text'],
        ['"v":"yesterday","v@odata.type":"Edm.DateTime"', 'DateTime text'],
        ['"v":"maybe","v@odata.type":"Edm.Boolean"', 'Boolean text'],
        ['"v":"abc","v@odata.type":"Edm.Double"', 'Double text'],
        ['"v":"1","v@odata.type":"Edm.Decimal"', 'unknown type'],
        ['"v":{"a":1}', 'object value'],
        ['"v":[1,2]', 'array value'],
      ];
      for (const [props, what] of bad) {
        const res = await insertRaw(`{"PartitionKey":"p","RowKey":"bad","x":1,${props}}`);
        assert.equal(res.status, 400, `${what}: ${describeResponse(res)}`);
        assert.equal(errorCode(res), 'InvalidInput', `${what}: ${describeResponse(res)}`);
      }
      const outOfRange = await insertRaw(
        '{"PartitionKey":"p","RowKey":"bad","v":"1600-12-31T23:59:59Z","v@odata.type":"Edm.DateTime"}',
      );
      assert.equal(outOfRange.status, 400, describeResponse(outOfRange));
      assert.equal((await readRaw('bad')).status, 404, 'nothing was stored');
    });
  });

  describe('bodies split inside multi-byte characters', () => {
    // 4,444 × (3 + 4 + 2 bytes) + 4 = 40,000 bytes of UTF-8, 17,780 UTF-16 code units.
    const big = '\u20ac\u{1F600}\u00e9'.repeat(4444) + 'abcd';

    function splitsInsideCharacters(bytes: Buffer, step: number): number {
      let inside = 0;
      for (let at = step; at < bytes.length; at += step) if ((bytes[at]! & 0xc0) === 0x80) inside++;
      return inside;
    }

    for (const [label, extra] of [
      ['with Content-Length', { chunkedEncoding: false }],
      ['with Transfer-Encoding: chunked', { chunkedEncoding: true }],
    ] as const) {
      test(`a 40,000-byte UTF-8 string sent in 1,021-byte pieces round-trips exactly (${label})`, async () => {
        assert.equal(Buffer.byteLength(big), 40_000);
        const rk = `big-${extra.chunkedEncoding ? 'chunked' : 'length'}`;
        const bodyBytes = Buffer.from(JSON.stringify({ PartitionKey: 'p', RowKey: rk, s: big }));
        assert.ok(splitsInsideCharacters(bodyBytes, 1021) > 10, 'the pieces must cut characters');
        const res = await insertRaw(bodyBytes, { chunkBytes: 1021, chunkDelayMs: 2, ...extra });
        assert.equal(res.status, 204, describeResponse(res));
        const got = await readRaw(rk);
        assert.equal(got.status, 200, describeResponse(got));
        assert.ok(got.json().s === big, 'string must round-trip byte for byte');
        assert.ok((await client.getEntity<{ s: string }>('p', rk)).s === big);
      });
    }

    test('a small body sent 5 bytes at a time round-trips exactly', async () => {
      const s = '\u{1F600}\u{1D11E}\u20ac\u00e9'.repeat(40);
      const bodyBytes = Buffer.from(JSON.stringify({ PartitionKey: 'p', RowKey: 'tiny-pieces', s }));
      const res = await insertRaw(bodyBytes, { chunkBytes: 5, chunkDelayMs: 1 });
      assert.equal(res.status, 204, describeResponse(res));
      assert.ok((await readRaw('tiny-pieces')).json().s === s);
    });
  });
});
