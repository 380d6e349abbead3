// Wire details found by other clients, through raw HTTP and the JS SDK against a real server process:
// Doubles on the wire, malformed If-Match, If-Match with If-None-Match, and a $batch holding one
// query that is not a point read. Single requests and $batch parts must agree (one decoder).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TableClient } from '@azure/data-tables';
import {
  absoluteUrl,
  changesetBody,
  entityResource,
  op,
  postBatch,
  queryBody,
  readBatchResponse,
  partError,
} from '../../helpers/batch.js';
import { assertError, describeResponse, devPath, entityPath, send } from '../../helpers/http.js';
import { freshTable } from '../../helpers/sdk.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

describe('wire details of conditions and doubles', () => {
  let server: RunningServer;
  let client: TableClient;
  let etag: string;

  before(async () => {
    server = await startServer({ inMemory: true });
    client = await freshTable(server, 'wire');
    etag = (await client.createEntity({ partitionKey: 'p', rowKey: 'r', n: 1 })).etag!;
  });
  after(async () => {
    await server?.stop();
  });

  const entityUrl = (): string => entityPath(client.tableName, 'p', 'r');

  describe('Doubles (item 1, Azure REST: payload-format-for-table-service-operations)', () => {
    const doubles = {
      whole: { value: '100.0', type: 'Double' },
      big: { value: '1.23456789012346E+24', type: 'Double' },
      fraction: { value: '3.25', type: 'Double' },
      nan: { value: 'NaN', type: 'Double' },
      inf: { value: 'Infinity', type: 'Double' },
      ninf: { value: '-Infinity', type: 'Double' },
    } as const;

    before(async () => {
      await client.createEntity({ partitionKey: 'd', rowKey: '1', ...doubles });
    });

    for (const level of ['minimalmetadata', 'fullmetadata', 'nometadata'] as const) {
      test(`finite Doubles are unannotated JSON numbers with a point or exponent at ${level}; NaN and ±Infinity annotated strings`, async () => {
        const res = await send(server.port, {
          method: 'GET',
          path: entityPath(client.tableName, 'd', '1'),
          headers: { Accept: `application/json;odata=${level}` },
        });
        assert.equal(res.status, 200, describeResponse(res));
        assert.match(res.text, /"whole":100\.0[,}]/);
        assert.match(res.text, /"big":1\.23456789012346e\+24[,}]/);
        assert.match(res.text, /"fraction":3\.25[,}]/);
        // Every annotated value is a string: what the legacy Go SDK requires.
        for (const match of res.text.matchAll(/"([^"]+)@odata\.type":"Edm\.Double"/g)) {
          assert.match(
            res.text,
            new RegExp(`"${match[1]}":"`),
            `${match[1]} is annotated, so its value must be a string`,
          );
        }
        const body = res.json();
        for (const name of ['whole', 'big', 'fraction']) assert.equal(body[`${name}@odata.type`], undefined, name);
        assert.equal(body.nan, 'NaN');
        assert.equal(body.inf, 'Infinity');
        assert.equal(body.ninf, '-Infinity');
        if (level !== 'nometadata') assert.equal(body['nan@odata.type'], 'Edm.Double');
      });
    }

    test('a query page holding whole Doubles has no annotated number either', async () => {
      const res = await send(server.port, {
        method: 'GET',
        path: devPath(`${client.tableName}()?$filter=PartitionKey%20eq%20'd'`),
      });
      assert.equal(res.status, 200, describeResponse(res));
      assert.doesNotMatch(res.text, /"Edm\.Double","[^"]+":[-\d]/);
    });

    test('every EDM type round-trips exactly through the JS SDK', async () => {
      const bytes = Buffer.from([0, 1, 254, 255]);
      const entity = {
        partitionKey: 'rt',
        rowKey: '1',
        s: 'a😀',
        i32: 2147483647,
        i64: { value: '-9223372036854775808', type: 'Int64' as const },
        whole: { value: '2', type: 'Double' as const },
        frac: 0.1,
        nan: { value: 'NaN', type: 'Double' as const },
        b: true,
        dt: { value: '9999-12-31T23:59:59.9999999Z', type: 'DateTime' as const },
        g: { value: 'c9da6455-213d-42c9-9a79-3e9149a57833', type: 'Guid' as const },
        bin: bytes,
      };
      await client.createEntity(entity);
      const got = await client.getEntity<Record<string, unknown>>('rt', '1', { disableTypeConversion: true });
      assert.deepEqual(got['s'], { value: 'a😀', type: 'String' });
      assert.deepEqual(got['i32'], { value: '2147483647', type: 'Int32' });
      assert.deepEqual(got['i64'], { value: '-9223372036854775808', type: 'Int64' });
      assert.deepEqual(got['frac'], { value: '0.1', type: 'Double' });
      assert.deepEqual(got['nan'], { value: 'NaN', type: 'Double' });
      assert.deepEqual(got['b'], { value: 'true', type: 'Boolean' });
      assert.deepEqual(got['dt'], { value: '9999-12-31T23:59:59.9999999Z', type: 'DateTime' });
      assert.deepEqual(got['g'], { value: 'c9da6455-213d-42c9-9a79-3e9149a57833', type: 'Guid' });
      assert.deepEqual(got['bin'], { value: bytes.toString('base64'), type: 'Binary' });
      // A whole Double reads back as the number 2 in JS, as it does from the service.
      const typed = await client.getEntity<Record<string, unknown>>('rt', '1');
      assert.equal(typed['whole'], 2);
      // ...and it is still a Double in storage: a filter for the Double 2.0 finds it.
      const res = await send(server.port, {
        method: 'GET',
        path: devPath(`${client.tableName}()?$filter=${encodeURIComponent("PartitionKey eq 'rt' and whole eq 2.0")}`),
      });
      assert.equal(res.json().value.length, 1, describeResponse(res));
    });
  });

  // Entity tags this service never issued are stale, not malformed: tests/system/table/etag-weak.test.ts.
  describe('an If-Match that is no entity tag is 400 InvalidInput, a stale ETag 412', () => {
    const malformed = ['garbage', '0x8D1234', "datetime'2015-01-01T00%3A00%3A00Z'", '*, *', '"a", "b"'];

    for (const value of malformed) {
      for (const method of ['PUT', 'MERGE', 'DELETE']) {
        test(`${method} with If-Match ${value}: 400`, async () => {
          const res = await send(server.port, {
            method,
            path: entityUrl(),
            headers: { 'If-Match': value },
            body: method === 'DELETE' ? undefined : { n: 2 },
          });
          assertError(res, 400, 'InvalidInput');
        });
      }
      test(`$batch part with If-Match ${value}: part 400`, async () => {
        const url = absoluteUrl(server.port, entityResource(client.tableName, 'p', 'r'));
        const res = await postBatch(
          server.port,
          changesetBody([op.update(url, 'Merge', { PartitionKey: 'p', RowKey: 'r', n: 2 }, value)]),
        );
        const parts = readBatchResponse(res).parts;
        assert.equal(parts.length, 1);
        assert.equal(parts[0]!.status, 400);
        assert.equal(partError(parts[0]!).code, 'InvalidInput');
      });
    }

    test('a well-formed ETag that does not match: 412, single and in $batch', async () => {
      const stale = etag.replace(/\d(?=Z')/, (d) => String((Number(d) + 1) % 10 || 1));
      assert.notEqual(stale, etag);
      const single = await send(server.port, {
        method: 'MERGE',
        path: entityUrl(),
        headers: { 'If-Match': stale },
        body: { n: 2 },
      });
      assertError(single, 412, 'UpdateConditionNotSatisfied');
      const url = absoluteUrl(server.port, entityResource(client.tableName, 'p', 'r'));
      const res = await postBatch(
        server.port,
        changesetBody([op.update(url, 'Merge', { PartitionKey: 'p', RowKey: 'r', n: 2 }, stale)]),
      );
      assert.equal(readBatchResponse(res).parts[0]!.status, 412);
    });

    test('the current ETag still matches', async () => {
      const current = (await client.getEntity('p', 'r')).etag;
      const res = await send(server.port, {
        method: 'MERGE',
        path: entityUrl(),
        headers: { 'If-Match': current },
        body: { n: 3 },
      });
      assert.equal(res.status, 204, describeResponse(res));
    });
  });

  describe('If-Match with If-None-Match is 400 (item 3), in single requests and $batch parts alike', () => {
    for (const method of ['MERGE', 'PATCH']) {
      test(`${method} with both headers: 400 InvalidInput`, async () => {
        const res = await send(server.port, {
          method,
          path: entityUrl(),
          headers: { 'If-Match': '*', 'If-None-Match': '*' },
          body: { n: 4 },
        });
        assertError(res, 400, 'InvalidInput');
        assert.match(res.json()['odata.error'].message.value, /Both If-Match and If-None-Match/);
      });
    }

    test('a $batch MERGE part with both headers: part 400 with the same message', async () => {
      const url = absoluteUrl(server.port, entityResource(client.tableName, 'p', 'r'));
      const part = op.update(url, 'Merge', { PartitionKey: 'p', RowKey: 'r', n: 4 });
      const res = await postBatch(
        server.port,
        changesetBody([{ ...part, headers: { ...part.headers, 'If-None-Match': '*' } }]),
      );
      const [only] = readBatchResponse(res).parts;
      assert.equal(only!.status, 400);
      assert.match(partError(only!).message.value, /Both If-Match and If-None-Match/);
    });

    test('If-None-Match on a $batch PUT or DELETE part: 400, as for single requests', async () => {
      const url = absoluteUrl(server.port, entityResource(client.tableName, 'p', 'r'));
      for (const part of [op.upsert(url, 'Replace', { PartitionKey: 'p', RowKey: 'r' }), op.delete(url)]) {
        const res = await postBatch(
          server.port,
          changesetBody([{ ...part, headers: { ...part.headers, 'If-None-Match': '*' } }]),
        );
        const [only] = readBatchResponse(res).parts;
        assert.equal(only!.status, 400, `${part.method}`);
        assert.equal(partError(only!).code, 'InvalidInput');
      }
      const single = await send(server.port, {
        method: 'DELETE',
        path: entityUrl(),
        headers: { 'If-Match': '*', 'If-None-Match': '*' },
      });
      assertError(single, 400, 'InvalidInput');
    });
  });

  describe('a $batch holding one query that is not a point read (item 9)', () => {
    for (const resource of ['()', "()?$filter=PartitionKey%20eq%20'p'", '']) {
      test(`GET ${resource || 'the table'}: 202 with one part answering 400 InvalidInput, nothing 5xx`, async () => {
        const url = absoluteUrl(server.port, `${client.tableName}${resource}`);
        const res = await postBatch(server.port, queryBody(op.get(url)));
        assert.equal(res.status, 202, describeResponse(res));
        const [only] = readBatchResponse(res).parts;
        assert.equal(only!.status, 400);
        assert.equal(partError(only!).code, 'InvalidInput');
      });
    }

    test('a point read still answers 200 with the entity', async () => {
      const url = absoluteUrl(server.port, entityResource(client.tableName, 'p', 'r'));
      const res = await postBatch(server.port, queryBody(op.get(url)));
      const [only] = readBatchResponse(res).parts;
      assert.equal(only!.status, 200);
    });
  });
});
